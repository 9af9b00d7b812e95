import type { IncomingMessage } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import { normalizeHost, writeStreamMeta } from '../../wire/index.js';
import type { StreamMeta } from '../../wire/index.js';

/**
 * Header translation between the public side and tunnel streams. HTTP/2 forbids
 * connection-specific fields (RFC 9113 §8.2.2) and the edge must not forward hop-by-hop fields
 * (RFC 9110 §7.6.1); the edge also drops any client-sent `tuna-*` field so nobody can forge the
 * tunnel's own headers.
 */

const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'transfer-encoding',
  'upgrade',
  'host',
  'http2-settings',
]);

/** ForwardInfo is what the edge adds to a request (`x-forwarded-proto` is its public protocol). */
export interface ForwardInfo extends StreamMeta {
  publicProtocol: 'http' | 'https';
  host: string;
}

function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  const set = new Set<string>();
  for (const part of [value].flat().join(',').split(',')) {
    const token = part.trim().toLowerCase();
    if (token !== '') set.add(token);
  }
  return set;
}

function isDropped(name: string, listed: Set<string> | undefined): boolean {
  return HOP_BY_HOP.has(name) || name.startsWith('tuna-') || (listed?.has(name) ?? false);
}

/**
 * addForwarded adds the stream context in its compact form (`tuna-meta`, host included): the agent
 * adds the X-Forwarded-* and x-request-id the backend sees, and EdgeConnection expands it into
 * those headers for an agent that does not read the compact form (docs/protocol.md §4).
 */
function addForwarded(out: OutgoingHttpHeaders, info: ForwardInfo): void {
  writeStreamMeta(out, info);
}

/** http1RequestHeaders converts an HTTP/1.1 request head into tunnel stream headers. */
export function http1RequestHeaders(req: IncomingMessage, info: ForwardInfo, pseudo: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = pseudo;
  const listed = connectionTokens(req.headers.connection);
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    if (isDropped(name, listed)) continue;
    // TE may only carry "trailers" over HTTP/2 (RFC 9113 §8.2.2).
    if (name === 'te') {
      if (value.toLowerCase().includes('trailers')) out.te = 'trailers';
      continue;
    }
    if (name === 'x-request-id') continue;
    const prior = out[name];
    if (prior === undefined) out[name] = value;
    else if (Array.isArray(prior)) prior.push(value);
    else out[name] = [String(prior), value];
  }
  addForwarded(out, info);
  return out;
}

/** http2RequestHeaders converts a public HTTP/2 request's headers into tunnel stream headers. */
export function http2RequestHeaders(headers: IncomingHttpHeaders, info: ForwardInfo): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) {
    if (isDropped(name, undefined) || name === 'x-request-id') continue;
    out[name] = headers[name];
  }
  out[':authority'] = headers[':authority'] ?? info.host;
  addForwarded(out, info);
  return out;
}

/** http1ResponseHead flattens tunnel response headers into a raw [name, value, …] list for writeHead. */
export function http1ResponseHead(headers: IncomingHttpHeaders): string[] {
  const raw: string[] = [];
  for (const name in headers) {
    if (name.charCodeAt(0) === 58 /* ':' */) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) raw.push(name, v);
    else raw.push(name, value);
  }
  return raw;
}

/** http2ResponseHeaders copies tunnel response headers for a public HTTP/2 stream. */
export function http2ResponseHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) out[name] = headers[name];
  return out;
}

/**
 * hostWithoutPort returns the normal form of a Host/:authority value ('' when absent or malformed):
 * the one the data plane matches with (src/wire/host-name.ts), so `App.Example.COM.:8080` finds the
 * binding of `app.example.com` at the edge and its virtual host at the agent alike.
 */
export function hostWithoutPort(authority: string | undefined): string {
  return authority === undefined ? '' : (normalizeHost(authority) ?? '');
}
