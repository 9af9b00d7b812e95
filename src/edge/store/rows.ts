import * as t from 'io-ts';
import { anyMapping, decodeWith, jsonText, looseList, looseObject, looseString, required } from '../../codec/index.js';
import { StoreCorruptRowError } from './errors.js';
import type { SqlRow } from './sql-driver.js';
import { API_KEY_SCOPES, PORT_PROTOCOLS, TUNNEL_PROTOCOLS } from './store.js';
import type { Account, ApiKey, ApiKeyScope, AuditEvent, Certificate, PortProtocol, Reservation, TunnelKey, TunnelProtocol } from './store.js';

/**
 * Row → record decoders (io-ts, src/codec). PostgreSQL returns BIGINT as a string and SQLite as a
 * number, so integers accept both; JSON columns are parsed and checked here and nowhere else. A row
 * that does not decode throws StoreCorruptRowError naming the column (`labels.team: expected a
 * string`), not a TypeError in whoever reads the record. Columns not listed are not read.
 */

/** sqlInteger accepts a safe integer, or its decimal text (PostgreSQL BIGINT). */
const sqlInteger = new t.Type<number, number, unknown>(
  'integer',
  (u): u is number => Number.isSafeInteger(u),
  (u, c) => {
    const n = typeof u === 'string' && /^-?\d+$/.test(u) ? Number(u) : u;
    return Number.isSafeInteger(n) ? t.success(n as number) : t.failure(u, c, 'expected an integer');
  },
  t.identity,
);

function oneOf<V extends string>(values: readonly V[]): t.Type<V, V, unknown> {
  const allowed = new Set<string>(values);
  return new t.Type<V, V, unknown>(
    values.join(' | '),
    (u): u is V => typeof u === 'string' && allowed.has(u),
    (u, c) => (typeof u === 'string' && allowed.has(u) ? t.success(u as V) : t.failure(u, c, `expected one of ${values.join(', ')}`)),
    t.identity,
  );
}

const text = required(looseString);
const integer = required(sqlInteger);
const labels = required(jsonText(t.record(t.string, looseString)));

const accountRow = looseObject('accounts row', { id: text, name: text, created_at: integer, disabled_at: sqlInteger });

const apiKeyRow = looseObject('api_keys row', {
  id: text,
  account_id: text,
  name: text,
  scopes: required(jsonText(looseList(oneOf<ApiKeyScope>(API_KEY_SCOPES)))),
  created_at: integer,
  revoked_at: sqlInteger,
});

const portSpec = looseObject('port', { port: integer, protocol: required(oneOf<PortProtocol>(PORT_PROTOCOLS)) });

const reservationRow = looseObject('reservations row', {
  id: text,
  account_id: text,
  kind: required(oneOf(['domain', 'tcp-port', 'address'] as const)),
  value: text,
  name: looseString,
  labels,
  domain_type: oneOf(['subdomain', 'custom'] as const),
  verification_token: looseString,
  verified: integer,
  created_at: integer,
  updated_at: integer,
  // address reservations only (migration 7); NULL: the edge's configured addressPorts
  ports: jsonText(looseList(portSpec)),
});

const tunnelKeyRow = looseObject('tunnel_keys row', {
  id: text,
  account_id: text,
  reservation_id: text,
  protocol: required(oneOf<TunnelProtocol>(TUNNEL_PROTOCOLS)),
  max_connections: integer,
  expires_at: integer,
  labels,
  created_at: integer,
  rotated_at: sqlInteger,
  revoked_at: sqlInteger,
});

const certificateRow = looseObject('certificates row', { hostname: text, chain_pem: text, key_pem: text, not_after: integer, updated_at: integer });

const auditRow = looseObject('audit_log row', {
  seq: integer,
  at: integer,
  actor: text,
  action: text,
  account_id: looseString,
  target_kind: text,
  target_id: text,
  detail: required(jsonText(anyMapping)),
});

/** decodeRow decodes one row of `table`, or throws StoreCorruptRowError naming each bad column. */
function decodeRow<A>(codec: t.Decoder<unknown, A>, row: SqlRow, table: string): A {
  const result = decodeWith(codec, row);
  if (result.ok) return result.value;
  throw new StoreCorruptRowError(table, result.errors);
}

/** toAccount maps an `accounts` row. */
export function toAccount(row: SqlRow): Account {
  const r = decodeRow(accountRow, row, 'accounts');
  return { id: r.id, name: r.name, createdAt: r.created_at, disabledAt: r.disabled_at ?? null };
}

/** toApiKey maps an `api_keys` row (the hash stays behind). */
export function toApiKey(row: SqlRow): ApiKey {
  const r = decodeRow(apiKeyRow, row, 'api_keys');
  return { id: r.id, accountId: r.account_id, name: r.name, scopes: r.scopes, createdAt: r.created_at, revokedAt: r.revoked_at ?? null };
}

/** toReservation maps a `reservations` row. */
export function toReservation(row: SqlRow): Reservation {
  const r = decodeRow(reservationRow, row, 'reservations');
  return {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind,
    value: r.value,
    name: r.name ?? null,
    labels: r.labels,
    domainType: r.domain_type ?? null,
    verificationToken: r.verification_token ?? null,
    verified: r.verified === 1,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    // NULL (every reservation before migration 7, and any that names none): the edge's addressPorts
    ...(r.ports !== undefined && r.ports !== null ? { ports: r.ports.map((p) => ({ port: p.port, protocol: p.protocol })) } : {}),
  };
}

/** toTunnelKey maps a `tunnel_keys` row (the hashes stay behind). */
export function toTunnelKey(row: SqlRow): TunnelKey {
  const r = decodeRow(tunnelKeyRow, row, 'tunnel_keys');
  return {
    id: r.id,
    accountId: r.account_id,
    reservationId: r.reservation_id,
    protocol: r.protocol,
    maxConnections: r.max_connections,
    expiresAt: r.expires_at,
    labels: r.labels,
    createdAt: r.created_at,
    rotatedAt: r.rotated_at ?? null,
    revokedAt: r.revoked_at ?? null,
  };
}

/** toCertificate maps a `certificates` row. */
export function toCertificate(row: SqlRow): Certificate {
  const r = decodeRow(certificateRow, row, 'certificates');
  return { hostname: r.hostname, chainPem: r.chain_pem, keyPem: r.key_pem, notAfter: r.not_after, updatedAt: r.updated_at };
}

/** toAuditEvent maps an `audit_log` row. */
export function toAuditEvent(row: SqlRow): AuditEvent {
  const r = decodeRow(auditRow, row, 'audit_log');
  return {
    seq: r.seq,
    at: r.at,
    actor: r.actor,
    action: r.action,
    accountId: r.account_id ?? null,
    targetKind: r.target_kind,
    targetId: r.target_id,
    detail: r.detail,
  };
}
