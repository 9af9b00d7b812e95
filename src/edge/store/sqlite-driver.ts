import { EventEmitter } from 'node:events';
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import type { SQLInputValue, StatementSync } from 'node:sqlite';
import { StoreClosedError, UniqueViolation } from './errors.js';
import type { NotificationListener, SqlDriver, SqlRow, SqlTransaction, SqlValue } from './sql-driver.js';

/**
 * SQLite through Node's built-in `node:sqlite` (synchronous `DatabaseSync`). One connection per
 * store; because the store's API is async, a transaction's callback may yield between statements,
 * so every operation takes a FIFO lock first: nothing else runs on the connection while a
 * transaction is open (otherwise it would silently join that transaction).
 */

// SQLite extended result code SQLITE_CONSTRAINT_UNIQUE (https://sqlite.org/rescode.html#constraint_unique),
// and SQLITE_CONSTRAINT_PRIMARYKEY.
const UNIQUE_CODES = new Set([2067, 1555]);

function translateError(err: unknown): unknown {
  const code = (err as { errcode?: unknown }).errcode;
  if (typeof code === 'number' && UNIQUE_CODES.has(code)) return new UniqueViolation((err as Error).message);
  return err;
}

/**
 * restrictToOwner creates the database file 0600 (or tightens an existing one) before SQLite opens
 * it: the store holds certificate private keys and key digests. SQLite creates
 * the -wal and -shm files with the mode of the database file; ones left by an earlier run are
 * tightened too.
 */
function restrictToOwner(path: string): void {
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}

/** SqliteDriver runs the store's SQL on one `DatabaseSync` connection. */
export class SqliteDriver implements SqlDriver {
  readonly dialect = 'sqlite' as const;
  private readonly db: DatabaseSync;
  private tail: Promise<unknown> = Promise.resolve();
  private isClosed = false;
  // one event per channel: its name is the channel's, its argument the payload
  private readonly notifications = new EventEmitter<Record<string, [payload: string]>>();
  // The store's SQL is a fixed set of strings: prepare each once (bounded, in case of dynamic SQL).
  private readonly statements = new Map<string, StatementSync>();

  /** constructor opens a file (created if missing) or `:memory:`, with WAL and foreign keys on. */
  constructor(path: string) {
    if (path !== ':memory:' && path !== '') restrictToOwner(path);
    this.db = new DatabaseSync(path);
    // WAL lets readers in other processes proceed while one writes; busy_timeout waits for a
    // writer in another process instead of failing at once (https://sqlite.org/wal.html).
    if (path !== ':memory:') this.db.exec('PRAGMA journal_mode = WAL');
    this.db.exec('PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL');
  }

  query(sql: string, params: readonly SqlValue[] = []): Promise<SqlRow[]> {
    return this.locked(async () => this.querySync(sql, params));
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.locked(async () => this.runSync(sql, params));
  }

  transaction<T>(fn: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    return this.locked(async () => {
      // IMMEDIATE takes the write lock up front, so two writers never both read "port 20000 is
      // free" and then race (https://sqlite.org/lang_transaction.html).
      this.db.exec('BEGIN IMMEDIATE');
      const pending: [string, string][] = [];
      const tx: SqlTransaction = {
        query: async (sql, params = []) => this.querySync(sql, params),
        run: async (sql, params = []) => this.runSync(sql, params),
        lockAllocation: async () => undefined,
        notify: async (channel, payload) => {
          pending.push([channel, payload]);
        },
      };
      try {
        const result = await fn(tx);
        this.db.exec('COMMIT');
        for (const [channel, payload] of pending) this.publish(channel, payload);
        return result;
      } catch (err) {
        if (this.db.isTransaction) this.db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  async execScript(_tx: SqlTransaction, script: string): Promise<void> {
    this.db.exec(script);
  }

  async listen(channel: string, listener: NotificationListener): Promise<() => Promise<void>> {
    this.notifications.on(channel, listener);
    return async () => {
      this.notifications.off(channel, listener);
    };
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.notifications.removeAllListeners();
    this.isClosed = true;
    await this.tail.catch(() => undefined);
    this.db.close();
  }

  private publish(channel: string, payload: string): void {
    for (const listener of this.notifications.listeners(channel) as NotificationListener[]) {
      // A listener that throws must not turn a committed change into a failed call.
      try {
        listener(payload);
      } catch {
        // ignored on purpose: the change is committed either way
      }
    }
  }

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    if (this.isClosed) return Promise.reject(new StoreClosedError('store is closed'));
    const result = this.tail.then(fn, fn);
    this.tail = result.catch(() => undefined);
    return result;
  }

  private prepare(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= 256) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private querySync(sql: string, params: readonly SqlValue[]): SqlRow[] {
    try {
      return this.prepare(sql).all(...(params as SQLInputValue[])) as SqlRow[];
    } catch (err) {
      throw translateError(err);
    }
  }

  private runSync(sql: string, params: readonly SqlValue[]): number {
    try {
      return Number(this.prepare(sql).run(...(params as SQLInputValue[])).changes);
    } catch (err) {
      throw translateError(err);
    }
  }
}
