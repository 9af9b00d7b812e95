import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS, openPostgresStore, openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { PostgresDriver } from '../../src/edge/store/postgres-driver.js';
import { SqliteDriver } from '../../src/edge/store/sqlite-driver.js';
import { migrate } from '../../src/edge/store/migrations.js';
import { FakeClock, STORE_BACKENDS, freshPostgresSchema } from '../support/postgres.js';

const INJECTIONS = [
  "'; DROP TABLE accounts; --",
  "x' OR '1'='1",
  'Robert"); DELETE FROM reservations; --',
  '$1 ? ?? \\ %s %',
  '1; UPDATE audit_log SET actor = \'x\'',
];

/** SQL is always bound, never spliced: hostile text is stored verbatim and the schema survives it. */
for (const backend of STORE_BACKENDS) {
  describe(`store: SQL injection strings in every text field (${backend.name})`, function () {
    this.timeout(120_000);
    let store: Store;
    const clock = new FakeClock();

    beforeEach(async () => {
      store = await backend.open(clock);
    });
    afterEach(async () => {
      await store.close();
    });

    it('stores hostile text verbatim in names, labels, certificate PEMs and actors', async () => {
      for (const [i, text] of INJECTIONS.entries()) {
        const account = await store.createAccount({ name: text }, text);
        expect(await store.getAccount(account.id)).to.deep.include({ name: text });
        const { token } = await store.createApiKey({ accountId: account.id, name: text, scopes: ['admin'] }, text);
        expect((await store.authenticateApiKey(token))?.name).to.equal(text);
        const labels = { [text]: text, cluster: text };
        const { reservation } = await store.createReservation(
          { accountId: account.id, name: text, labels, spec: { kind: 'tcp-port', port: 40000 + i } },
          text,
        );
        expect((await store.listReservations(account.id, { [text]: text })).map((r) => [r.id, r.name])).to.deep.equal([[reservation.id, text]]);
        const key = await store.mintTunnelKey(
          { accountId: account.id, reservationId: reservation.id, protocol: 'tcp', maxConnections: 1, expiresAt: clock.now() + 1000, labels },
          text,
        );
        expect((await store.listTunnelKeys(account.id, { cluster: text })).map((k) => k.id)).to.deep.equal([key.record.id]);
        await store.putCertificate({ hostname: `h${i}.example.com`, chainPem: text, keyPem: text, notAfter: 1 }, text);
        expect(await store.getCertificate(`h${i}.example.com`)).to.include({ chainPem: text, keyPem: text });
      }
      expect((await store.listAccounts()).map((a) => a.name)).to.have.members(INJECTIONS);
      const events = await store.listAuditEvents();
      expect(new Set(events.map((e) => e.actor))).to.deep.equal(new Set(INJECTIONS));
    });

    it('treats an injection string as a plain (unknown) key and id', async () => {
      const account = await store.createAccount({ name: 'a' }, 't');
      expect(await store.authenticateApiKey(`tuna_ak_${INJECTIONS[0]}`)).to.equal(undefined);
      expect(await store.getReservation(account.id, INJECTIONS[1]!)).to.equal(undefined);
      expect(await store.getAccount(INJECTIONS[1]!)).to.equal(undefined);
      expect(await store.listAccounts()).to.have.length(1);
    });
  });
}

describe('store migrations', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-store-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('reopens a SQLite file without re-running migrations and keeps its rows', async () => {
    const path = join(dir, 'edge.db');
    const first = await openSqliteStore(path);
    await first.createAccount({ name: 'kept' }, 't');
    await first.close();
    const second = await openSqliteStore(path);
    expect((await second.listAccounts()).map((a) => a.name)).to.deep.equal(['kept']);
    await second.close();
    const driver = new SqliteDriver(path);
    const versions = await driver.query('SELECT version FROM schema_migrations ORDER BY version');
    await driver.close();
    expect(versions.map((r) => Number(r['version']))).to.deep.equal(MIGRATIONS.map((m) => m.version));
  });

  it('keeps the tunnel keys of a SQLite file through the rebuild that lets keys carry udp', async () => {
    const path = join(dir, 'edge.db');
    const before = new SqliteDriver(path);
    await migrate(before, 1, MIGRATIONS.filter((m) => m.version < 8));
    await before.run("INSERT INTO accounts (id, name, created_at) VALUES ('a', 'acme', 1)");
    await before.run("INSERT INTO reservations (id, account_id, kind, value, port, labels, verified, created_at, updated_at) VALUES ('r', 'a', 'tcp-port', '20053', 20053, '{}', 1, 1, 1)");
    await before.run("INSERT INTO tunnel_keys (id, account_id, reservation_id, protocol, secret_hash, max_connections, expires_at, labels, created_at) VALUES ('k', 'a', 'r', 'tcp', 'h', 2, 9, '{}', 1)");
    const refused = await before.run("INSERT INTO tunnel_keys (id, account_id, reservation_id, protocol, secret_hash, max_connections, expires_at, labels, created_at) VALUES ('u', 'a', 'r', 'udp', 'h', 2, 9, '{}', 1)").catch((e: unknown) => e);
    const [stamped] = await before.query("SELECT change_seq FROM tunnel_keys WHERE id = 'k'");
    await before.close();
    expect(String(refused)).to.include('CHECK');
    await (await openSqliteStore(path)).close();
    const after = new SqliteDriver(path);
    await after.run("INSERT INTO tunnel_keys (id, account_id, reservation_id, protocol, secret_hash, max_connections, expires_at, labels, created_at) VALUES ('u', 'a', 'r', 'udp', 'h', 2, 9, '{}', 1)");
    const rows = await after.query('SELECT id, protocol, change_seq FROM tunnel_keys ORDER BY id');
    await after.close();
    expect(rows.map((r) => [r['id'], r['protocol']])).to.deep.equal([['k', 'tcp'], ['u', 'udp']]);
    // the copy kept the old row's stamp, and the re-created trigger stamped the new one after it
    expect(Number(rows[0]!['change_seq'])).to.equal(Number(stamped!['change_seq'])).and.to.be.above(0);
    expect(Number(rows[1]!['change_seq'])).to.be.above(Number(rows[0]!['change_seq']));
  });

  it('refuses a SQLite database migrated by a newer tuna with TUNA_STORE_SCHEMA_TOO_NEW', async () => {
    const path = join(dir, 'edge.db');
    await (await openSqliteStore(path)).close();
    const driver = new SqliteDriver(path);
    await driver.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)");
    await driver.close();
    const err = await openSqliteStore(path).catch((e: unknown) => e);
    expect(err).to.have.property('code', 'TUNA_STORE_SCHEMA_TOO_NEW');
  });

  it('keeps the SQLite audit log append-only in the database itself', async () => {
    const path = join(dir, 'edge.db');
    const store = await openSqliteStore(path);
    await store.createAccount({ name: 'a' }, 't');
    await store.close();
    const driver = new SqliteDriver(path);
    const update = await driver.run("UPDATE audit_log SET actor = 'forged'").catch((e: unknown) => e);
    const remove = await driver.run('DELETE FROM audit_log').catch((e: unknown) => e);
    await driver.close();
    expect(String(update)).to.include('append-only');
    expect(String(remove)).to.include('append-only');
  });

  it('migrates one PostgreSQL schema once when three edge nodes start at the same time', async () => {
    const target = await freshPostgresSchema();
    const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore(target)));
    await stores[0]!.createAccount({ name: 'shared' }, 't');
    expect((await stores[2]!.listAccounts()).map((a) => a.name)).to.deep.equal(['shared']);
    await Promise.all(stores.map((s) => s.close()));
    const driver = new PostgresDriver(target);
    const versions = await driver.query('SELECT version FROM schema_migrations ORDER BY version');
    const update = await driver.run("UPDATE audit_log SET actor = 'forged'").catch((e: unknown) => e);
    await driver.close();
    expect(versions.map((r) => Number(r['version']))).to.deep.equal(MIGRATIONS.map((m) => m.version));
    expect(String(update)).to.include('append-only');
  });
});

describe('store on PostgreSQL shared by two edge nodes', function () {
  this.timeout(120_000);

  it('never hands the same pool port to two nodes allocating at once', async () => {
    const target = await freshPostgresSchema();
    const nodeA = await openPostgresStore(target);
    const nodeB = await openPostgresStore(target);
    try {
      const account = await nodeA.createAccount({ name: 'acme' }, 't');
      const pool = { first: 32000, last: 32029 };
      const attempts = Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? nodeA : nodeB).createReservation({ accountId: account.id, spec: { kind: 'tcp-port', pool } }, 't').then(
          (r) => r.reservation.value,
          (e: unknown) => (e as { code?: string }).code ?? String(e),
        ),
      );
      const results = await Promise.all(attempts);
      const ports = results.filter((r) => /^\d+$/.test(r));
      expect(new Set(ports).size).to.equal(30);
      expect(ports).to.have.length(30);
      expect(results.filter((r) => r === 'TUNA_STORE_POOL_EXHAUSTED')).to.have.length(10);
      expect((await nodeB.listReservations(account.id)).map((r) => r.value)).to.have.members(ports);
    } finally {
      await Promise.all([nodeA.close(), nodeB.close()]);
    }
  });

  it('adopts, not conflicts, when one account reserves the same hostname through two nodes at once', async () => {
    const target = await freshPostgresSchema();
    const nodeA = await openPostgresStore(target);
    const nodeB = await openPostgresStore(target);
    try {
      const a = await nodeA.createAccount({ name: 'a' }, 't');
      const spec = { kind: 'domain', hostname: 'same.edge.test', domainType: 'subdomain' } as const;
      const results = await Promise.all([1, 2, 3, 4].map((i) => (i % 2 ? nodeA : nodeB).createReservation({ accountId: a.id, spec }, 't')));
      expect(new Set(results.map((r) => r.reservation.id)).size).to.equal(1);
      expect(results.filter((r) => r.created)).to.have.length(1);
    } finally {
      await Promise.all([nodeA.close(), nodeB.close()]);
    }
  });

  it('refuses one of two accounts reserving the same hostname through different nodes at once', async () => {
    const target = await freshPostgresSchema();
    const nodeA = await openPostgresStore(target);
    const nodeB = await openPostgresStore(target);
    try {
      const a = await nodeA.createAccount({ name: 'a' }, 't');
      const b = await nodeA.createAccount({ name: 'b' }, 't');
      const spec = { kind: 'domain', hostname: 'race.edge.test', domainType: 'subdomain' } as const;
      const results = await Promise.allSettled([
        nodeA.createReservation({ accountId: a.id, spec }, 't'),
        nodeB.createReservation({ accountId: b.id, spec }, 't'),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
      const rejected = results.find((r) => r.status === 'rejected');
      expect(rejected?.reason).to.have.property('code', 'TUNA_STORE_CONFLICT');
    } finally {
      await Promise.all([nodeA.close(), nodeB.close()]);
    }
  });
});
