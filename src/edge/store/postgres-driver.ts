import { createHash } from 'node:crypto';
import pg from 'pg';
import type { PoolClient, PoolConfig } from 'pg';
import { StoreClosedError, StoreInvalidInputError, StoreUnavailableError, UniqueViolation } from './errors.js';
import type { NotificationListener, SqlDriver, SqlRow, SqlTransaction, SqlValue } from './sql-driver.js';

/**
 * PostgreSQL through `pg`'s Pool: what several edge nodes share (DESIGN "Scale-out"). Allocation
 * is made atomic across nodes by a transaction-scoped advisory lock per pool plus the UNIQUE
 * constraints underneath, which stay the last word if anything else ever inserts.
 */

// PostgreSQL SQLSTATE 23505 unique_violation (Appendix A, "Class 23 — Integrity Constraint Violation").
const UNIQUE_VIOLATION = '23505';
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

// The failures of reaching the server, not of the statement: the socket's (refused, reset, timed
// out, no route), pg's own when the connection ended under a query, and SQLSTATE classes 08
// (connection exception) and 57P (the server shutting down, crashed, or starting up).
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const UNREACHABLE_MESSAGE = /^Connection terminated|^Client has encountered a connection error|^timeout exceeded when trying to connect/;

function translateError(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (code === UNIQUE_VIOLATION) return new UniqueViolation((err as Error).message);
  const message = err instanceof Error ? err.message : String(err);
  const isUnreachable =
    (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || code.startsWith('08') || code.startsWith('57P'))) || UNREACHABLE_MESSAGE.test(message);
  if (isUnreachable) return new StoreUnavailableError(`the database is unreachable: ${message}`, { cause: err });
  return err;
}

/** toPositional renumbers `?` placeholders to PostgreSQL's `$1..$n` (our SQL has no `?` in literals). */
export function toPositional(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** advisoryKey maps a lock name to the signed 64-bit key pg_advisory_xact_lock takes. */
export function advisoryKey(name: string): string {
  return createHash('sha256').update(`tuna:${name}`).digest().readBigInt64BE(0).toString();
}

/** PostgresDriverOptions configures the pool; `schema` keeps every table in one schema (tests, shared servers). */
export interface PostgresDriverOptions {
  readonly connectionString: string;
  readonly schema?: string;
  readonly maxConnections?: number;
}

/** PostgresDriver runs the store's SQL on a `pg.Pool`. */
export class PostgresDriver implements SqlDriver {
  readonly dialect = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly config: PoolConfig;
  private readonly channelSuffix: string;
  private readonly listeners = new Set<() => Promise<void>>();
  private isClosed = false;

  /** constructor creates the pool; connections open lazily on first use. */
  constructor(options: PostgresDriverOptions) {
    const config: PoolConfig = { connectionString: options.connectionString, max: options.maxConnections ?? 10 };
    if (options.schema !== undefined) {
      if (!SCHEMA_NAME.test(options.schema)) throw new StoreInvalidInputError('schema', 'must be a lower-case SQL identifier');
      // A startup parameter, not SQL text: the identifier was checked above all the same.
      config.options = `-c search_path=${options.schema}`;
    }
    this.config = config;
    // Channels are per database, not per schema: a schema's name keeps two stores sharing a
    // server (tests, several edges on one cluster) from hearing each other.
    this.channelSuffix = options.schema === undefined ? '' : `_${options.schema}`;
    this.pool = new pg.Pool(config);
    // An idle client's error (server restart) must not crash the edge; the next query reconnects.
    this.pool.on('error', () => undefined);
  }

  async query(sql: string, params: readonly SqlValue[] = []): Promise<SqlRow[]> {
    this.assertOpen();
    try {
      return (await this.pool.query(toPositional(sql), params as SqlValue[])).rows as SqlRow[];
    } catch (err) {
      throw translateError(err);
    }
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    this.assertOpen();
    try {
      return (await this.pool.query(toPositional(sql), params as SqlValue[])).rowCount ?? 0;
    } catch (err) {
      throw translateError(err);
    }
  }

  async transaction<T>(fn: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    this.assertOpen();
    const client = await this.pool.connect().catch((err: unknown) => {
      throw translateError(err);
    });
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await fn(transactionOn(client, (channel) => this.channelName(channel)));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      // BEGIN and COMMIT are sent here, not through the transaction's query
      throw translateError(err);
    } finally {
      client.release(broken);
    }
  }

  async execScript(tx: SqlTransaction, script: string): Promise<void> {
    // No parameters: pg uses the simple query protocol, which accepts several statements.
    await tx.query(script);
  }

  async listen(channel: string, listener: NotificationListener): Promise<() => Promise<void>> {
    this.assertOpen();
    const stop = await listenOn(this.config, this.channelName(channel), listener);
    const unsubscribe = async () => {
      this.listeners.delete(unsubscribe);
      await stop();
    };
    this.listeners.add(unsubscribe);
    return unsubscribe;
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await Promise.all([...this.listeners].map((unsubscribe) => unsubscribe()));
    await this.pool.end();
  }

  private channelName(channel: string): string {
    const name = `${channel}${this.channelSuffix}`;
    if (!SCHEMA_NAME.test(name)) throw new StoreInvalidInputError('channel', 'must be a lower-case SQL identifier');
    return name;
  }

  private assertOpen(): void {
    if (this.isClosed) throw new StoreClosedError('store is closed');
  }
}

function transactionOn(client: PoolClient, channelName: (channel: string) => string): SqlTransaction {
  const query = async (sql: string, params: readonly SqlValue[] = []) => {
    try {
      return await client.query(params.length ? toPositional(sql) : sql, params as SqlValue[]);
    } catch (err) {
      throw translateError(err);
    }
  };
  return {
    query: async (sql, params) => (await query(sql, params)).rows as SqlRow[],
    run: async (sql, params) => (await query(sql, params)).rowCount ?? 0,
    lockAllocation: async (name) => {
      await query('SELECT pg_advisory_xact_lock(?::bigint)', [advisoryKey(name)]);
    },
    // NOTIFY inside a transaction is delivered at commit and dropped on rollback (SQL NOTIFY docs).
    notify: async (channel, payload) => {
      await query('SELECT pg_notify(?, ?)', [channelName(channel), payload]);
    },
  };
}

/**
 * listenOn holds one dedicated connection that LISTENs on a channel; if the connection drops it
 * reconnects (1 s → 30 s backoff) until stopped. Notifications sent while it was down are lost,
 * so a listener that must not miss one re-checks its state after a reconnect.
 */
async function listenOn(config: PoolConfig, channel: string, listener: NotificationListener): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let isStopped = false;
  let delay = 1000;
  let timer: NodeJS.Timeout | undefined;
  const retry = (): void => {
    if (isStopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      connect().catch(retry);
    }, delay);
    delay = Math.min(delay * 2, 30_000);
  };
  const connect = async (): Promise<void> => {
    const next = new pg.Client(config);
    next.on('notification', (message) => {
      if (message.channel !== channel || message.payload === undefined) return;
      try {
        listener(message.payload);
      } catch {
        // a listener's failure must not kill the connection
      }
    });
    next.on('error', () => {
      void next.end().catch(() => undefined);
      if (client === next) client = undefined;
      retry();
    });
    await next.connect();
    // The channel name was checked to be a plain identifier; LISTEN takes no parameters.
    await next.query(`LISTEN "${channel}"`);
    if (isStopped) {
      await next.end();
      return;
    }
    client = next;
    delay = 1000;
  };
  await connect();
  return async () => {
    isStopped = true;
    if (timer) clearTimeout(timer);
    await client?.end().catch(() => undefined);
  };
}
