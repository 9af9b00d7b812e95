import { expect } from 'chai';
import { StoreNotFoundError, StoreQuotaExceededError } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { FakeClock, STORE_BACKENDS } from '../support/postgres.js';

const DAY = 86_400_000;

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (err: unknown) => err,
  );
}

for (const backend of STORE_BACKENDS) {
  /** Per-account quotas and the expiry of unverified custom domains. */
  describe(`store contract: quotas and unverified domains (${backend.name})`, function () {
    this.timeout(60_000);
    let store: Store;
    let clock: FakeClock;
    let accountId: string;

    beforeEach(async () => {
      clock = new FakeClock();
      store = await backend.open(clock);
      accountId = (await store.createAccount({ name: 'acme' }, 'test')).id;
    });
    afterEach(() => store.close());

    const reservePort = (port: number, quota?: number) =>
      store.createReservation({ accountId, spec: { kind: 'tcp-port', port }, ...(quota !== undefined ? { quota } : {}) }, 'test');

    it('refuses a new reservation past the quota with TUNA_STORE_QUOTA_EXCEEDED naming it, but adopts a held one and counts a release', async () => {
      await reservePort(20001, 2);
      const second = await reservePort(20002, 2);
      const err = await failure(reservePort(20003, 2));
      expect(err).to.be.instanceOf(StoreQuotaExceededError);
      expect(err).to.include({ code: 'TUNA_STORE_QUOTA_EXCEEDED', quota: 'reservations', limit: 2 });
      expect((err as Error).message).to.match(/quota reservations exceeded: the account holds 2 of 2/);
      expect((await reservePort(20002, 2)).created, 'asking again for a held port is not a new reservation').to.equal(false);
      await store.releaseReservation(accountId, second.reservation.id, 'test');
      expect((await reservePort(20003, 2)).created).to.equal(true);
    });

    it('counts only live tunnel keys against the tunnel key quota', async () => {
      const { reservation } = await reservePort(20010);
      const mint = () =>
        store.mintTunnelKey({ accountId, reservationId: reservation.id, protocol: 'tcp', maxConnections: 1, expiresAt: clock.now() + DAY, quota: 2 }, 'test');
      const first = await mint();
      await mint();
      expect(await failure(mint())).to.be.instanceOf(StoreQuotaExceededError).and.include({ quota: 'tunnelKeys' });
      await store.revokeTunnelKey(accountId, first.record.id, 'test');
      await mint();
      clock.advance(2 * DAY);
      await mint();
      await mint();
    });

    it('lets an override win over the default, and null go back to it', async () => {
      expect(await store.getQuotaOverrides(accountId)).to.deep.equal({ reservations: null, tunnelKeys: null, concurrentTunnels: null });
      expect(await store.setQuotaOverrides(accountId, { reservations: 3 }, 'admin')).to.deep.equal({ reservations: 3, tunnelKeys: null, concurrentTunnels: null });
      for (const port of [20001, 20002, 20003]) await reservePort(port, 1);
      expect(await failure(reservePort(20004, 1))).to.be.instanceOf(StoreQuotaExceededError).and.include({ limit: 3 });
      await store.setQuotaOverrides(accountId, { reservations: null, tunnelKeys: 0, concurrentTunnels: 7 }, 'admin');
      expect(await store.getQuotaOverrides(accountId)).to.deep.equal({ reservations: null, tunnelKeys: 0, concurrentTunnels: 7 });
      expect(await failure(store.getQuotaOverrides('0000000000000000'))).to.be.instanceOf(StoreNotFoundError);
      const actions = (await store.listAuditEvents({ accountId })).map((e) => e.action);
      expect(actions.filter((a) => a === 'account.quotas')).to.have.length(2);
    });

    it('releases custom domains left unverified before the cut-off, and nothing else', async () => {
      const stale = await store.createReservation({ accountId, spec: { kind: 'domain', hostname: 'shop.example.org', domainType: 'custom' } }, 'test');
      const verified = await store.createReservation({ accountId, spec: { kind: 'domain', hostname: 'www.example.org', domainType: 'custom' } }, 'test');
      await store.markDomainVerified(accountId, verified.reservation.id, 'test');
      await store.createReservation({ accountId, spec: { kind: 'domain', hostname: 'app.tuna.test', domainType: 'subdomain' } }, 'test');
      clock.advance(DAY);
      const fresh = await store.createReservation({ accountId, spec: { kind: 'domain', hostname: 'new.example.org', domainType: 'custom' } }, 'test');
      const released = await store.releaseUnverifiedDomains(clock.now() - DAY / 2, 'system');
      expect(released.map((r) => r.reservation.id)).to.deep.equal([stale.reservation.id]);
      const held = (await store.listReservations(accountId)).map((r) => r.value).sort();
      expect(held).to.deep.equal(['app.tuna.test', 'new.example.org', 'www.example.org']);
      expect(fresh.created).to.equal(true);
    });
  });
}
