/**
 * The small SQL surface the store needs from a database: parameterised queries, transactions and
 * an allocation lock. SQL text is written once with `?` placeholders; the PostgreSQL driver
 * renumbers them to `$1..$n`. Values are always bound, never spliced into the text.
 */

/** SqlValue is what may be bound to a placeholder. */
export type SqlValue = string | number | null;

/** SqlRow is one result row, column name to value (PostgreSQL BIGINTs arrive as strings). */
export type SqlRow = Record<string, unknown>;

/** SqlExecutor runs statements, inside or outside a transaction. */
export interface SqlExecutor {
  /** query runs one statement and returns its rows (empty for statements without RETURNING) */
  query(sql: string, params?: readonly SqlValue[]): Promise<SqlRow[]>;
  /** run runs one statement and returns how many rows it changed */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
}

/** SqlTransaction is an executor bound to one open transaction. */
export interface SqlTransaction extends SqlExecutor {
  /**
   * lockAllocation serialises allocators of one pool across every connection and every edge node
   * until the transaction ends: PostgreSQL takes a transaction-scoped advisory lock; SQLite's
   * `BEGIN IMMEDIATE` already holds the database's single write lock.
   */
  lockAllocation(name: string): Promise<void>;
  /**
   * notify publishes a payload on a channel once the transaction commits (never if it rolls back):
   * PostgreSQL NOTIFY reaches every edge node listening; SQLite's reaches this process.
   */
  notify(channel: string, payload: string): Promise<void>;
}

/** NotificationListener receives the payloads published on one channel. */
export type NotificationListener = (payload: string) => void;

/** SqlDriver is one database connection (SQLite) or pool (PostgreSQL). */
export interface SqlDriver {
  readonly dialect: 'sqlite' | 'postgres';
  query(sql: string, params?: readonly SqlValue[]): Promise<SqlRow[]>;
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /** transaction runs fn in one transaction: commit when it resolves, roll back when it throws */
  transaction<T>(fn: (tx: SqlTransaction) => Promise<T>): Promise<T>;
  /** execScript runs several statements without parameters (migrations only) */
  execScript(tx: SqlTransaction, script: string): Promise<void>;
  /** listen subscribes to a channel (a lower-case identifier); the returned function unsubscribes */
  listen(channel: string, listener: NotificationListener): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
