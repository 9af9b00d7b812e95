import { StoreCorruptRowError, StoreInvalidInputError } from './errors.js';
import { toReservation } from './rows.js';
import type { SqlExecutor, SqlRow } from './sql-driver.js';
import { TUNNEL_PROTOCOLS } from './store.js';
import type { ServedChanges, ServedKey, TunnelProtocol } from './store.js';

/**
 * The change feed of reservations and tunnel keys (docs/edge-store.md "Change feed"): the edge's binding directory
 * reads what changed since the last sequence number it saw instead of every held reservation.
 *
 * One counter row, `store_changes.seq`, is bumped by triggers on every write to `reservations` and
 * `tunnel_keys`, and each written row is stamped with the new value in `change_seq`. Triggers, not
 * the store's code, so no write path (release, disable, expiry sweep, one added later) can forget.
 *
 * The counter is a row, not a PostgreSQL SEQUENCE, on purpose: a sequence hands out numbers in
 * the order transactions *ask*, and they may commit in another order, so a reader that saw 11 and
 * moved past it would miss a 10 that commits later. Bumping a row takes its lock until commit, so
 * the writers of these two tables commit in the order of their numbers, and any snapshot sees a
 * prefix of them. PostgreSQL bumps it in a BEFORE STATEMENT trigger, before the statement locks any
 * row, so every writer takes the counter first and rows second (no lock-order deadlock). SQLite has
 * one writer at a time and row triggers only: the same order holds trivially.
 */

/** SQLITE_TRIGGERS are the change-feed triggers of one SQLite table (exported for a migration that rebuilds the table). */
export const SQLITE_TRIGGERS = (table: string) => `
CREATE TRIGGER ${table}_change_insert AFTER INSERT ON ${table}
BEGIN
  UPDATE store_changes SET seq = seq + 1 WHERE id = 1;
  UPDATE ${table} SET change_seq = (SELECT seq FROM store_changes WHERE id = 1) WHERE rowid = NEW.rowid;
END;
CREATE TRIGGER ${table}_change_update AFTER UPDATE ON ${table} WHEN NEW.change_seq = OLD.change_seq
BEGIN
  UPDATE store_changes SET seq = seq + 1 WHERE id = 1;
  UPDATE ${table} SET change_seq = (SELECT seq FROM store_changes WHERE id = 1) WHERE rowid = NEW.rowid;
END;
`;

const POSTGRES_TRIGGERS = (table: string) => `
CREATE TRIGGER ${table}_change_next BEFORE INSERT OR UPDATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION store_changes_next();
CREATE TRIGGER ${table}_change_stamp BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION store_changes_stamp();
`;

const COMMON = (bigint: string) => `
CREATE TABLE store_changes (id INTEGER PRIMARY KEY CHECK (id = 1), seq ${bigint} NOT NULL);
INSERT INTO store_changes (id, seq) VALUES (1, 0);
ALTER TABLE reservations ADD COLUMN change_seq ${bigint} NOT NULL DEFAULT 0;
ALTER TABLE tunnel_keys ADD COLUMN change_seq ${bigint} NOT NULL DEFAULT 0;
CREATE INDEX reservations_change_seq ON reservations (change_seq);
CREATE INDEX tunnel_keys_change_seq ON tunnel_keys (change_seq);
`;

/** CHANGE_FEED_SQL is migration 5 per dialect: the counter, the stamped columns and the triggers. */
export const CHANGE_FEED_SQL: Readonly<Record<'sqlite' | 'postgres', string>> = {
  sqlite: `${COMMON('INTEGER')}${SQLITE_TRIGGERS('reservations')}${SQLITE_TRIGGERS('tunnel_keys')}`,
  postgres: `${COMMON('BIGINT')}
CREATE FUNCTION store_changes_next() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN UPDATE store_changes SET seq = seq + 1 WHERE id = 1; RETURN NULL; END $$;
CREATE FUNCTION store_changes_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN SELECT seq INTO NEW.change_seq FROM store_changes WHERE id = 1; RETURN NEW; END $$;
${POSTGRES_TRIGGERS('reservations')}${POSTGRES_TRIGGERS('tunnel_keys')}`,
};

const KEY_COLUMNS = 'id, reservation_id, protocol, expires_at, revoked_at';

function toServedKey(row: SqlRow): ServedKey {
  const protocol = String(row['protocol']);
  if (!(TUNNEL_PROTOCOLS as readonly string[]).includes(protocol)) throw new StoreCorruptRowError('tunnel_keys', [`protocol: expected one of ${TUNNEL_PROTOCOLS.join(', ')}`]);
  return {
    id: String(row['id']),
    reservationId: String(row['reservation_id']),
    protocol: protocol as TunnelProtocol,
    expiresAt: Number(row['expires_at']),
    isLive: row['revoked_at'] === null || row['revoked_at'] === undefined,
  };
}

/**
 * servedChangesWith reads the feed. Without `afterSeq`: every held reservation and every live,
 * unexpired key (the first load, or a reader ahead of the feed). With it: every reservation and key row written after it, held
 * or released, live or revoked, so the reader can drop what went. The counter is read first: a
 * row written after that read may come now and again next time, which applying a row's current
 * state twice makes harmless; a row written before it is always among the rows read after it.
 */
export async function servedChangesWith(db: SqlExecutor, afterSeq: number | undefined, now: number): Promise<ServedChanges> {
  if (afterSeq !== undefined && (!Number.isSafeInteger(afterSeq) || afterSeq < 0)) throw new StoreInvalidInputError('afterSeq', 'must be a non-negative integer');
  const [counter] = await db.query('SELECT seq FROM store_changes WHERE id = 1');
  const seq = Number(counter?.['seq'] ?? 0);
  // A feed behind the reader (a database restored from a backup) cannot be followed: start again.
  if (afterSeq === undefined || afterSeq > seq) {
    const reservations = await db.query('SELECT * FROM reservations WHERE released_at IS NULL ORDER BY kind, port, value');
    const keys = await db.query(`SELECT ${KEY_COLUMNS} FROM tunnel_keys WHERE revoked_at IS NULL AND expires_at > ? ORDER BY id`, [now]);
    return { seq, now, isFull: true, reservations: reservations.map((r) => ({ reservation: toReservation(r), isHeld: true })), tunnelKeys: keys.map(toServedKey) };
  }
  if (seq === afterSeq) return { seq, now, isFull: false, reservations: [], tunnelKeys: [] };
  const reservations = await db.query('SELECT * FROM reservations WHERE change_seq > ? ORDER BY change_seq, id', [afterSeq]);
  const keys = await db.query(`SELECT ${KEY_COLUMNS} FROM tunnel_keys WHERE change_seq > ? ORDER BY change_seq, id`, [afterSeq]);
  return {
    seq,
    now,
    isFull: false,
    reservations: reservations.map((r) => ({ reservation: toReservation(r), isHeld: r['released_at'] === null || r['released_at'] === undefined })),
    tunnelKeys: keys.map(toServedKey),
  };
}
