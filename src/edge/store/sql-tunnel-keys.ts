import { appendAudit } from './audit.js';
import { StoreInvalidInputError, StoreNotFoundError } from './errors.js';
import { formatToken, hashSecret, newRecordId, newSecret, parseToken, secretMatches } from './keys.js';
import { announceRevocations } from './revocations.js';
import { toTunnelKey } from './rows.js';
import { checkQuotaTx } from './sql-quotas.js';
import { heldReservation } from './sql-reservations.js';
import type { SqlExecutor, SqlRow, SqlTransaction } from './sql-driver.js';
import { TUNNEL_PROTOCOLS } from './store.js';
import type { Actor, Minted, MintTunnelKeyInput, ReservationKind, RotateTunnelKeyInput, TunnelKey, TunnelKeyCheck, TunnelProtocol } from './store.js';
import { checkLabels } from './validate.js';

/**
 * Tunnel keys (DESIGN "Keys and trust"): each can start exactly one tunnel — one reservation, one
 * protocol — with a connection cap and an expiry. Rotation issues a new secret under the same id;
 * with a grace period the previous secret keeps working until then, so HA replicas switch without
 * a gap (make-before-break).
 */

/** MAX_TUNNEL_CONNECTIONS bounds a key's connection cap. */
export const MAX_TUNNEL_CONNECTIONS = 1000;

// Which public protocols can be served on which kind of address: a port number carries raw TCP
// or UDP datagrams (a `udp` key opens the port's UDP socket, docs/protocol.md §4.6); a hostname
// needs HTTP or SNI (TLS) to be routed; a dedicated address owns every port it names, TCP and UDP.
const PROTOCOLS_FOR: Record<ReservationKind, readonly TunnelProtocol[]> = {
  'domain': ['http', 'https', 'tls'],
  'tcp-port': ['tcp', 'udp'],
  'address': TUNNEL_PROTOCOLS,
};

function checkExpiry(field: string, expiresAt: number, now: number): number {
  if (!Number.isSafeInteger(expiresAt) || expiresAt <= now) throw new StoreInvalidInputError(field, 'must be a time in the future');
  return expiresAt;
}

/** mintTunnelKeyTx creates a key for one held reservation and returns its token once. */
export async function mintTunnelKeyTx(tx: SqlExecutor, input: MintTunnelKeyInput, now: number, actor: Actor): Promise<Minted<TunnelKey>> {
  const reservation = await heldReservation(tx, input.accountId, input.reservationId);
  if (!reservation) throw new StoreNotFoundError(`reservation ${input.reservationId} not found`);
  if (!PROTOCOLS_FOR[reservation.kind].includes(input.protocol)) {
    throw new StoreInvalidInputError('protocol', `must be one of ${PROTOCOLS_FOR[reservation.kind].join(', ')} for a ${reservation.kind} reservation`);
  }
  await checkQuotaTx(tx, input.accountId, 'tunnelKeys', input.quota, now);
  const cap = input.maxConnections;
  if (!Number.isInteger(cap) || cap < 1 || cap > MAX_TUNNEL_CONNECTIONS) {
    throw new StoreInvalidInputError('maxConnections', `must be an integer 1..${MAX_TUNNEL_CONNECTIONS}`);
  }
  const key: TunnelKey = {
    id: newRecordId(),
    accountId: input.accountId,
    reservationId: reservation.id,
    protocol: input.protocol,
    maxConnections: cap,
    expiresAt: checkExpiry('expiresAt', input.expiresAt, now),
    labels: checkLabels('labels', input.labels),
    createdAt: now,
    rotatedAt: null,
    revokedAt: null,
  };
  const secret = newSecret();
  await tx.run(
    `INSERT INTO tunnel_keys (id, account_id, reservation_id, protocol, secret_hash, max_connections, expires_at, labels, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [key.id, key.accountId, key.reservationId, key.protocol, hashSecret(secret), cap, key.expiresAt, JSON.stringify(key.labels), now],
  );
  await appendAudit(tx, {
    at: now,
    actor,
    action: 'tunnel-key.mint',
    accountId: key.accountId,
    targetKind: 'tunnel-key',
    targetId: key.id,
    detail: { reservationId: key.reservationId, protocol: key.protocol, maxConnections: cap, expiresAt: key.expiresAt, labels: key.labels },
  });
  return { record: key, token: formatToken('tunnel', key.id, secret) };
}

async function liveKey(tx: SqlExecutor, accountId: string, id: string): Promise<TunnelKey> {
  const [row] = await tx.query('SELECT * FROM tunnel_keys WHERE account_id = ? AND id = ? AND revoked_at IS NULL', [accountId, id]);
  if (!row) throw new StoreNotFoundError(`tunnel key ${id} not found`);
  return toTunnelKey(row);
}

/** rotateTunnelKeyTx gives a live key a new secret and expiry; the old secret lasts `graceMs` more. */
export async function rotateTunnelKeyTx(
  tx: SqlExecutor,
  accountId: string,
  id: string,
  input: RotateTunnelKeyInput,
  now: number,
  actor: Actor,
): Promise<Minted<TunnelKey>> {
  const key = await liveKey(tx, accountId, id);
  const grace = input.graceMs ?? 0;
  if (!Number.isSafeInteger(grace) || grace < 0) throw new StoreInvalidInputError('graceMs', 'must be a non-negative integer');
  const expiresAt = checkExpiry('expiresAt', input.expiresAt, now);
  const secret = newSecret();
  await tx.run(
    `UPDATE tunnel_keys SET previous_hash = CASE WHEN ? > 0 THEN secret_hash ELSE NULL END, previous_valid_until = ?,
       secret_hash = ?, expires_at = ?, rotated_at = ? WHERE id = ?`,
    [grace, grace > 0 ? now + grace : null, hashSecret(secret), expiresAt, now, id],
  );
  await appendAudit(tx, { at: now, actor, action: 'tunnel-key.rotate', accountId, targetKind: 'tunnel-key', targetId: id, detail: { expiresAt, graceMs: grace } });
  return { record: { ...key, expiresAt, rotatedAt: now }, token: formatToken('tunnel', id, secret) };
}

/** revokeTunnelKeyTx revokes a live key and announces it; the edge must then close its connections. */
export async function revokeTunnelKeyTx(tx: SqlTransaction, accountId: string, id: string, now: number, actor: Actor): Promise<TunnelKey> {
  const key = await liveKey(tx, accountId, id);
  await tx.run('UPDATE tunnel_keys SET revoked_at = ?, previous_hash = NULL WHERE id = ?', [now, id]);
  await announceRevocations(tx, [id]);
  await appendAudit(tx, { at: now, actor, action: 'tunnel-key.revoke', accountId, targetKind: 'tunnel-key', targetId: id, detail: { reservationId: key.reservationId } });
  return { ...key, revokedAt: now };
}

/** checkTunnelKeyRow decides a presented secret against a stored row (with its account's `account_disabled_at`) at time `now`. */
export function checkTunnelKeyRow(row: SqlRow | undefined, secret: string, now: number): TunnelKeyCheck {
  if (!row) return { ok: false, reason: 'unknown' };
  const previousUntil = row['previous_valid_until'];
  const previousHash = row['previous_hash'];
  const matches =
    secretMatches(secret, String(row['secret_hash'])) ||
    (typeof previousHash === 'string' && previousUntil !== null && now < Number(previousUntil) && secretMatches(secret, previousHash));
  if (!matches) return { ok: false, reason: 'wrong-secret' };
  const key = toTunnelKey(row);
  if (key.revokedAt !== null) return { ok: false, reason: 'revoked' };
  if (now >= key.expiresAt) return { ok: false, reason: 'expired' };
  if (row['account_disabled_at'] !== null && row['account_disabled_at'] !== undefined) return { ok: false, reason: 'account-disabled' };
  return { ok: true, key };
}

/** authenticateTunnelKeyWith looks a token up by its public id and checks it. */
export async function authenticateTunnelKeyWith(db: SqlExecutor, token: string, now: number): Promise<TunnelKeyCheck> {
  const parsed = parseToken('tunnel', token);
  if (!parsed) return { ok: false, reason: 'malformed' };
  const [row] = await db.query(
    'SELECT tunnel_keys.*, accounts.disabled_at AS account_disabled_at FROM tunnel_keys JOIN accounts ON accounts.id = tunnel_keys.account_id WHERE tunnel_keys.id = ?',
    [parsed.id],
  );
  return checkTunnelKeyRow(row, parsed.secret, now);
}
