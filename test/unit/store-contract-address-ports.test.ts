import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS, openSqliteStore } from '../../src/edge/store/index.js';
import type { Account, Store } from '../../src/edge/store/index.js';
import { migrate } from '../../src/edge/store/migrations.js';
import { SqliteDriver } from '../../src/edge/store/sqlite-driver.js';
import { FakeClock, STORE_BACKENDS } from '../support/postgres.js';

/** failure awaits a promise that must reject and returns what it rejected with. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** Contract: an address reservation keeps the ports it names, on every backend. */
for (const backend of STORE_BACKENDS) {
  describe(`store contract: the ports of an address reservation (${backend.name})`, function () {
    this.timeout(120_000);
    let store: Store;
    let clock: FakeClock;
    let alice: Account;
    let bob: Account;

    beforeEach(async () => {
      clock = new FakeClock();
      store = await backend.open(clock);
      alice = await store.createAccount({ name: 'alice' }, 'test');
      bob = await store.createAccount({ name: 'bob' }, 'test');
    });
    afterEach(async () => {
      await store.close();
    });

    const reserveAddress = (ports?: { port: number; protocol: 'http' | 'https' | 'tls' | 'tcp' | 'udp' }[], name = 'default/gw') =>
      store.createReservation({ accountId: alice.id, spec: { kind: 'address', pool: '127.77.0.0/24' }, name, ...(ports ? { ports } : {}) }, 'test');

    it('keeps a udp port beside a TCP protocol on the same number, udp last', async () => {
      const { reservation } = await reserveAddress([{ port: 53, protocol: 'udp' }, { port: 53, protocol: 'tcp' }], 'default/dns');
      expect(reservation.ports).to.deep.equal([{ port: 53, protocol: 'tcp' }, { port: 53, protocol: 'udp' }]);
    });

    it('keeps the ports an address reservation names, sorted by port, and leaves them out of one that names none', async () => {
      const { reservation } = await reserveAddress([{ port: 9300, protocol: 'tcp' }, { port: 8080, protocol: 'http' }]);
      expect(reservation.ports).to.deep.equal([{ port: 8080, protocol: 'http' }, { port: 9300, protocol: 'tcp' }]);
      expect((await store.getReservation(alice.id, reservation.id))?.ports).to.deep.equal(reservation.ports);
      const plain = (await reserveAddress(undefined, 'default/plain')).reservation;
      expect(plain).to.not.have.property('ports');
      expect(await store.getReservation(alice.id, plain.id)).to.not.have.property('ports');
    });

    it('replaces the ports on an adopted reservation that names others, and keeps them when it names none', async () => {
      const first = (await reserveAddress([{ port: 8080, protocol: 'http' }])).reservation;
      const again = await reserveAddress([{ port: 8443, protocol: 'tls' }]);
      expect(again).to.deep.include({ created: false });
      expect(again.reservation.ports).to.deep.equal([{ port: 8443, protocol: 'tls' }]);
      const bare = await reserveAddress();
      expect(bare.reservation.id).to.equal(first.id);
      expect(bare.reservation.ports).to.deep.equal([{ port: 8443, protocol: 'tls' }]);
    });

    it('refuses ports on a reservation that is not an address, and a port listed twice, naming the field', async () => {
      const domain = store.createReservation(
        { accountId: alice.id, spec: { kind: 'domain', hostname: 'web.edge.test', domainType: 'subdomain' }, ports: [{ port: 80, protocol: 'http' }] },
        'test',
      );
      expect(await failure(domain)).to.include({ code: 'TUNA_STORE_INVALID', field: 'ports' });
      const twice = reserveAddress([{ port: 80, protocol: 'http' }, { port: 80, protocol: 'tcp' }]);
      expect(await failure(twice)).to.include({ code: 'TUNA_STORE_INVALID', field: 'ports[1].port' });
      const udpTwice = reserveAddress([{ port: 53, protocol: 'udp' }, { port: 53, protocol: 'udp' }], 'default/dns');
      expect(await failure(udpTwice)).to.include({ code: 'TUNA_STORE_INVALID', field: 'ports[1].port' });
      const zero = reserveAddress([{ port: 0, protocol: 'http' }]);
      expect(await failure(zero)).to.include({ field: 'ports[0].port' });
      expect(await store.listReservations(alice.id)).to.deep.equal([]);
    });

    it('sets the ports of an address reservation, audits the change, and writes nothing for the same list again', async () => {
      const { reservation } = await reserveAddress();
      const { seq } = await store.listServedChanges();
      clock.advance(1000);
      const set = await store.setReservationPorts(alice.id, reservation.id, [{ port: 9300, protocol: 'tcp' }, { port: 80, protocol: 'http' }], 'apikey:k1');
      expect(set.ports).to.deep.equal([{ port: 80, protocol: 'http' }, { port: 9300, protocol: 'tcp' }]);
      expect(set.updatedAt).to.equal(clock.now());
      const feed = await store.listServedChanges(seq);
      expect(feed.reservations.map((c) => c.reservation.ports), 'the change feed carries the new ports').to.deep.equal([set.ports]);
      const events = (await store.listAuditEvents({ accountId: alice.id })).filter((e) => e.action === 'reservation.ports');
      expect(events).to.have.length(1);
      expect(events[0]).to.deep.include({ actor: 'apikey:k1', targetId: reservation.id });
      expect(events[0]!.detail).to.deep.equal({ value: reservation.value, ports: set.ports, previous: null });
      const same = await store.setReservationPorts(alice.id, reservation.id, [{ port: 80, protocol: 'http' }, { port: 9300, protocol: 'tcp' }], 'apikey:k1');
      expect(same).to.deep.equal(set);
      expect((await store.listServedChanges(feed.seq)).reservations, 'the same list again: no feed entry').to.deep.equal([]);
      const emptied = await store.setReservationPorts(alice.id, reservation.id, [], 'apikey:k1');
      expect(emptied.ports, 'an empty list serves no port').to.deep.equal([]);
    });

    it('refuses to set ports of another account\'s reservation, of a released one and of one that is not an address', async () => {
      const { reservation } = await reserveAddress();
      const ports = [{ port: 80, protocol: 'http' as const }];
      expect(await failure(store.setReservationPorts(bob.id, reservation.id, ports, 't'))).to.include({ code: 'TUNA_STORE_NOT_FOUND' });
      const tcp = (await store.createReservation({ accountId: alice.id, spec: { kind: 'tcp-port', port: 21001 } }, 't')).reservation;
      expect(await failure(store.setReservationPorts(alice.id, tcp.id, ports, 't'))).to.include({ code: 'TUNA_STORE_INVALID', field: 'id' });
      await store.releaseReservation(alice.id, reservation.id, 't');
      expect(await failure(store.setReservationPorts(alice.id, reservation.id, ports, 't'))).to.include({ code: 'TUNA_STORE_NOT_FOUND' });
    });
  });
}

describe('store: migration 7 adds the ports of address reservations to an older database', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-ports-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps an address reserved before it without ports (the edge then serves its addressPorts) and lets it name ports afterwards', async () => {
    const path = join(dir, 'edge.db');
    const driver = new SqliteDriver(path);
    await migrate(driver, Date.now(), MIGRATIONS.filter((m) => m.version < 7));
    await driver.run("INSERT INTO accounts (id, name, created_at) VALUES ('acc_1', 'old', 0)");
    await driver.run(
      "INSERT INTO reservations (id, account_id, kind, value, name, labels, verified, created_at, updated_at) VALUES ('res_1', 'acc_1', 'address', '127.77.0.1', 'gw', '{}', 1, 0, 0)",
    );
    await driver.close();
    const store = await openSqliteStore(path);
    try {
      const old = await store.getReservation('acc_1', 'res_1');
      expect(old).to.include({ kind: 'address', value: '127.77.0.1' });
      expect(old).to.not.have.property('ports');
      const set = await store.setReservationPorts('acc_1', 'res_1', [{ port: 9300, protocol: 'tcp' }], 'test');
      expect(set.ports).to.deep.equal([{ port: 9300, protocol: 'tcp' }]);
    } finally {
      await store.close();
    }
  });
});
