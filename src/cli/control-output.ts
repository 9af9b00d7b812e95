import type { Account, ApiKey, Reservation, TunnelKey } from '../control-api/index.js';
import type { CliIo } from './io.js';
import { formatLabels, formatTable, formatTime } from './table.js';

/** How the control commands print records: an aligned table by default, JSON with `--json`. */

/** printResult writes `json` (pretty-printed) or the table. */
export function printResult(io: CliIo, isJson: boolean, json: unknown, table: () => string): void {
  io.out(isJson ? JSON.stringify(json, null, 2) : table());
}

/** printTokenWarning says, on stderr, that the key just printed is shown this once. */
export function printTokenWarning(io: CliIo): void {
  io.err('warning: this is the only time the key is shown; store it now in a secret store (the edge keeps only its hash)');
}

/** accountTable renders accounts; STATUS is active or disabled. */
export function accountTable(accounts: readonly Account[]): string {
  return formatTable(
    ['ID', 'NAME', 'STATUS', 'CREATED', 'DISABLED'],
    accounts.map((a) => [a.id, a.name, a.disabledAt === null ? 'active' : 'disabled', formatTime(a.createdAt), formatTime(a.disabledAt)]),
  );
}

/** apiKeyTable renders API keys. */
export function apiKeyTable(keys: readonly ApiKey[]): string {
  return formatTable(
    ['ID', 'NAME', 'SCOPES', 'ACCOUNT', 'CREATED'],
    keys.map((k) => [k.id, k.name, k.scopes.join(','), k.accountId, formatTime(k.createdAt)]),
  );
}

/** tunnelKeyTable renders tunnel keys. */
export function tunnelKeyTable(keys: readonly TunnelKey[]): string {
  return formatTable(
    ['ID', 'RESERVATION', 'PROTOCOL', 'MAX-CONNECTIONS', 'EXPIRES', 'LABELS'],
    keys.map((k) => [k.id, k.reservationId, k.protocol, String(k.maxConnections), formatTime(k.expiresAt), formatLabels(k.labels)]),
  );
}

/** reservationStatus is a reservation's state in a word: custom domains wait for their TXT record. */
export function reservationStatus(r: Reservation): string {
  return r.kind === 'domain' && !r.verified ? 'unverified' : 'ready';
}

/** reservationTable renders reservations; `extra` adds one column (created/adopted, revoked keys). */
export function reservationTable(rows: readonly Reservation[], extra?: { header: string; cell: (r: Reservation) => string }): string {
  const headers = ['ID', 'KIND', 'VALUE', 'STATUS', 'NAME', 'LABELS', ...(extra ? [extra.header] : [])];
  return formatTable(
    headers,
    rows.map((r) => [r.id, r.kind, r.value, reservationStatus(r), r.name ?? '', formatLabels(r.labels), ...(extra ? [extra.cell(r)] : [])]),
  );
}
