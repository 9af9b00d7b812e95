import { StoreSchemaTooNewError } from './errors.js';
import { CHANGE_FEED_SQL, SQLITE_TRIGGERS } from './sql-changes.js';
import type { SqlDriver, SqlTransaction } from './sql-driver.js';

/**
 * Versioned schema migrations. Each migration has SQL per dialect; `schema_migrations` records
 * which versions ran. Starting is idempotent and safe when several edge nodes start at once: the
 * runner takes the migration lock (a PostgreSQL advisory lock, SQLite's write lock) before it reads
 * the applied versions, and applies each migration in the same transaction as its version row
 * (DDL is transactional in both databases), so a crash never leaves a half-applied version.
 * Append new migrations at the end; never edit one that has shipped.
 */

/** Migration is one schema version. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: Readonly<Record<SqlDriver['dialect'], string>>;
}

type Types = { time: string; auditSeq: string };

function initialSchema({ time, auditSeq }: Types): string {
  // Times are milliseconds since the epoch in a 64-bit integer column; labels and scopes are JSON
  // text. Reservations are soft-deleted (released_at) so tunnel keys and the audit trail keep their
  // reference; the partial unique indexes make an address unique among *held* reservations only.
  return `
CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at ${time} NOT NULL
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  name TEXT NOT NULL,
  scopes TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  created_at ${time} NOT NULL,
  revoked_at ${time}
);
CREATE INDEX api_keys_account ON api_keys (account_id);
CREATE TABLE reservations (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  kind TEXT NOT NULL CHECK (kind IN ('domain', 'tcp-port', 'address')),
  value TEXT NOT NULL,
  port INTEGER,
  name TEXT,
  labels TEXT NOT NULL,
  domain_type TEXT CHECK (domain_type IN ('subdomain', 'custom')),
  verification_token TEXT,
  verified INTEGER NOT NULL,
  created_at ${time} NOT NULL,
  updated_at ${time} NOT NULL,
  released_at ${time}
);
CREATE UNIQUE INDEX reservations_held_value ON reservations (kind, value) WHERE released_at IS NULL;
CREATE UNIQUE INDEX reservations_held_name ON reservations (account_id, name)
  WHERE released_at IS NULL AND name IS NOT NULL;
CREATE INDEX reservations_account ON reservations (account_id) WHERE released_at IS NULL;
CREATE INDEX reservations_port ON reservations (port) WHERE released_at IS NULL AND kind = 'tcp-port';
CREATE TABLE tunnel_keys (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  reservation_id TEXT NOT NULL REFERENCES reservations (id),
  protocol TEXT NOT NULL CHECK (protocol IN ('http', 'https', 'tls', 'tcp')),
  secret_hash TEXT NOT NULL,
  previous_hash TEXT,
  previous_valid_until ${time},
  max_connections INTEGER NOT NULL,
  expires_at ${time} NOT NULL,
  labels TEXT NOT NULL,
  created_at ${time} NOT NULL,
  rotated_at ${time},
  revoked_at ${time}
);
CREATE INDEX tunnel_keys_account ON tunnel_keys (account_id);
CREATE INDEX tunnel_keys_reservation ON tunnel_keys (reservation_id);
CREATE TABLE certificates (
  hostname TEXT PRIMARY KEY,
  chain_pem TEXT NOT NULL,
  key_pem TEXT NOT NULL,
  not_after ${time} NOT NULL,
  updated_at ${time} NOT NULL
);
CREATE TABLE audit_log (
  seq ${auditSeq},
  at ${time} NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  account_id TEXT,
  target_kind TEXT NOT NULL,
  target_id TEXT NOT NULL,
  detail TEXT NOT NULL
);
CREATE INDEX audit_log_account ON audit_log (account_id, seq);
`;
}

// The audit log is append-only in the database itself, not only by the store's API: a bug or a
// stray UPDATE cannot rewrite history.
const SQLITE_AUDIT_GUARD = `
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
`;

const POSTGRES_AUDIT_GUARD = `
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$;
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
`;

// UDP (docs/protocol.md §4.6): a tcp-port reservation's key may carry `udp`, which the CHECK of
// migration 1 refuses. PostgreSQL swaps the constraint (its default name, table_column_check);
// SQLite cannot alter a CHECK, so the table is rebuilt as SQLite's ALTER TABLE documentation
// says: new table, copy, drop, rename, then its indexes and change-feed triggers again. Nothing
// references tunnel_keys, so the drop breaks no foreign key; the copy keeps every change_seq.
const KEY_PROTOCOLS_WITH_UDP = `'http', 'https', 'tls', 'tcp', 'udp'`;

const SQLITE_KEYS_WITH_UDP = `
CREATE TABLE tunnel_keys_new (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id),
  reservation_id TEXT NOT NULL REFERENCES reservations (id),
  protocol TEXT NOT NULL CHECK (protocol IN (${KEY_PROTOCOLS_WITH_UDP})),
  secret_hash TEXT NOT NULL,
  previous_hash TEXT,
  previous_valid_until INTEGER,
  max_connections INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  labels TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  rotated_at INTEGER,
  revoked_at INTEGER,
  change_seq INTEGER NOT NULL DEFAULT 0
);
INSERT INTO tunnel_keys_new (id, account_id, reservation_id, protocol, secret_hash, previous_hash, previous_valid_until,
  max_connections, expires_at, labels, created_at, rotated_at, revoked_at, change_seq)
SELECT id, account_id, reservation_id, protocol, secret_hash, previous_hash, previous_valid_until,
  max_connections, expires_at, labels, created_at, rotated_at, revoked_at, change_seq FROM tunnel_keys;
DROP TABLE tunnel_keys;
ALTER TABLE tunnel_keys_new RENAME TO tunnel_keys;
CREATE INDEX tunnel_keys_account ON tunnel_keys (account_id);
CREATE INDEX tunnel_keys_reservation ON tunnel_keys (reservation_id);
CREATE INDEX tunnel_keys_change_seq ON tunnel_keys (change_seq);
${SQLITE_TRIGGERS('tunnel_keys')}`;

const POSTGRES_KEYS_WITH_UDP = `
ALTER TABLE tunnel_keys DROP CONSTRAINT tunnel_keys_protocol_check;
ALTER TABLE tunnel_keys ADD CONSTRAINT tunnel_keys_protocol_check CHECK (protocol IN (${KEY_PROTOCOLS_WITH_UDP}));
`;

/** MIGRATIONS is the ordered list of schema versions. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: {
      sqlite: initialSchema({ time: 'INTEGER', auditSeq: 'INTEGER PRIMARY KEY AUTOINCREMENT' }),
      postgres: initialSchema({ time: 'BIGINT', auditSeq: 'BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY' }),
    },
  },
  {
    version: 2,
    name: 'append-only audit log',
    sql: { sqlite: SQLITE_AUDIT_GUARD, postgres: POSTGRES_AUDIT_GUARD },
  },
  {
    // Admins disable accounts (`tuna accounts disable`); NULL is an active account.
    version: 3,
    name: 'disabled accounts',
    sql: { sqlite: 'ALTER TABLE accounts ADD COLUMN disabled_at INTEGER;', postgres: 'ALTER TABLE accounts ADD COLUMN disabled_at BIGINT;' },
  },
  {
    // An admin's per-account quota overrides; NULL follows the edge's default.
    version: 4,
    name: 'account quotas',
    sql: {
      sqlite: 'ALTER TABLE accounts ADD COLUMN max_reservations INTEGER; ALTER TABLE accounts ADD COLUMN max_tunnel_keys INTEGER;',
      postgres: 'ALTER TABLE accounts ADD COLUMN max_reservations INTEGER; ALTER TABLE accounts ADD COLUMN max_tunnel_keys INTEGER;',
    },
  },
  {
    // The binding directory follows a change sequence instead of reloading.
    version: 5,
    name: 'change feed of reservations and tunnel keys',
    sql: CHANGE_FEED_SQL,
  },
  {
    // The cap on concurrent tunnels opened with an account's `tunnels` API keys; NULL follows the edge's default.
    version: 6,
    name: 'account concurrent tunnel quota',
    sql: {
      sqlite: 'ALTER TABLE accounts ADD COLUMN max_concurrent_tunnels INTEGER;',
      postgres: 'ALTER TABLE accounts ADD COLUMN max_concurrent_tunnels INTEGER;',
    },
  },
  {
    // An address reservation names the ports the edge opens on it (JSON list of {port, protocol},
    // sorted); NULL (every reservation before this) follows the edge's configured addressPorts.
    version: 7,
    name: 'address reservation ports',
    sql: {
      sqlite: 'ALTER TABLE reservations ADD COLUMN ports TEXT;',
      postgres: 'ALTER TABLE reservations ADD COLUMN ports TEXT;',
    },
  },
  {
    version: 8,
    name: 'udp tunnel keys on tcp-port reservations',
    sql: { sqlite: SQLITE_KEYS_WITH_UDP, postgres: POSTGRES_KEYS_WITH_UDP },
  },
];

/** migrate brings the database to the newest version and returns the versions it applied. */
export async function migrate(
  driver: SqlDriver,
  now: number,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  return driver.transaction(async (tx) => {
    await tx.lockAllocation('schema-migrations');
    await driver.execScript(
      tx,
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
    );
    const applied = new Set((await tx.query('SELECT version FROM schema_migrations')).map((r) => Number(r['version'])));
    const newest = Math.max(0, ...migrations.map((m) => m.version));
    const unknown = [...applied].filter((v) => v > newest);
    if (unknown.length) {
      throw new StoreSchemaTooNewError(`database has schema version ${Math.max(...unknown)}; this tuna knows up to ${newest}`);
    }
    const ran: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      await applyOne(driver, tx, migration, now);
      ran.push(migration.version);
    }
    return ran;
  });
}

async function applyOne(driver: SqlDriver, tx: SqlTransaction, migration: Migration, now: number): Promise<void> {
  await driver.execScript(tx, migration.sql[driver.dialect]);
  await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
    migration.version,
    migration.name,
    now,
  ]);
}
