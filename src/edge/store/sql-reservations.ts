import { randomBytes } from 'node:crypto';
import { appendAudit } from './audit.js';
import { StoreConflictError, StoreInvalidInputError, StoreNotFoundError, StorePoolExhaustedError } from './errors.js';
import { newRecordId } from './keys.js';
import { checkQuotaTx } from './sql-quotas.js';
import { addressInPool, checkPortPool, parseAddressPool, pickFreeAddress, pickFreePort } from './pools.js';
import type { AddressPool } from './pools.js';
import { toReservation } from './rows.js';
import { announceRevocations } from './revocations.js';
import type { SqlExecutor, SqlTransaction } from './sql-driver.js';
import type { Actor, CreateReservationInput, CreateReservationResult, DomainType, Labels, ReleaseResult, Reservation, ReservationKind, PortPool, PortSpec } from './store.js';
import { checkLabels, checkPort, checkPortSpecs, checkText, normalizeAddress, normalizeHostname } from './validate.js';

/**
 * Reservations inside one transaction: idempotent create (adopt what the account already holds),
 * allocation from pools under the pool's lock, release. A reservation is "held" while
 * `released_at` is NULL; the partial unique indexes make a held address unique.
 */

/** Target is a validated ReservationSpec: a fixed value, or a pool to allocate from. */
type Target =
  | { kind: 'domain'; value: string; domainType: DomainType }
  | { kind: 'tcp-port'; value: string; port: number }
  | { kind: 'tcp-port'; pool: PortPool }
  | { kind: 'address'; value: string }
  | { kind: 'address'; pool: AddressPool };

function resolveTarget(input: CreateReservationInput): Target {
  const spec = input.spec;
  switch (spec.kind) {
    case 'domain':
      if (spec.domainType !== 'subdomain' && spec.domainType !== 'custom') {
        throw new StoreInvalidInputError('spec.domainType', 'must be subdomain or custom');
      }
      return { kind: 'domain', value: normalizeDomainValue(spec.hostname), domainType: spec.domainType };
    case 'tcp-port':
      if ('pool' in spec) return { kind: 'tcp-port', pool: checkPortPool('spec.pool', spec.pool) };
      return { kind: 'tcp-port', value: String(checkPort('spec.port', spec.port)), port: spec.port };
    case 'address':
      if ('pool' in spec) return { kind: 'address', pool: parseAddressPool('spec.pool', spec.pool) };
      return { kind: 'address', value: normalizeAddress('spec.address', spec.address) };
    default:
      throw new StoreInvalidInputError('spec.kind', 'must be domain, tcp-port or address');
  }
}

const HELD = 'SELECT * FROM reservations WHERE released_at IS NULL';

/** normalizeDomainValue normalises a domain reservation's hostname: a DNS name, or `*.` and one (a wildcard). */
function normalizeDomainValue(hostname: string): string {
  return hostname.startsWith('*.') ? `*.${normalizeHostname('spec.hostname', hostname.slice(2))}` : normalizeHostname('spec.hostname', hostname);
}

/**
 * wildcardParentTx returns the domain a wildcard `*.D` stands under, which the account must hold
 * and (a custom domain) have verified: otherwise anyone could take the names under another
 * tenant's domain (docs/edge.md "Wildcard reservations").
 */
async function wildcardParentTx(tx: SqlExecutor, accountId: string, wildcard: string): Promise<Reservation> {
  const domain = wildcard.slice(2);
  const parent = await heldByValue(tx, 'domain', domain);
  if (parent === undefined || parent.accountId !== accountId) {
    throw new StoreInvalidInputError('spec.hostname', `a wildcard ${wildcard} needs ${domain} reserved by the same account first`);
  }
  if (!parent.verified) throw new StoreInvalidInputError('spec.hostname', `a wildcard ${wildcard} needs ${domain} verified first (POST /v1/reservations/{id}/verify)`);
  return parent;
}

/** heldReservation returns a reservation the account holds, or undefined. */
export async function heldReservation(tx: SqlExecutor, accountId: string, id: string): Promise<Reservation | undefined> {
  const [row] = await tx.query(`${HELD} AND account_id = ? AND id = ?`, [accountId, id]);
  return row && toReservation(row);
}

/** heldByValue returns whoever holds an address, across accounts. */
export async function heldByValue(tx: SqlExecutor, kind: ReservationKind, value: string): Promise<Reservation | undefined> {
  const [row] = await tx.query(`${HELD} AND kind = ? AND value = ?`, [kind, value]);
  return row && toReservation(row);
}

function satisfies(existing: Reservation, target: Target): boolean {
  if (existing.kind !== target.kind) return false;
  if ('value' in target) return existing.value === target.value;
  if (target.kind === 'tcp-port') {
    const port = Number(existing.value);
    return port >= target.pool.first && port <= target.pool.last;
  }
  return addressInPool(target.pool, existing.value);
}

function sameLabels(a: Labels, b: Labels): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function samePorts(a: readonly PortSpec[] | undefined, b: readonly PortSpec[] | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** portsColumn is the `ports` column of a reservation: its JSON list, or NULL for the edge's addressPorts. */
function portsColumn(ports: readonly PortSpec[] | undefined): string | null {
  return ports === undefined ? null : JSON.stringify(ports);
}

async function adopt(
  tx: SqlExecutor,
  existing: Reservation,
  target: Target,
  change: { name: string | null; labels: Labels | undefined; ports: PortSpec[] | undefined; now: number; actor: Actor },
): Promise<CreateReservationResult> {
  if (!satisfies(existing, target)) {
    throw new StoreConflictError(`name ${JSON.stringify(existing.name)} already holds ${existing.kind} ${existing.value}`);
  }
  if (change.name !== null && existing.name !== null && existing.name !== change.name) {
    throw new StoreConflictError(`${existing.kind} ${existing.value} is already held under another name`);
  }
  const name = change.name ?? existing.name;
  const labels = change.labels ?? existing.labels;
  // Ports the request names replace the held ones (the client says what its address serves now).
  const ports = change.ports ?? existing.ports;
  if (name === existing.name && sameLabels(labels, existing.labels) && samePorts(ports, existing.ports)) return { reservation: existing, created: false };
  await tx.run('UPDATE reservations SET name = ?, labels = ?, ports = ?, updated_at = ? WHERE id = ?', [
    name,
    JSON.stringify(labels),
    portsColumn(ports),
    change.now,
    existing.id,
  ]);
  await appendAudit(tx, {
    at: change.now,
    actor: change.actor,
    action: 'reservation.adopt',
    accountId: existing.accountId,
    targetKind: 'reservation',
    targetId: existing.id,
    detail: { kind: existing.kind, value: existing.value, name, labels, ...(ports !== undefined ? { ports } : {}) },
  });
  return { reservation: { ...existing, name, labels, ...(ports !== undefined ? { ports } : {}), updatedAt: change.now }, created: false };
}

async function allocate(tx: SqlTransaction, target: Target): Promise<string> {
  if ('value' in target) return target.value;
  // Serialise allocators of this kind (across edge nodes, for PostgreSQL) so that the free set
  // read below stays free until our insert commits.
  await tx.lockAllocation(`pool:${target.kind}`);
  if (target.kind === 'tcp-port') {
    const rows = await tx.query(`SELECT port FROM reservations WHERE released_at IS NULL AND kind = 'tcp-port' AND port BETWEEN ? AND ?`, [
      target.pool.first,
      target.pool.last,
    ]);
    const port = pickFreePort(target.pool, new Set(rows.map((r) => Number(r['port']))));
    if (port === undefined) throw new StorePoolExhaustedError(`no free TCP port in ${target.pool.first}-${target.pool.last}`);
    return String(port);
  }
  const rows = await tx.query(`SELECT value FROM reservations WHERE released_at IS NULL AND kind = 'address'`);
  const address = pickFreeAddress(target.pool, new Set(rows.map((r) => String(r['value']))));
  if (address === undefined) throw new StorePoolExhaustedError('no free address in the pool');
  return address;
}

/** createReservationTx reserves an address, or adopts the one the account already holds. */
export async function createReservationTx(
  tx: SqlTransaction,
  input: CreateReservationInput,
  now: number,
  actor: Actor,
): Promise<CreateReservationResult> {
  const target = resolveTarget(input);
  const name = input.name === undefined ? null : checkText('name', input.name, 253);
  const labels = input.labels === undefined ? undefined : checkLabels('labels', input.labels);
  if (input.ports !== undefined && target.kind !== 'address') throw new StoreInvalidInputError('ports', 'apply to address reservations only');
  const ports = input.ports === undefined ? undefined : checkPortSpecs('ports', input.ports);
  const change = { name, labels, ports, now, actor };
  if (name !== null) {
    const [row] = await tx.query(`${HELD} AND account_id = ? AND name = ?`, [input.accountId, name]);
    if (row) return adopt(tx, toReservation(row), target, change);
  }
  if ('value' in target) {
    const existing = await heldByValue(tx, target.kind, target.value);
    if (existing && existing.accountId !== input.accountId) {
      throw new StoreConflictError(`${target.kind} ${target.value} is reserved by another account`);
    }
    if (existing) return adopt(tx, existing, target, change);
  }
  const parent = target.kind === 'domain' && target.value.startsWith('*.') ? await wildcardParentTx(tx, input.accountId, target.value) : undefined;
  await checkQuotaTx(tx, input.accountId, 'reservations', input.quota, now);
  const value = await allocate(tx, target);
  const domainType = target.kind === 'domain' ? target.domainType : null;
  const reservation: Reservation = {
    id: newRecordId(),
    accountId: input.accountId,
    kind: target.kind,
    value,
    name,
    labels: labels ?? {},
    domainType,
    // A custom domain proves ownership by a DNS TXT record holding this token; it is public, not a
    // secret. A wildcard needs none: its parent domain, held and verified by the account, proved it.
    verificationToken: domainType === 'custom' && parent === undefined ? randomBytes(16).toString('base64url') : null,
    verified: target.kind !== 'domain' || domainType === 'subdomain' || parent !== undefined,
    createdAt: now,
    updatedAt: now,
    ...(ports !== undefined ? { ports } : {}),
  };
  await insertReservation(tx, reservation);
  await appendAudit(tx, {
    at: now,
    actor,
    action: 'reservation.create',
    accountId: input.accountId,
    targetKind: 'reservation',
    targetId: reservation.id,
    detail: { kind: reservation.kind, value, name, labels: reservation.labels, ...(ports !== undefined ? { ports } : {}) },
  });
  return { reservation, created: true };
}

async function insertReservation(tx: SqlExecutor, r: Reservation): Promise<void> {
  // A UniqueViolation here means another transaction took the same address (or name) between our
  // check and this insert; it propagates so the caller can retry once and adopt or conflict.
  await tx.run(
    `INSERT INTO reservations (id, account_id, kind, value, port, name, labels, domain_type, verification_token, verified, created_at, updated_at, ports)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      r.id,
      r.accountId,
      r.kind,
      r.value,
      r.kind === 'tcp-port' ? Number(r.value) : null,
      r.name,
      JSON.stringify(r.labels),
      r.domainType,
      r.verificationToken,
      r.verified ? 1 : 0,
      r.createdAt,
      r.updatedAt,
      portsColumn(r.ports),
    ],
  );
}

/**
 * setReservationPortsTx replaces an address reservation's ports. The row's write bumps the change
 * feed, so every edge node opens and closes the listeners that differ; the same list again writes
 * nothing (no feed entry, no audit event).
 */
export async function setReservationPortsTx(tx: SqlExecutor, accountId: string, id: string, input: readonly PortSpec[], now: number, actor: Actor): Promise<Reservation> {
  const reservation = await heldReservation(tx, accountId, id);
  if (!reservation) throw new StoreNotFoundError(`reservation ${id} not found`);
  if (reservation.kind !== 'address') throw new StoreInvalidInputError('id', 'is not an address reservation: only an address has ports of its own');
  const ports = checkPortSpecs('ports', input);
  if (samePorts(ports, reservation.ports)) return reservation;
  await tx.run('UPDATE reservations SET ports = ?, updated_at = ? WHERE id = ?', [portsColumn(ports), now, id]);
  await appendAudit(tx, {
    at: now,
    actor,
    action: 'reservation.ports',
    accountId,
    targetKind: 'reservation',
    targetId: id,
    detail: { value: reservation.value, ports, previous: reservation.ports ?? null },
  });
  return { ...reservation, ports, updatedAt: now };
}

/** releaseReservationTx releases a held reservation and revokes every live tunnel key bound to it. */
export async function releaseReservationTx(
  tx: SqlTransaction,
  accountId: string,
  id: string,
  now: number,
  actor: Actor,
): Promise<ReleaseResult> {
  const reservation = await heldReservation(tx, accountId, id);
  if (!reservation) throw new StoreNotFoundError(`reservation ${id} not found`);
  await tx.run('UPDATE reservations SET released_at = ?, updated_at = ? WHERE id = ?', [now, now, id]);
  const keys = await tx.query('SELECT id FROM tunnel_keys WHERE reservation_id = ? AND revoked_at IS NULL ORDER BY id', [id]);
  const revokedTunnelKeyIds = keys.map((k) => String(k['id']));
  await tx.run('UPDATE tunnel_keys SET revoked_at = ? WHERE reservation_id = ? AND revoked_at IS NULL', [now, id]);
  await announceRevocations(tx, revokedTunnelKeyIds);
  await appendAudit(tx, {
    at: now,
    actor,
    action: 'reservation.release',
    accountId,
    targetKind: 'reservation',
    targetId: id,
    detail: { kind: reservation.kind, value: reservation.value, revokedTunnelKeyIds },
  });
  // The wildcard under a released domain goes with it: it was granted on that domain's strength.
  const wildcard = reservation.kind === 'domain' && !reservation.value.startsWith('*.') ? await heldByValue(tx, 'domain', `*.${reservation.value}`) : undefined;
  if (wildcard !== undefined && wildcard.accountId === accountId) {
    const cascaded = await releaseReservationTx(tx, accountId, wildcard.id, now, actor);
    return { reservation, revokedTunnelKeyIds: [...revokedTunnelKeyIds, ...cascaded.revokedTunnelKeyIds] };
  }
  return { reservation, revokedTunnelKeyIds };
}

/** markDomainVerifiedTx records that a custom domain's TXT record was seen. */
export async function markDomainVerifiedTx(tx: SqlExecutor, accountId: string, id: string, now: number, actor: Actor): Promise<Reservation> {
  const reservation = await heldReservation(tx, accountId, id);
  if (!reservation) throw new StoreNotFoundError(`reservation ${id} not found`);
  if (reservation.kind !== 'domain') throw new StoreInvalidInputError('id', 'is not a domain reservation');
  if (reservation.verified) return reservation;
  await tx.run('UPDATE reservations SET verified = 1, updated_at = ? WHERE id = ?', [now, id]);
  await appendAudit(tx, { at: now, actor, action: 'reservation.verify', accountId, targetKind: 'reservation', targetId: id, detail: { value: reservation.value } });
  return { ...reservation, verified: true, updatedAt: now };
}

/** releaseUnverifiedDomainsTx releases held custom domains never verified and reserved before `createdBefore`. */
export async function releaseUnverifiedDomainsTx(tx: SqlTransaction, createdBefore: number, now: number, actor: Actor): Promise<ReleaseResult[]> {
  const rows = await tx.query(
    `SELECT id, account_id FROM reservations WHERE released_at IS NULL AND kind = 'domain' AND domain_type = 'custom' AND verified = 0 AND created_at < ? ORDER BY id`,
    [createdBefore],
  );
  const released: ReleaseResult[] = [];
  for (const row of rows) released.push(await releaseReservationTx(tx, String(row['account_id']), String(row['id']), now, actor));
  return released;
}
