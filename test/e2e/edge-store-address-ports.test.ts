import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreBindingDirectory } from '../../src/edge/index.js';
import { openPostgresStore, openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { freshPostgresSchema } from '../support/postgres.js';

/** TwoNodes opens two stores on one database, as two edge nodes sharing it do. */
interface TwoNodes {
  readonly name: string;
  open(): Promise<{ a: Store; b: Store; cleanup: () => void }>;
}

const BACKENDS: readonly TwoNodes[] = [
  {
    name: 'SQLite file',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'tuna-ports-feed-'));
      const path = join(dir, 'edge.db');
      return { a: await openSqliteStore(path), b: await openSqliteStore(path), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const target = await freshPostgresSchema();
      return { a: await openPostgresStore(target), b: await openPostgresStore(target), cleanup: () => undefined };
    },
  },
];

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 250; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`not within 5 s: ${what}`);
}

for (const backend of BACKENDS) {
  describe(`edge store mode: another node follows the ports of an address reservation (${backend.name})`, function () {
    this.timeout(120_000);
    let a: Store;
    let b: Store;
    let cleanup: () => void;
    let directory: StoreBindingDirectory;

    beforeEach(async () => {
      ({ a, b, cleanup } = await backend.open());
    });
    afterEach(async () => {
      directory.stop();
      await a.close();
      await b.close();
      cleanup();
    });

    it('serves the addressPorts for a reservation that names none, then the ports set on the other node, under the same binding id', async () => {
      const accountId = (await a.createAccount({ name: 'acme' }, 'test')).id;
      const { reservation } = await a.createReservation({ accountId, spec: { kind: 'address', address: '127.77.0.20' } }, 'test');
      directory = new StoreBindingDirectory({ store: b, addressPorts: [{ port: 80, protocol: 'http' }, { port: 443, protocol: 'tls' }], pollMs: 50 });
      await directory.start();
      const id = 'binding/address/127.77.0.20';
      expect(directory.byId(id)?.ports, 'no ports of its own: the addressPorts').to.deep.equal([{ port: 80, protocol: 'http' }, { port: 443, protocol: 'tls' }]);
      let changes = 0;
      directory.subscribe(() => changes++);

      await a.setReservationPorts(accountId, reservation.id, [{ port: 9300, protocol: 'tcp' }, { port: 8080, protocol: 'http' }], 'test');
      await until(() => directory.byId(id)?.ports?.length === 2 && directory.byId(id)?.ports?.[1]?.port === 9300, 'node b serves 8080 and 9300');
      expect(directory.byId(id)).to.deep.include({ id, kind: 'address', address: '127.77.0.20', ports: [{ port: 8080, protocol: 'http' }, { port: 9300, protocol: 'tcp' }] });
      expect(directory.byAddress('127.77.0.20')?.id).to.equal(id);
      expect(changes).to.equal(1);

      await a.setReservationPorts(accountId, reservation.id, [{ port: 8080, protocol: 'http' }], 'test');
      await until(() => directory.byId(id)?.ports?.length === 1, 'node b drops 9300');
      expect(directory.byId(id)?.ports).to.deep.equal([{ port: 8080, protocol: 'http' }]);
      expect(changes).to.equal(2);
    });
  });
}
