import http from 'node:http';
import https from 'node:https';
import { edgeBindingId } from '../control-api/index.js';
import type { ControlClient, EdgeInfo, Reservation, TunnelKey } from '../control-api/index.js';
import { formatLabels } from './table.js';
import { sortBindings } from './status-report.js';
import type { StatusBinding, StatusReport } from './status-report.js';

/**
 * The edge's view of `tuna status`: what the control API says of the caller's account
 * (GET /v1/edge, /v1/reservations with each reservation's listeners, /v1/tunnel-keys), and the
 * live tunnels per binding from the edge's `/metrics` (`tuna_edge_tunnels{binding}`), which a
 * store-mode edge serves on its tunnel listener to an admin API key only (docs/edge.md). Without
 * it the tunnel counts are unknown, and the report says why.
 */

/** MetricsSource is where the edge's Prometheus exposition is read. */
export interface MetricsSource {
  readonly url: URL;
  /** sent as `Authorization: Bearer` (the control API key), or none for a `listen.metrics` listener */
  readonly apiKey?: string;
  readonly ca?: string;
}

/** MetricsAnswer is what reading `/metrics` gave: the text, or why there is none. */
export type MetricsAnswer = { readonly text: string } | { readonly unavailable: string };

/** EdgeStatusInputs are the answers the edge view is built from (collectEdgeStatus reads them). */
export interface EdgeStatusInputs {
  readonly source: string;
  readonly edge: EdgeInfo;
  readonly reservations: readonly Reservation[];
  readonly tunnelKeys: readonly TunnelKey[];
  readonly metrics: MetricsAnswer;
}

/** collectEdgeStatus asks the edge and builds the report. */
export async function collectEdgeStatus(client: ControlClient, source: string, metrics: MetricsSource): Promise<StatusReport> {
  const [{ edge }, { reservations }, { tunnelKeys }, text] = await Promise.all([
    client.describeEdge(),
    client.listReservations(),
    client.listTunnelKeys(),
    readMetrics(metrics),
  ]);
  return buildEdgeStatus({ source, edge, reservations, tunnelKeys, metrics: text });
}

/** buildEdgeStatus is the edge view of already-read answers: one binding per reservation. */
export function buildEdgeStatus(inputs: EdgeStatusInputs): StatusReport {
  const tunnels = 'text' in inputs.metrics ? tunnelsByBinding(inputs.metrics.text) : undefined;
  const notes = 'unavailable' in inputs.metrics ? [`tunnel connections unknown: ${inputs.metrics.unavailable}`] : [];
  const keysOf = new Map<string, TunnelKey[]>();
  for (const k of inputs.tunnelKeys) keysOf.set(k.reservationId, [...(keysOf.get(k.reservationId) ?? []), k]);
  const bindings = inputs.reservations.map((r): StatusBinding => {
    const id = edgeBindingId(r);
    const keys = keysOf.get(r.id) ?? [];
    const failed = (r.status?.listeners ?? []).filter((l) => l.state === 'failed');
    const heldBack = [
      ...(r.kind === 'domain' && !r.verified ? [`Unverified: the DNS TXT record _tuna-challenge.${r.value} must hold the verification token`] : []),
      ...failed.map((l) => `ListenerFailed: ${l.address}:${l.port}/${l.protocol}`),
    ];
    const lastFailure = failed[0];
    return {
      id,
      kind: r.kind,
      addresses: addressesOf(r),
      from: [...(r.name !== null ? [r.name] : []), ...(Object.keys(r.labels).length > 0 ? [formatLabels(r.labels)] : [])],
      tunnels: tunnels === undefined ? null : (tunnels.get(id) ?? 0),
      edges: [inputs.source],
      heldBack,
      // the control API does not tell the edge's certificates (ACME or its wildcard)
      certificateExpiresAt: null,
      keyExpiresAt: keys.length === 0 ? null : Math.min(...keys.map((k) => k.expiresAt)),
      lastError: lastFailure === undefined ? null : `${lastFailure.error ?? 'failed'} (${lastFailure.failures} attempts failed in a row)`,
    };
  });
  return { view: 'edge', source: inputs.source, edge: { version: inputs.edge.version, baseDomain: inputs.edge.baseDomain }, bindings: sortBindings(bindings), notes };
}

/** addressesOf names a reservation's public addresses: the hostname, the port, or each `address:port/protocol`. */
function addressesOf(r: Reservation): string[] {
  if (r.kind !== 'address' || r.ports === undefined) return [r.value];
  return r.ports.map((p) => `${r.value}:${p.port}/${p.protocol}`);
}

/**
 * tunnelsByBinding sums the `tuna_edge_tunnels` series of a Prometheus text exposition by their
 * `binding` label (an edge of several workers labels each series with its worker as well).
 */
export function tunnelsByBinding(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^tuna_edge_tunnels\{(.*)\}\s+(\S+)\s*$/.exec(line);
    if (!m) continue;
    const binding = labelValue(m[1]!, 'binding');
    const value = Number(m[2]);
    if (binding === undefined || !Number.isFinite(value)) continue;
    out.set(binding, (out.get(binding) ?? 0) + value);
  }
  return out;
}

/** labelValue reads one label of a series' label set, with the exposition format's escapes (\\, \", \n). */
function labelValue(labels: string, name: string): string | undefined {
  for (const m of labels.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
    if (m[1] === name) return m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return undefined;
}

const METRICS_TIMEOUT_MS = 10_000;

/** readMetrics GETs the exposition; a refusal (401: not an admin key), a 404 or no answer is reported, not thrown. */
export function readMetrics(source: MetricsSource): Promise<MetricsAnswer> {
  const headers: http.OutgoingHttpHeaders = source.apiKey === undefined ? {} : { authorization: `Bearer ${source.apiKey}` };
  const options: https.RequestOptions = { method: 'GET', headers, timeout: METRICS_TIMEOUT_MS, ...(source.ca !== undefined ? { ca: source.ca } : {}) };
  return new Promise((resolve) => {
    const req = (source.url.protocol === 'https:' ? https : http).request(source.url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => resolve({ unavailable: `${source.url.origin}${source.url.pathname}: ${err.message}` }));
      res.on('end', () => {
        if (res.statusCode === 200) return resolve({ text: Buffer.concat(chunks).toString('utf8') });
        const why = res.statusCode === 401 ? 'the edge serves /metrics to an admin API key only (or pass --metrics URL of its metrics listener)' : `it answered ${res.statusCode ?? 0}`;
        resolve({ unavailable: `${source.url.origin}${source.url.pathname}: ${why}` });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${METRICS_TIMEOUT_MS / 1000} s`)));
    // the error's code says enough; the request (and its Authorization header) is never printed
    req.on('error', (err) => resolve({ unavailable: `${source.url.origin}${source.url.pathname}: ${(err as NodeJS.ErrnoException).code ?? err.message}` }));
    req.end();
  });
}
