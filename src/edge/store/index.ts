/** The edge's persistent store: one interface, SQLite (default) and PostgreSQL (shared by several edge nodes). */
import { PostgresDriver } from './postgres-driver.js';
import type { PostgresDriverOptions } from './postgres-driver.js';
import { SqlStore } from './sql-store.js';
import { SqliteDriver } from './sqlite-driver.js';
import { StoreInvalidInputError } from './errors.js';
import { systemClock } from './store.js';
import type { Clock, Store } from './store.js';

export * from './store.js';
export * from './errors.js';
export { MIGRATIONS } from './migrations.js';
export { parseToken } from './keys.js';
export type { KeyKind } from './keys.js';
export { SqlStore } from './sql-store.js';
export { STORE } from './tokens.js';

/** openSqliteStore opens (creating and migrating) a SQLite store at a file path or `:memory:`. */
export function openSqliteStore(path: string, clock: Clock = systemClock): Promise<Store> {
  return SqlStore.open(new SqliteDriver(path), clock);
}

/** openPostgresStore connects to PostgreSQL (migrating on first use); `schema` keeps the tables in one schema. */
export function openPostgresStore(options: PostgresDriverOptions, clock: Clock = systemClock): Promise<Store> {
  return SqlStore.open(new PostgresDriver(options), clock);
}

/** StoreBackend is what a store URL names: PostgreSQL, or a SQLite file. */
export type StoreBackend = 'postgres' | 'sqlite';

/**
 * storeBackendOf is the one place the backend is chosen from a URL: `postgres://` or
 * `postgresql://` is PostgreSQL; anything else is a SQLite path (`sqlite:` prefix optional,
 * `:memory:` for a store in memory).
 */
export function storeBackendOf(url: string): StoreBackend {
  return /^postgres(ql)?:\/\//.test(url) ? 'postgres' : 'sqlite';
}

/** StoreLocation is where a store is: its URL and, for PostgreSQL only, the schema that holds its tables. */
export interface StoreLocation {
  readonly url: string;
  readonly schema?: string;
}

/**
 * openStore opens (creating and migrating) the store a URL names, on the backend storeBackendOf
 * picks. A schema with a SQLite URL is refused (StoreInvalidInputError) rather than ignored; the
 * edge's config and `tuna edge init` say so first in their own words.
 */
export function openStore(location: string | StoreLocation, clock: Clock = systemClock): Promise<Store> {
  const { url, schema } = typeof location === 'string' ? { url: location, schema: undefined } : location;
  if (storeBackendOf(url) === 'postgres') return openPostgresStore({ connectionString: url, ...(schema !== undefined ? { schema } : {}) }, clock);
  if (schema !== undefined) return Promise.reject(new StoreInvalidInputError('schema', 'applies to a postgres:// store only'));
  return openSqliteStore(url.replace(/^sqlite:/, ''), clock);
}
