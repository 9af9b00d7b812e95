import { createHash } from 'node:crypto';
import pg from 'pg';
import type { PoolClient, PoolConfig } from 'pg';
import { StoreClosedError, StoreInvalidInputError, UniqueViolation } from './errors.js';
import type { SqlDriver, SqlRow, SqlTransaction, SqlValue } from './sql-driver.js';

/**
 * PostgreSQL through `pg`'s Pool: what several edge nodes share (DESIGN "Scale-out"). Allocation
 * is made atomic across nodes by a transaction-scoped advisory lock per pool plus the UNIQUE
 * constraints underneath, which stay the last word if anything else ever inserts.
 */

// PostgreSQL SQLSTATE 23505 unique_violation (Appendix A, "Class 23 — Integrity Constraint Violation").
const UNIQUE_VIOLATION = '23505';
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function translateError(err: unknown): unknown {
  if ((err as { code?: unknown }).code === UNIQUE_VIOLATION) return new UniqueViolation((err as Error).message);
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
  private isClosed = false;

  /** constructor creates the pool; connections open lazily on first use. */
  constructor(options: PostgresDriverOptions) {
    const config: PoolConfig = { connectionString: options.connectionString, max: options.maxConnections ?? 10 };
    if (options.schema !== undefined) {
      if (!SCHEMA_NAME.test(options.schema)) throw new StoreInvalidInputError('schema', 'must be a lower-case SQL identifier');
      // A startup parameter, not SQL text: the identifier was checked above all the same.
      config.options = `-c search_path=${options.schema}`;
    }
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
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await fn(transactionOn(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw err;
    } finally {
      client.release(broken);
    }
  }

  async execScript(tx: SqlTransaction, script: string): Promise<void> {
    // No parameters: pg uses the simple query protocol, which accepts several statements.
    await tx.query(script);
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await this.pool.end();
  }

  private assertOpen(): void {
    if (this.isClosed) throw new StoreClosedError('store is closed');
  }
}

function transactionOn(client: PoolClient): SqlTransaction {
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
  };
}
