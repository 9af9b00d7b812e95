import { formatTable, formatTime } from './table.js';

/**
 * What `tuna status` prints, from either view (the edge's control API, or the objects the operator
 * writes in a cluster). Every field is one the source really holds; what a view cannot know is
 * null (TUNNELS `?` in the table), never a guess.
 */

/** StatusBinding is one public binding as one view sees it. */
export interface StatusBinding {
  /** the binding id (docs/protocol.md "Binding ids") */
  readonly id: string;
  /** domain, tcp-port or address (edge view); host, tcp-port, address or udp-port (cluster view) */
  readonly kind: string;
  /** the public names: hostnames, `port`, `address:port/protocol` */
  readonly addresses: readonly string[];
  /** the objects it came from (`Kind namespace/name`), or the edge record's name and labels */
  readonly from: readonly string[];
  /** live tunnel connections to the edge; null when this view cannot see them */
  readonly tunnels: number | null;
  /** the edges those tunnels go to (the edge asked, or the operator's --edge) */
  readonly edges: readonly string[];
  /** why it is not (fully) served: each a reason and its message */
  readonly heldBack: readonly string[];
  /** epoch ms when its certificate stops being valid, where known */
  readonly certificateExpiresAt: number | null;
  /** epoch ms when the first of its tunnel keys expires, where known */
  readonly keyExpiresAt: number | null;
  /** the last failure reported for it (a listener that cannot bind, a Warning event), null if none */
  readonly lastError: string | null;
}

/** StatusReport is the whole answer of `tuna status`. */
export interface StatusReport {
  /** which view produced it */
  readonly view: 'edge' | 'cluster';
  /** where it was read: the edge URL, or the cluster's server URL */
  readonly source: string;
  /** the edge view: what GET /v1/edge says of the edge asked */
  readonly edge?: { readonly version: string; readonly baseDomain: string };
  readonly bindings: readonly StatusBinding[];
  /** notes on what this view could not read (printed on stderr with the table) */
  readonly notes: readonly string[];
}

/** STATUS_HEADERS are the columns of the table, in order. */
export const STATUS_HEADERS = ['BINDING', 'KIND', 'ADDRESSES', 'FROM', 'TUNNELS', 'EDGES', 'HELD-BACK', 'CERT-EXPIRES', 'KEY-EXPIRES', 'LAST-ERROR'] as const;

/**
 * renderStatusTable prints one row per binding (formatTable: `-` for an empty cell, `?` for
 * tunnels this view cannot see). Lists are joined with commas; a held-back reason or an error may
 * hold spaces, so they are the last columns.
 */
export function renderStatusTable(report: StatusReport): string {
  return formatTable(
    STATUS_HEADERS,
    report.bindings.map((b) => [
      b.id,
      b.kind,
      b.addresses.join(','),
      b.from.join(','),
      b.tunnels === null ? '?' : String(b.tunnels),
      b.edges.join(','),
      b.heldBack.join('; '),
      formatTime(b.certificateExpiresAt),
      formatTime(b.keyExpiresAt),
      b.lastError ?? '',
    ]),
  );
}

/** renderStatusJson prints the report as JSON (times as epoch ms, as the control API gives them). */
export function renderStatusJson(report: StatusReport): string {
  return JSON.stringify(report, null, 2);
}

/** sortBindings orders bindings by id, so the same state always prints the same way. */
export function sortBindings<B extends { readonly id: string }>(bindings: readonly B[]): B[] {
  return [...bindings].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
