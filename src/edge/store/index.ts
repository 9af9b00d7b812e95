/** The edge's persistent store: one interface, SQLite (default) and PostgreSQL (shared by several edge nodes). */
import { PostgresDriver } from './postgres-driver.js';
import type { PostgresDriverOptions } from './postgres-driver.js';
import { SqlStore } from './sql-store.js';
import { SqliteDriver } from './sqlite-driver.js';
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

/** openStore picks the backend from a URL: `postgres://` / `postgresql://`, else a SQLite path (`sqlite:` prefix optional). */
export function openStore(url: string, clock: Clock = systemClock): Promise<Store> {
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgresStore({ connectionString: url }, clock);
  return openSqliteStore(url.replace(/^sqlite:/, ''), clock);
}
