import { expect } from 'chai';
import type { Account, Reservation, Store } from '../../src/edge/store/index.js';
import { FakeClock, STORE_BACKENDS } from '../support/postgres.js';

/** Contract: tunnel keys — mint, authenticate, expire, rotate, revoke, list — behave the same on every backend. */
for (const backend of STORE_BACKENDS) {
  describe(`store contract: tunnel keys (${backend.name})`, function () {
    this.timeout(120_000);
    const HOUR = 3_600_000;
    let store: Store;
    let clock: FakeClock;
    let account: Account;
    let host: Reservation;

    const mint = (labels: Record<string, string> = {}, reservation = host) =>
      store.mintTunnelKey(
        { accountId: account.id, reservationId: reservation.id, protocol: 'https', maxConnections: 3, expiresAt: clock.now() + HOUR, labels },
        'operator',
      );

    beforeEach(async () => {
      clock = new FakeClock();
      store = await backend.open(clock);
      account = await store.createAccount({ name: 'acme' }, 'test');
      const spec = { kind: 'domain', hostname: 'web.edge.test', domainType: 'subdomain' } as const;
      host = (await store.createReservation({ accountId: account.id, spec }, 'test')).reservation;
    });
    afterEach(async () => {
      await store.close();
    });

    it('mints a key bound to one reservation and protocol that authenticates by its token', async () => {
      const { record, token } = await mint({ cluster: 'c1' });
      expect(token).to.match(/^tuna_tk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
      expect(record).to.include({ reservationId: host.id, protocol: 'https', maxConnections: 3, revokedAt: null });
      expect(await store.authenticateTunnelKey(token)).to.deep.equal({ ok: true, key: record });
    });

    it('refuses a malformed token, an unknown id and a wrong secret with distinct reasons', async () => {
      const { token } = await mint();
      const wrong = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
      const unknown = `tuna_tk_${'0'.repeat(16)}_${token.slice(-43)}`;
      expect(await store.authenticateTunnelKey('Bearer nonsense')).to.deep.equal({ ok: false, reason: 'malformed' });
      expect(await store.authenticateTunnelKey(unknown)).to.deep.equal({ ok: false, reason: 'unknown' });
      expect(await store.authenticateTunnelKey(wrong)).to.deep.equal({ ok: false, reason: 'wrong-secret' });
    });

    it('refuses a protocol the reservation kind cannot carry with field protocol', async () => {
      const err = await store
        .mintTunnelKey({ accountId: account.id, reservationId: host.id, protocol: 'tcp', maxConnections: 1, expiresAt: clock.now() + HOUR }, 'test')
        .catch((e: unknown) => e);
      expect(err).to.include({ code: 'TUNA_STORE_INVALID', field: 'protocol' });
    });

    it('mints tcp and udp keys for a port reservation and an address, and refuses udp for a domain', async () => {
      const { reservation: port } = await store.createReservation({ accountId: account.id, spec: { kind: 'tcp-port', port: 20053 } }, 'test');
      const base = { accountId: account.id, maxConnections: 1, expiresAt: clock.now() + HOUR };
      const udp = await store.mintTunnelKey({ ...base, reservationId: port.id, protocol: 'udp' }, 'test');
      const tcp = await store.mintTunnelKey({ ...base, reservationId: port.id, protocol: 'tcp' }, 'test');
      expect(udp.record.protocol).to.equal('udp');
      expect((await store.authenticateTunnelKey(udp.token)).ok).to.equal(true);
      expect(tcp.record.protocol).to.equal('tcp');
      const { reservation: address } = await store.createReservation({ accountId: account.id, spec: { kind: 'address', address: '127.77.0.9' } }, 'test');
      expect((await store.mintTunnelKey({ ...base, reservationId: address.id, protocol: 'udp' }, 'test')).record.protocol).to.equal('udp');
      const err = await store.mintTunnelKey({ ...base, reservationId: host.id, protocol: 'udp' }, 'test').catch((e: unknown) => e);
      expect(err).to.include({ code: 'TUNA_STORE_INVALID', field: 'protocol' });
    });

    it('refuses a zero connection cap and an expiry in the past', async () => {
      const base = { accountId: account.id, reservationId: host.id, protocol: 'http' as const };
      const cap = await store.mintTunnelKey({ ...base, maxConnections: 0, expiresAt: clock.now() + HOUR }, 't').catch((e: unknown) => e);
      const past = await store.mintTunnelKey({ ...base, maxConnections: 1, expiresAt: clock.now() }, 't').catch((e: unknown) => e);
      expect(cap).to.include({ field: 'maxConnections' });
      expect(past).to.include({ field: 'expiresAt' });
    });

    it('refuses to mint for another account\'s reservation with TUNA_STORE_NOT_FOUND', async () => {
      const other = await store.createAccount({ name: 'other' }, 'test');
      const err = await store
        .mintTunnelKey({ accountId: other.id, reservationId: host.id, protocol: 'http', maxConnections: 1, expiresAt: clock.now() + HOUR }, 't')
        .catch((e: unknown) => e);
      expect(err).to.have.property('code', 'TUNA_STORE_NOT_FOUND');
    });

    it('reports an expired key once its expiry has passed', async () => {
      const { token } = await mint();
      clock.advance(HOUR - 1);
      expect((await store.authenticateTunnelKey(token)).ok).to.equal(true);
      clock.advance(1);
      expect(await store.authenticateTunnelKey(token)).to.deep.equal({ ok: false, reason: 'expired' });
    });

    it('revokes a key so that it is refused and no longer listed', async () => {
      const { record, token } = await mint();
      const revoked = await store.revokeTunnelKey(account.id, record.id, 'operator');
      expect(revoked.revokedAt).to.equal(clock.now());
      expect(await store.authenticateTunnelKey(token)).to.deep.equal({ ok: false, reason: 'revoked' });
      expect(await store.listTunnelKeys(account.id)).to.deep.equal([]);
      const again = await store.revokeTunnelKey(account.id, record.id, 'operator').catch((e: unknown) => e);
      expect(again).to.have.property('code', 'TUNA_STORE_NOT_FOUND');
    });

    it('rotates a key so that only the new secret works when no grace is given', async () => {
      const old = await mint();
      const rotated = await store.rotateTunnelKey(account.id, old.record.id, { expiresAt: clock.now() + 2 * HOUR }, 'operator');
      expect(rotated.record.id).to.equal(old.record.id);
      expect(await store.authenticateTunnelKey(old.token)).to.deep.equal({ ok: false, reason: 'wrong-secret' });
      const check = await store.authenticateTunnelKey(rotated.token);
      expect(check.ok && check.key.expiresAt).to.equal(clock.now() + 2 * HOUR);
    });

    it('keeps the previous secret valid until the rotation grace period ends', async () => {
      const old = await mint();
      await store.rotateTunnelKey(account.id, old.record.id, { expiresAt: clock.now() + 2 * HOUR, graceMs: 60_000 }, 'operator');
      clock.advance(59_999);
      expect((await store.authenticateTunnelKey(old.token)).ok).to.equal(true);
      clock.advance(1);
      expect(await store.authenticateTunnelKey(old.token)).to.deep.equal({ ok: false, reason: 'wrong-secret' });
    });

    it('lists live keys by label selector so that orphans of a cluster can be found', async () => {
      const a = await mint({ cluster: 'c1', 'owner-uid': 'u1' });
      const b = await mint({ cluster: 'c1', 'owner-uid': 'u2' });
      await mint({ cluster: 'c2', 'owner-uid': 'u3' });
      const ids = async (selector: Record<string, string>) => (await store.listTunnelKeys(account.id, selector)).map((k) => k.id);
      expect(await ids({ cluster: 'c1' })).to.have.members([a.record.id, b.record.id]).and.have.length(2);
      expect(await ids({ 'owner-uid': 'u2' })).to.deep.equal([b.record.id]);
      expect(await store.getTunnelKey(account.id, a.record.id)).to.deep.equal(a.record);
    });
  });
}
