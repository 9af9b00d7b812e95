import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { HeaderModifier } from '../model/index.js';

/** Header handling shared by every proxy path. */

/**
 * hopByHopHeaders are connection-specific and never forwarded (RFC 9110 §7.6.1; `proxy-connection`
 * and `keep-alive` are the non-standard ones clients still send). HTTP/2 forbids them outright
 * (RFC 9113 §8.2.2), so leaking one to an h2 peer is a protocol error, not just a nuisance.
 */
export const hopByHopHeaders: ReadonlySet<string> = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'te',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

/** HeaderMap is a mutable header collection with lowercase names. */
export type HeaderMap = Record<string, string | string[]>;

/**
 * stripHopByHop copies `headers` without pseudo-headers, hop-by-hop headers and every header named
 * in `Connection`. `keepTeTrailers` keeps `te: trailers`, the one TE value HTTP/2 allows and gRPC
 * requires (RFC 9113 §8.2.2).
 */
export function stripHopByHop(headers: IncomingHttpHeaders, keepTeTrailers = false): HeaderMap {
  // Per request on the agent's hot path: no Set or entry array unless a Connection header names more.
  const named = connectionTokens(headers.connection);
  const out: HeaderMap = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || name.charCodeAt(0) === 58 /* ':' */) continue;
    const lower = name.toLowerCase();
    if (hopByHopHeaders.has(lower) || named?.has(lower) === true) continue;
    out[lower] = value;
  }
  if (keepTeTrailers && typeof headers.te === 'string' && /(^|,)\s*trailers\s*(;|,|$)/i.test(headers.te)) out.te = 'trailers';
  return out;
}

/** connectionTokens lists the header names a Connection header value names, lowercased. */
function connectionTokens(conn: string | string[] | undefined): Set<string> | undefined {
  if (conn === undefined || conn === '') return undefined;
  const named = new Set<string>();
  for (const v of Array.isArray(conn) ? conn : [conn])
    for (const token of v.split(',')) if (token.trim() !== '') named.add(token.trim().toLowerCase());
  return named;
}

/**
 * applyHeaderModifier applies a Gateway API HTTPHeaderFilter: `set` replaces, `add` appends (a
 * comma-joined value, RFC 9110 §5.3), `remove` deletes. Names are case-insensitive.
 */
export function applyHeaderModifier(headers: HeaderMap, mod: HeaderModifier): void {
  for (const { name, value } of mod.set) headers[name.toLowerCase()] = value;
  for (const { name, value } of mod.add) {
    const key = name.toLowerCase();
    const prior = headers[key];
    if (prior === undefined) headers[key] = value;
    else if (Array.isArray(prior)) headers[key] = [...prior, value];
    else headers[key] = key === 'set-cookie' ? [prior, value] : `${prior},${value}`;
  }
  for (const name of mod.remove) delete headers[name.toLowerCase()];
}

/**
 * appendForwardedFor makes the client address the last entry of `x-forwarded-for`. The edge
 * normally appended it already; the data plane appends only when it is missing, so the list never
 * names the client twice and a client cannot pose as another by sending its own header.
 */
export function appendForwardedFor(headers: HeaderMap, clientAddress: string): void {
  if (clientAddress === '') return;
  const prior = headers['x-forwarded-for'];
  const list = (Array.isArray(prior) ? prior.join(',') : (prior ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (list[list.length - 1] !== clientAddress) list.push(clientAddress);
  headers['x-forwarded-for'] = list.join(', ');
}

/** toOutgoing converts a HeaderMap to the shape node:http and node:http2 accept. */
export function toOutgoing(headers: HeaderMap): OutgoingHttpHeaders {
  return headers;
}
