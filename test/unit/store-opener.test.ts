import { expect } from 'chai';
import pg from 'pg';
import { EdgeConfigError } from '../../src/edge/errors.js';
import { openConfiguredStore } from '../../src/edge/store-mode/index.js';
import { StoreInvalidInputError, openStore, storeBackendOf } from '../../src/edge/store/index.js';
import { freshPostgresSchema } from '../support/postgres.js';

// The store's one opener: the backend is chosen from the URL in storeBackendOf alone, and the
// edge's config (openConfiguredStore) and `tuna edge init` open through openStore.
describe('the store opener', () => {
  it('names PostgreSQL for postgres:// and postgresql:// URLs and SQLite for anything else', () => {
    expect(storeBackendOf('postgres://tuna@db.test/edge')).to.equal('postgres');
    expect(storeBackendOf('postgresql://tuna@db.test/edge')).to.equal('postgres');
    expect(storeBackendOf('edge.db')).to.equal('sqlite');
    expect(storeBackendOf('sqlite:edge.db')).to.equal('sqlite');
    expect(storeBackendOf(':memory:')).to.equal('sqlite');
    // a path that merely mentions postgres is a file
    expect(storeBackendOf('postgres.db')).to.equal('sqlite');
  });

  it('opens a SQLite store from a path, with or without the sqlite: prefix, as a string or a location', async () => {
    for (const location of [':memory:', 'sqlite::memory:', { url: ':memory:' }]) {
      const store = await openStore(location);
      try {
        expect(await store.listAccounts()).to.deep.equal([]);
      } finally {
        await store.close();
      }
    }
  });

  it('opens PostgreSQL from a postgres:// URL, with its tables in the schema asked for', async function () {
    this.timeout(120_000);
    const { connectionString, schema } = await freshPostgresSchema();
    const store = await openStore({ url: connectionString, schema });
    await store.close();
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = $1', [schema]);
      expect(Number(rows[0]!.n)).to.be.greaterThan(0);
    } finally {
      await client.end();
    }
  });

  it('refuses a schema with a SQLite URL instead of ignoring it', async () => {
    const err = await openStore({ url: ':memory:', schema: 'tenant_a' }).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(StoreInvalidInputError);
    expect((err as StoreInvalidInputError).field).to.equal('schema');
  });

  it('refuses store.schema on a SQLite store in the edge config with the field named', async () => {
    const err = await Promise.resolve()
      .then(() => openConfiguredStore({ url: ':memory:', baseDomain: 'tuna.test', schema: 'tenant_a' }))
      .then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(EdgeConfigError);
    expect((err as Error).message).to.equal('store.schema applies to a postgres:// store only');
  });
});
