import { expect } from 'chai';
import { StoreBindingDirectory } from '../../src/edge/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { FakeClock, STORE_BACKENDS } from '../support/postgres.js';

const PORTS = [{ port: 8080, protocol: 'http' as const }];

for (const backend of STORE_BACKENDS) {
  describe(`edge store mode: binding directory from reservations (${backend.name})`, function () {
    this.timeout(120_000);
    let store: Store;
    let clock: FakeClock;
    let directory: StoreBindingDirectory;
    let accountId: string;

    beforeEach(async () => {
      clock = new FakeClock(Date.now());
      store = await backend.open(clock);
      accountId = (await store.createAccount({ name: 'acme' }, 'test')).id;
      directory = new StoreBindingDirectory({ store, addressPorts: PORTS, pollMs: 60_000 });
      await directory.start();
    });

    afterEach(async () => {
      directory.stop();
      await store.close();
    });

    const reserve = async (spec: Parameters<Store['createReservation']>[0]['spec']) =>
      (await store.createReservation({ accountId, spec }, 'test')).reservation;

    it('maps each kind of reservation to its binding and leaves an unverified custom domain out', async () => {
      await reserve({ kind: 'domain', hostname: 'shop.tuna.test', domainType: 'subdomain' });
      await reserve({ kind: 'domain', hostname: 'www.example.org', domainType: 'custom' });
      await reserve({ kind: 'tcp-port', port: 20022 });
      await reserve({ kind: 'address', address: '127.77.0.9' });
      await directory.refresh();
      expect(directory.list().map((b) => b.id).sort()).to.deep.equal([
        'binding/address/127.77.0.9',
        'binding/host/shop.tuna.test',
        'binding/tcp-port/20022',
      ]);
      expect(directory.byHost('SHOP.tuna.test')?.id).to.equal('binding/host/shop.tuna.test');
      expect(directory.byHost('www.example.org')).to.equal(undefined);
      expect(directory.byPort(20022)?.kind).to.equal('tcp-port');
      expect(directory.byAddress('127.77.0.9')?.ports).to.deep.equal(PORTS);
    });

    it('serves a custom domain once verified and drops a released reservation, telling subscribers each time', async () => {
      const custom = await reserve({ kind: 'domain', hostname: 'www.example.org', domainType: 'custom' });
      const port = await reserve({ kind: 'tcp-port', port: 20023 });
      await directory.refresh();
      let changes = 0;
      directory.subscribe(() => changes++);
      await store.markDomainVerified(accountId, custom.id, 'test');
      await directory.refresh();
      expect(directory.byHost('www.example.org')?.id).to.equal('binding/host/www.example.org');
      await store.releaseReservation(accountId, port.id, 'test');
      await directory.refresh();
      expect(directory.byPort(20023)).to.equal(undefined);
      await directory.refresh();
      expect(changes, 'a refresh without a change notifies nobody').to.equal(2);
    });

    it('routes a domain as raw TLS while its live keys all carry tls, and terminates at the edge otherwise', async () => {
      const domain = await reserve({ kind: 'domain', hostname: 'secure.tuna.test', domainType: 'subdomain' });
      const mint = (protocol: 'tls' | 'http', ttlMs: number) =>
        store.mintTunnelKey({ accountId, reservationId: domain.id, protocol, maxConnections: 1, expiresAt: clock.now() + ttlMs }, 'test');
      await directory.refresh();
      expect(directory.byHost('secure.tuna.test')?.tls).to.equal('edge');
      await mint('tls', 60_000);
      await directory.refresh();
      expect(directory.byHost('secure.tuna.test')?.tls).to.equal('terminate-in-cluster');
      await mint('http', 1_000);
      await directory.refresh();
      expect(directory.byHost('secure.tuna.test')?.tls).to.equal('edge');
      clock.advance(2_000);
      await directory.refresh();
      expect(directory.byHost('secure.tuna.test')?.tls, 'an expired http key no longer counts').to.equal('terminate-in-cluster');
    });

    it('opens a port for UDP once a live key carries udp, for TCP while any key is not udp, and for TCP alone before any key', async () => {
      const port = await reserve({ kind: 'tcp-port', port: 20053 });
      const mint = (protocol: 'tcp' | 'udp', ttlMs: number) =>
        store.mintTunnelKey({ accountId, reservationId: port.id, protocol, maxConnections: 1, expiresAt: clock.now() + ttlMs }, 'test');
      await directory.refresh();
      expect(directory.byPort(20053)?.transports).to.deep.equal(['tcp']);
      await mint('udp', 60_000);
      await directory.refresh();
      expect(directory.byPort(20053)?.transports).to.deep.equal(['udp']);
      await mint('tcp', 1_000);
      await directory.refresh();
      expect(directory.byPort(20053)?.transports).to.deep.equal(['tcp', 'udp']);
      clock.advance(2_000);
      await directory.refresh();
      expect(directory.byPort(20053)?.transports, 'an expired tcp key no longer counts').to.deep.equal(['udp']);
    });
  });
}
