import type { SqlRow } from './sql-driver.js';
import type {
  Account,
  ApiKey,
  ApiKeyScope,
  AuditEvent,
  Certificate,
  DomainType,
  Labels,
  Reservation,
  ReservationKind,
  TunnelKey,
  TunnelProtocol,
} from './store.js';

/**
 * Row → record mappers. PostgreSQL returns BIGINT as a string and SQLite as a number, so every
 * integer goes through Number(); JSON columns are parsed here and nowhere else.
 */

function text(row: SqlRow, column: string): string {
  return String(row[column]);
}

function optionalText(row: SqlRow, column: string): string | null {
  const value = row[column];
  return value === null || value === undefined ? null : String(value);
}

function int(row: SqlRow, column: string): number {
  return Number(row[column]);
}

function optionalInt(row: SqlRow, column: string): number | null {
  const value = row[column];
  return value === null || value === undefined ? null : Number(value);
}

function labels(row: SqlRow): Labels {
  return JSON.parse(text(row, 'labels')) as Labels;
}

/** toAccount maps an `accounts` row. */
export function toAccount(row: SqlRow): Account {
  return { id: text(row, 'id'), name: text(row, 'name'), createdAt: int(row, 'created_at'), disabledAt: optionalInt(row, 'disabled_at') };
}

/** toApiKey maps an `api_keys` row (the hash stays behind). */
export function toApiKey(row: SqlRow): ApiKey {
  return {
    id: text(row, 'id'),
    accountId: text(row, 'account_id'),
    name: text(row, 'name'),
    scopes: JSON.parse(text(row, 'scopes')) as ApiKeyScope[],
    createdAt: int(row, 'created_at'),
    revokedAt: optionalInt(row, 'revoked_at'),
  };
}

/** toReservation maps a `reservations` row. */
export function toReservation(row: SqlRow): Reservation {
  return {
    id: text(row, 'id'),
    accountId: text(row, 'account_id'),
    kind: text(row, 'kind') as ReservationKind,
    value: text(row, 'value'),
    name: optionalText(row, 'name'),
    labels: labels(row),
    domainType: optionalText(row, 'domain_type') as DomainType | null,
    verificationToken: optionalText(row, 'verification_token'),
    verified: int(row, 'verified') === 1,
    createdAt: int(row, 'created_at'),
    updatedAt: int(row, 'updated_at'),
  };
}

/** toTunnelKey maps a `tunnel_keys` row (the hashes stay behind). */
export function toTunnelKey(row: SqlRow): TunnelKey {
  return {
    id: text(row, 'id'),
    accountId: text(row, 'account_id'),
    reservationId: text(row, 'reservation_id'),
    protocol: text(row, 'protocol') as TunnelProtocol,
    maxConnections: int(row, 'max_connections'),
    expiresAt: int(row, 'expires_at'),
    labels: labels(row),
    createdAt: int(row, 'created_at'),
    rotatedAt: optionalInt(row, 'rotated_at'),
    revokedAt: optionalInt(row, 'revoked_at'),
  };
}

/** toCertificate maps a `certificates` row. */
export function toCertificate(row: SqlRow): Certificate {
  return {
    hostname: text(row, 'hostname'),
    chainPem: text(row, 'chain_pem'),
    keyPem: text(row, 'key_pem'),
    notAfter: int(row, 'not_after'),
    updatedAt: int(row, 'updated_at'),
  };
}

/** toAuditEvent maps an `audit_log` row. */
export function toAuditEvent(row: SqlRow): AuditEvent {
  return {
    seq: int(row, 'seq'),
    at: int(row, 'at'),
    actor: text(row, 'actor'),
    action: text(row, 'action'),
    accountId: optionalText(row, 'account_id'),
    targetKind: text(row, 'target_kind'),
    targetId: text(row, 'target_id'),
    detail: JSON.parse(text(row, 'detail')) as Record<string, unknown>,
  };
}
