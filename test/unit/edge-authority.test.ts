import { expect } from 'chai';
import { StaticTunnelAuthority, hashTunnelKey } from '../../src/edge/tunnels/authority.js';
import type { KeyRecord } from '../../src/edge/tunnels/authority.js';

const info = (bindingId: string) => ({ bindingId, remoteAddress: '127.0.0.1', connectionId: 'c1' });

describe('edge tunnel authority (config keys)', () => {
  const records: KeyRecord[] = [
    { id: 'k-a', bindingId: 'binding/host/a.test', sha256: Buffer.from(hashTunnelKey('key-a'), 'hex'), maxConnections: 3 },
    { id: 'k-b', bindingId: 'binding/host/b.test', sha256: Buffer.from(hashTunnelKey('key-b'), 'hex') },
    { id: 'k-old', bindingId: 'binding/host/a.test', sha256: Buffer.from(hashTunnelKey('key-old'), 'hex'), expiresAt: 1000 },
  ];
  const authority = new StaticTunnelAuthority(records, () => 2000);

  const cases: { title: string; key: string; binding: string; want: unknown }[] = [
    { title: 'grants a key for its own binding', key: 'key-a', binding: 'binding/host/a.test', want: { ok: true, bindingId: 'binding/host/a.test', keyId: 'k-a', maxConnections: 3 } },
    { title: 'refuses a key for another binding with 403', key: 'key-a', binding: 'binding/host/b.test', want: { ok: false, status: 403, reason: 'wrong-binding' } },
    { title: 'refuses an unknown key with the same 403', key: 'key-x', binding: 'binding/host/a.test', want: { ok: false, status: 403, reason: 'unknown-key' } },
    { title: 'refuses an expired key with 403', key: 'key-old', binding: 'binding/host/a.test', want: { ok: false, status: 403, reason: 'expired' } },
    { title: 'refuses an empty key with 401', key: '', binding: 'binding/host/a.test', want: { ok: false, status: 401, reason: 'malformed' } },
  ];
  for (const c of cases) {
    it(c.title, async () => {
      expect(await authority.authorize(c.key, info(c.binding))).to.deep.equal(c.want);
    });
  }

  it('stores keys as SHA-256 hex digests', () => {
    expect(hashTunnelKey('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
