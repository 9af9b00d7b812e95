import { expect } from 'chai';
import { StoreBindingDirectory, StoreTunnelAuthority } from '../../src/edge/index.js';
import type { DirectoryStore } from '../../src/edge/store-mode/store-directory.js';
import type { ServedChanges, Store } from '../../src/edge/store/index.js';
import { FakeClock, STORE_BACKENDS } from '../support/postgres.js';

/** CountingStore is the directory's slice of a real store that counts the whole loads and the rows each read brings. */
class CountingStore implements DirectoryStore {
  fullLoads = 0;
  reads = 0;
  rows = 0;
  constructor(private readonly store: Store) {}
  async listServedChanges(afterSeq?: number): Promise<ServedChanges> {
    const changes = await this.store.listServedChanges(afterSeq);
    this.reads++;
    if (changes.isFull) this.fullLoads++;
    this.rows += changes.reservations.length + changes.tunnelKeys.length;
    return changes;
  }
  /** take returns the counts since the last take and starts again from zero. */
  take(): { fullLoads: number; rows: number } {
    const counts = { fullLoads: this.fullLoads, rows: this.rows };
    this.fullLoads = 0;
    this.rows = 0;
    return counts;
  }
}

const HOSTS = 200;

for (const backend of STORE_BACKENDS) {
  describe(`edge store mode: the binding directory follows the store's changes without reloading (${backend.name})`, function () {
    this.timeout(120_000);
    let store: Store;
    let clock: FakeClock;
    let counting: CountingStore;
    let directory: StoreBindingDirectory;
    let accountId: string;

    const reserve = async (hostname: string) =>
      (await store.createReservation({ accountId, spec: { kind: 'domain', hostname, domainType: 'subdomain' } }, 'test')).reservation;
    const mint = (reservationId: string) =>
      store.mintTunnelKey({ accountId, reservationId, protocol: 'tls', maxConnections: 1, expiresAt: clock.now() + 60_000 }, 'test');

    beforeEach(async () => {
      clock = new FakeClock(Date.now());
      store = await backend.open(clock);
      accountId = (await store.createAccount({ name: 'acme' }, 'test')).id;
      for (let i = 0; i < HOSTS; i++) await reserve(`h${i}.tuna.test`);
      counting = new CountingStore(store);
      directory = new StoreBindingDirectory({ store: counting, addressPorts: [], pollMs: 60_000 });
      await directory.start();
    });

    afterEach(async () => {
      directory.stop();
      await store.close();
    });

    it(`loads the ${HOSTS} held reservations once, then reads nothing while nothing changes`, async () => {
      expect(counting.take()).to.deep.equal({ fullLoads: 1, rows: HOSTS });
      expect(directory.list()).to.have.length(HOSTS);
      for (let i = 0; i < 3; i++) await directory.refresh();
      expect(counting.take()).to.deep.equal({ fullLoads: 0, rows: 0 });
    });

    it('picks up a new reservation, a minted key, a revoked key and a released reservation, reading only their rows', async () => {
      counting.take();
      let notified = 0;
      directory.subscribe(() => notified++);

      const fresh = await reserve('new.tuna.test');
      await directory.refresh();
      expect(directory.byHost('new.tuna.test')?.tls).to.equal('edge');
      expect(counting.take(), 'a new reservation: its one row').to.deep.equal({ fullLoads: 0, rows: 1 });

      const key = await mint(fresh.id);
      await directory.refresh();
      expect(directory.byHost('new.tuna.test')?.tls, 'its only live key carries tls').to.equal('terminate-in-cluster');
      expect(counting.take(), 'a minted key: its one row').to.deep.equal({ fullLoads: 0, rows: 1 });

      await store.revokeTunnelKey(accountId, key.record.id, 'test');
      await directory.refresh();
      expect(directory.byHost('new.tuna.test')?.tls, 'the revoked key no longer counts').to.equal('edge');
      expect(counting.take(), 'a revoked key: its one row').to.deep.equal({ fullLoads: 0, rows: 1 });

      await mint(fresh.id);
      await directory.refresh();
      counting.take();
      await store.releaseReservation(accountId, fresh.id, 'test');
      await directory.refresh();
      expect(directory.byHost('new.tuna.test')).to.equal(undefined);
      expect(counting.take(), 'a release: the reservation and the key it revoked').to.deep.equal({ fullLoads: 0, rows: 2 });

      expect(directory.list()).to.have.length(HOSTS);
      expect(notified, 'add, tls, edge again, tls again, release').to.equal(5);
    });

    it('serves a binding a handshake names before the poll saw it, with no reload of the directory', async () => {
      counting.take();
      const authority = new StoreTunnelAuthority(store, directory, 200);
      const fresh = await reserve('late.tuna.test');
      const key = await mint(fresh.id);
      const grant = await authority.authorize(key.token, { bindingId: 'binding/host/late.tuna.test', remoteAddress: '127.0.0.1', connectionId: 'c1' });
      expect(grant.ok).to.equal(true);
      expect(directory.byId('binding/host/late.tuna.test')?.tls).to.equal('terminate-in-cluster');
      expect(counting.take(), 'one read of the two new rows').to.deep.equal({ fullLoads: 0, rows: 2 });
      const again = await authority.authorize(key.token, { bindingId: 'binding/host/late.tuna.test', remoteAddress: '127.0.0.1', connectionId: 'c2' });
      expect(again.ok).to.equal(true);
      expect(counting.reads, 'a known binding reads nothing more').to.equal(2);
    });

    it('drops an expired key by the store clock of a later read, reading no row for it', async () => {
      const fresh = await reserve('brief.tuna.test');
      await store.mintTunnelKey({ accountId, reservationId: fresh.id, protocol: 'tls', maxConnections: 1, expiresAt: clock.now() + 1_000 }, 'test');
      await directory.refresh();
      expect(directory.byHost('brief.tuna.test')?.tls).to.equal('terminate-in-cluster');
      counting.take();
      clock.advance(2_000);
      await directory.refresh();
      expect(directory.byHost('brief.tuna.test')?.tls).to.equal('edge');
      expect(counting.take()).to.deep.equal({ fullLoads: 0, rows: 0 });
    });
  });
}
