import { expect } from 'chai';
import { openPostgresStore } from '../../src/edge/store/index.js';
import type { Account, Reservation, Store } from '../../src/edge/store/index.js';
import { FakeClock, STORE_BACKENDS, freshPostgresSchema } from '../support/postgres.js';

/** collect subscribes to revocations and lets a test wait (bounded) for the next batch. */
async function collect(store: Store) {
  const batches: string[][] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = await store.watchTunnelKeyRevocations((ids) => {
    batches.push([...ids]);
    wake?.();
  });
  const next = async (): Promise<string[]> => {
    if (batches.length === 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no revocation announced within 10 s')), 10_000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return batches.shift()!;
  };
  return { batches, next, unsubscribe };
}

for (const backend of STORE_BACKENDS) {
  describe(`store contract: revocation announcements (${backend.name})`, function () {
    this.timeout(120_000);
    let store: Store;
    let clock: FakeClock;
    let account: Account;
    let port: Reservation;

    const mint = () =>
      store.mintTunnelKey({ accountId: account.id, reservationId: port.id, protocol: 'tcp', maxConnections: 1, expiresAt: clock.now() + 60_000 }, 't');

    beforeEach(async () => {
      clock = new FakeClock();
      store = await backend.open(clock);
      account = await store.createAccount({ name: 'acme' }, 't');
      port = (await store.createReservation({ accountId: account.id, spec: { kind: 'tcp-port', port: 20000 } }, 't')).reservation;
    });
    afterEach(async () => {
      await store.close();
    });

    it('announces a revoked tunnel key to watchers once the revocation commits', async () => {
      const watch = await collect(store);
      const key = await mint();
      await store.revokeTunnelKey(account.id, key.record.id, 't');
      expect(await watch.next()).to.deep.equal([key.record.id]);
      await watch.unsubscribe();
    });

    it('announces every key revoked by a release, and nothing for a failed revocation', async () => {
      const watch = await collect(store);
      const a = await mint();
      const b = await mint();
      await store.revokeTunnelKey(account.id, 'ffffffffffffffff', 't').catch(() => undefined);
      await store.releaseReservation(account.id, port.id, 't');
      expect(await watch.next()).to.have.members([a.record.id, b.record.id]);
      expect(watch.batches).to.deep.equal([]);
      await watch.unsubscribe();
    });
  });
}

describe('store on PostgreSQL: revocations reach every edge node', function () {
  this.timeout(120_000);

  it('tells node B about a key revoked through node A', async () => {
    const target = await freshPostgresSchema();
    const nodeA = await openPostgresStore(target);
    const nodeB = await openPostgresStore(target);
    try {
      const watch = await collect(nodeB);
      const account = await nodeA.createAccount({ name: 'acme' }, 't');
      const { reservation } = await nodeA.createReservation({ accountId: account.id, spec: { kind: 'tcp-port', port: 20000 } }, 't');
      const key = await nodeA.mintTunnelKey({ accountId: account.id, reservationId: reservation.id, protocol: 'tcp', maxConnections: 1, expiresAt: Date.now() + 60_000 }, 't');
      await nodeA.revokeTunnelKey(account.id, key.record.id, 't');
      expect(await watch.next()).to.deep.equal([key.record.id]);
      expect(await nodeB.authenticateTunnelKey(key.token)).to.deep.equal({ ok: false, reason: 'revoked' });
    } finally {
      await Promise.all([nodeA.close(), nodeB.close()]);
    }
  });
});
