/**
 * The tunnel keys Secret is decoded with an io-ts codec: a corrupt entry is skipped with a problem
 * naming the field (the binding gets a new key), never a TypeError, and never quoting the token.
 */
import { expect } from 'chai';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { SecretTunnelKeys, decodeKeyEntry } from '../../src/operator/secret-tunnel-keys.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('tunnel keys Secret entries', () => {
  it('decodes an entry with binding id, key id and token', () => {
    expect(decodeKeyEntry(JSON.stringify({ bindingId: 'binding/host/a', keyId: 'k1', token: 'tuna_tk_x' }))).to.deep.equal({
      ok: true,
      value: { bindingId: 'binding/host/a', keyId: 'k1', token: 'tuna_tk_x' },
    });
  });

  it('decodes the edge’s binding id of a dedicated address', () => {
    const entry = { bindingId: 'binding/address/shop/gw', keyId: 'k1', token: 'tuna_tk_x', edgeBindingId: 'binding/address/127.77.0.1' };
    expect(decodeKeyEntry(JSON.stringify(entry))).to.deep.equal({ ok: true, value: entry });
  });

  const cases: [string, string, string[]][] = [
    ['text that is not JSON', '{"bindingId": "b", "token": "tuna_tk_secret', ['expected JSON text']],
    ['a missing token', JSON.stringify({ bindingId: 'b', keyId: 'k' }), ['token: required']],
    ['a key id that is a number', JSON.stringify({ bindingId: 'b', keyId: 7, token: 't' }), ['keyId: expected a string']],
    ['a list', '[]', ['expected an object']],
  ];
  for (const [what, text, errors] of cases) {
    it(`refuses ${what}, naming the field`, () => {
      expect(decodeKeyEntry(text)).to.deep.equal({ ok: false, errors });
    });
  }

  describe('load', () => {
    let server: Server;

    afterEach(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('keeps the good entries and reports each corrupt one without its text', async () => {
      const secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'tuna-tunnel-keys', namespace: 'tuna-system', resourceVersion: '3' },
        data: { aaa: b64(JSON.stringify({ bindingId: 'binding/host/a', keyId: 'k1', token: 'tuna_tk_good' })), bbb: b64('{"bindingId":"binding/host/b","token":"tuna_tk_leak') },
      };
      server = createServer((req, res) => {
        if (req.url?.split('?')[0] === '/api/v1/namespaces/tuna-system/secrets/tuna-tunnel-keys') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(secret));
        else res.writeHead(404).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const config = new KubeConfig();
      config.loadFromOptions({
        clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
        users: [{ name: 'u' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const heard: string[] = [];
      const keys = new SecretTunnelKeys(config, 'tuna-system', 'tuna-tunnel-keys', (p) => heard.push(p));
      await keys.load();
      expect(keys.bindings()).to.deep.equal(['binding/host/a']);
      expect(keys.get('binding/host/a')).to.deep.equal({ keyId: 'k1', token: 'tuna_tk_good' });
      expect(keys.problems).to.deep.equal(['Secret tuna-system/tuna-tunnel-keys entry bbb is skipped: expected JSON text']);
      expect(heard).to.deep.equal(keys.problems);
      expect(heard.join()).to.not.include('tuna_tk_leak');
    });
  });
});
