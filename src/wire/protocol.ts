import type { IncomingHttpHeaders, OutgoingHttpHeaders, Settings } from 'node:http2';
import type { TunnelStreamContext } from './stream-handler.js';

/**
 * The tuna tunnel protocol, version 1 (docs/protocol.md is the normative text; this file holds its
 * constants). The agent dials the edge, upgrades an HTTP/1.1 request to `tuna-tunnel/1`, and from
 * then on the edge is the HTTP/2 client and the agent the HTTP/2 server on the same socket.
 */

/** TUNNEL_UPGRADE_TOKEN is the `Upgrade` token (RFC 9110 §7.8) that names protocol version 1. */
export const TUNNEL_UPGRADE_TOKEN = 'tuna-tunnel/1';

/** TUNNEL_PATH is the request target of the upgrade request. */
export const TUNNEL_PATH = '/.tuna/v1/tunnel';

/** HEADER_BINDING names the binding the agent asks to serve (upgrade request and 101 response). */
export const HEADER_BINDING = 'tuna-binding';

/** HEADER_CONNECTION_ID is an agent-chosen id for one connection, for logs on both sides. */
export const HEADER_CONNECTION_ID = 'tuna-connection-id';

/** HEADER_PUBLIC_PORT carries the edge port the public client connected to (stream header). */
export const HEADER_PUBLIC_PORT = 'tuna-public-port';

/** HEADER_PUBLIC_PROTOCOL carries what the client spoke at the edge: http, https, tls, tcp or udp. */
export const HEADER_PUBLIC_PROTOCOL = 'tuna-public-protocol';

/** HEADER_CLIENT_ADDRESS carries the public client's IP address as the edge saw it. */
export const HEADER_CLIENT_ADDRESS = 'tuna-client-address';

/** HEADER_REQUEST_ID carries the edge's request id on every stream (HTTP streams also get `x-request-id`). */
export const HEADER_REQUEST_ID = 'tuna-request-id';

/**
 * HEADER_HTTP1_LIMITS carries, on a spliced stream only (§4.5), the limits the edge applies to its
 * public HTTP/1.1 requests, for the agent to apply to every request of that connection:
 * `<max head bytes>,<head timeout ms>,<keep-alive idle ms>` (decimal integers). Fields past the
 * third are for later versions and ignored; agents before this field ignore it whole.
 */
export const HEADER_HTTP1_LIMITS = 'tuna-http1-limits';

/** TUNNEL_HEADERS lists every stream header the edge adds and the agent strips; the edge drops client copies. */
export const TUNNEL_HEADERS: readonly string[] = [
  'tuna-meta',
  HEADER_PUBLIC_PORT,
  HEADER_PUBLIC_PROTOCOL,
  HEADER_CLIENT_ADDRESS,
  HEADER_REQUEST_ID,
  HEADER_HTTP1_LIMITS,
];

/** TCP_AUTHORITY_HOST is the `:authority` host of CONNECT streams for plain TCP (RFC 6761 `.invalid`). */
export const TCP_AUTHORITY_HOST = 'tcp.invalid';

/** UDP_AUTHORITY_HOST is the `:authority` host of the CONNECT stream of one UDP flow (§4.6, RFC 6761 `.invalid`). */
export const UDP_AUTHORITY_HOST = 'udp.invalid';

/**
 * FEATURE_UDP says the agent takes UDP flows (one CONNECT stream per flow, `tuna-public-protocol:
 * udp`, length-prefixed datagrams, docs/protocol.md §4.6). The edge sends no flow to an agent that
 * did not name it: it drops the datagrams and counts them instead.
 */
export const FEATURE_UDP = 'udp';

/**
 * TunnelLimits are the HTTP/2 settings both ends apply to a tunnel connection. Defaults and why:
 * - stream window 1 MiB: a single stream reaches window/RTT, i.e. 1 GB/s at 1 ms and 20 MB/s at
 *   50 ms, instead of the 64 KiB default's 65 MB/s at 1 ms (RFC 9113 §6.9.2);
 * - connection window 16 MiB: up to 16 streams at full speed before they share, and the upper
 *   bound of data a slow reader can make the peer buffer per connection;
 * - maxSessionMemory 32 MB: nghttp2's own buffers (HPACK tables, queued frames) above which new
 *   streams are refused rather than the process growing;
 * - 1,000 concurrent streams and a 64 KiB header list: above what one edge asks per connection and
 *   large enough for real cookies, small enough that a peer cannot pin memory with headers.
 */
export interface TunnelLimits {
  streamWindowBytes: number;
  connectionWindowBytes: number;
  maxSessionMemoryMb: number;
  maxConcurrentStreams: number;
  maxHeaderListBytes: number;
}

/** DEFAULT_TUNNEL_LIMITS are the defaults explained on TunnelLimits. */
export const DEFAULT_TUNNEL_LIMITS: Readonly<TunnelLimits> = Object.freeze({
  streamWindowBytes: 1 << 20,
  connectionWindowBytes: 16 << 20,
  maxSessionMemoryMb: 32,
  maxConcurrentStreams: 1000,
  maxHeaderListBytes: 64 << 10,
});

/** tunnelSettings returns the HTTP/2 SETTINGS for a tunnel endpoint (RFC 9113 §6.5.2, RFC 8441 §3). */
export function tunnelSettings(limits: TunnelLimits, isAgent: boolean): Settings {
  return {
    initialWindowSize: limits.streamWindowBytes,
    maxConcurrentStreams: limits.maxConcurrentStreams,
    maxHeaderListSize: limits.maxHeaderListBytes,
    // a larger frame means fewer frames per MiB; 64 KiB keeps latency of interleaved streams low.
    maxFrameSize: 1 << 16,
    enablePush: false,
    // the agent is the server: it advertises extended CONNECT for WebSocket (RFC 8441 §3).
    ...(isAgent ? { enableConnectProtocol: true } : {}),
  };
}

/** PublicProtocol is what a client spoke at the edge. */
export type PublicProtocol = TunnelStreamContext['publicProtocol'];

// `udp` (§4.6) is sent only to agents that named FEATURE_UDP; an older agent reads it as a
// malformed stream context and answers 400, so even a misrouted flow ends cleanly.
const PUBLIC_PROTOCOLS: ReadonlySet<string> = new Set(['http', 'https', 'tls', 'tcp', 'udp']);

/** StreamMeta is the part of TunnelStreamContext the edge sends on each stream. */
export type StreamMeta = Omit<TunnelStreamContext, 'bindingId'>;

/**
 * HEADER_META carries the whole stream context in one field (docs/protocol.md §4): the compact
 * form the edge sends to an agent that told it FEATURE_COMPACT_META in the upgrade, instead of the
 * four `tuna-*` headers and, on HTTP streams, the five `x-forwarded-*`/`x-request-id` headers.
 */
export const HEADER_META = 'tuna-meta';

/**
 * HEADER_FEATURES lists, on the upgrade request (versions 1 and 2 alike), the optional features
 * the agent supports, comma-separated (docs/protocol.md §2.2, §4.5). An edge uses a feature on a
 * connection only when the agent named it there; unknown tokens are ignored.
 */
export const HEADER_FEATURES = 'tuna-features';

/** FEATURE_COMPACT_META: the agent reads HEADER_META and adds the forwarded headers itself. */
export const FEATURE_COMPACT_META = 'compact-meta';

/** ForwardMeta is StreamMeta plus, on HTTP streams, the host the edge forwards as `x-forwarded-host`. */
export interface ForwardMeta extends StreamMeta {
  /** set on HTTP and WebSocket streams (the forwarded headers are due); absent on raw CONNECT streams */
  host?: string;
}

/** featureTokens reads a HEADER_FEATURES value (comma-separated tokens, any case). */
export function featureTokens(value: string | string[] | undefined): Set<string> {
  const out = new Set<string>();
  if (value === undefined) return out;
  for (const part of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const token = part.trim().toLowerCase();
    if (token !== '') out.add(token);
  }
  return out;
}

/**
 * writeStreamMeta adds the stream context to an outgoing header object in the compact form:
 * `tuna-meta: <port>,<protocol>,<request id>,<client address>[,<host>]`. None of the fields can
 * hold a comma (a decimal, a token, the edge's own id, an IP address, a normal host name).
 * EdgeConnection expands it (expandStreamMeta) for an agent that does not read it.
 */
export function writeStreamMeta(headers: OutgoingHttpHeaders, meta: ForwardMeta): void {
  const base = `${meta.publicPort},${meta.publicProtocol},${meta.requestId},${meta.clientAddress}`;
  headers[HEADER_META] = meta.host === undefined ? base : `${base},${meta.host}`;
}

/**
 * addForwardHeaders writes what the backend sees of the edge: `x-forwarded-for` (the client
 * address appended to any value the client sent), `x-forwarded-proto`, `-host`, `-port` and
 * `x-request-id`, replacing client-sent ones. The edge did this itself before the compact form;
 * now the agent does it on arrival (or the edge, expanding for an older agent): same values.
 */
export function addForwardHeaders(headers: Record<string, unknown>, meta: StreamMeta, host: string): void {
  const prior = headers['x-forwarded-for'] as string | string[] | undefined;
  // append, as every proxy in the chain does (RFC 7239 §5.2 semantics for the de-facto header).
  headers['x-forwarded-for'] = prior === undefined ? meta.clientAddress : `${[prior].flat().join(', ')}, ${meta.clientAddress}`;
  headers['x-forwarded-proto'] = meta.publicProtocol;
  headers['x-forwarded-host'] = host;
  headers['x-forwarded-port'] = String(meta.publicPort);
  headers['x-request-id'] = meta.requestId;
}

/**
 * expandStreamMeta turns a compact HEADER_META back into the four `tuna-*` headers and, on HTTP
 * streams, the forwarded headers: what an agent that did not announce FEATURE_COMPACT_META reads.
 * Headers without HEADER_META (already expanded: a retry on another connection) are left as they are.
 */
export function expandStreamMeta(headers: OutgoingHttpHeaders): void {
  const raw = headers[HEADER_META];
  if (typeof raw !== 'string') return;
  delete headers[HEADER_META];
  const meta = parseCompactMeta(raw);
  if (meta === undefined) return;
  if (meta.host !== undefined) addForwardHeaders(headers, meta, meta.host);
  headers[HEADER_PUBLIC_PORT] = String(meta.publicPort);
  headers[HEADER_PUBLIC_PROTOCOL] = meta.publicProtocol;
  headers[HEADER_CLIENT_ADDRESS] = meta.clientAddress;
  headers[HEADER_REQUEST_ID] = meta.requestId;
}

/** parseCompactMeta reads a HEADER_META value, or undefined when it is malformed. */
export function parseCompactMeta(raw: string): ForwardMeta | undefined {
  const fields = raw.split(',');
  const meta: ForwardMeta | undefined = metaOfFields(fields);
  if (meta !== undefined && fields.length === 5) meta.host = fields[4]!;
  return meta;
}

/** metaOfFields reads the four (raw streams) or five (HTTP streams) fields of HEADER_META. */
function metaOfFields(fields: string[]): StreamMeta | undefined {
  if (fields.length !== 4 && fields.length !== 5) return undefined;
  const protocol = fields[1]!;
  const publicPort = parsePort(fields[0]!);
  if (publicPort === undefined || !PUBLIC_PROTOCOLS.has(protocol)) return undefined;
  return { publicPort, publicProtocol: protocol as PublicProtocol, clientAddress: fields[3]!, requestId: fields[2]! };
}

function parsePort(value: string): number | undefined {
  if (value === '' || value.length > 5) return undefined;
  const port = Number(value);
  return Number.isInteger(port) && port >= 0 && port <= 65535 ? port : undefined;
}

/**
 * takeStreamMeta removes the tunnel headers from a stream's headers and returns them, or undefined
 * when they are missing or malformed (the agent answers 400: only a broken edge sends that). The
 * compact form (HEADER_META) is read first; on an HTTP stream its reading adds the forwarded
 * headers (addForwardHeaders), so the data plane sees what the edge used to send. Without it the
 * four `tuna-*` headers of older edges are read.
 */
export function takeStreamMeta(headers: IncomingHttpHeaders): StreamMeta | undefined {
  const compact = headers[HEADER_META];
  if (compact !== undefined) {
    delete headers[HEADER_META];
    if (typeof compact !== 'string') return undefined;
    const fields = compact.split(',');
    const meta = metaOfFields(fields);
    if (meta !== undefined && fields.length === 5) addForwardHeaders(headers, meta, fields[4]!);
    return meta;
  }
  const port = headers[HEADER_PUBLIC_PORT];
  const protocol = headers[HEADER_PUBLIC_PROTOCOL];
  const client = headers[HEADER_CLIENT_ADDRESS];
  const requestId = headers[HEADER_REQUEST_ID];
  delete headers[HEADER_PUBLIC_PORT];
  delete headers[HEADER_PUBLIC_PROTOCOL];
  delete headers[HEADER_CLIENT_ADDRESS];
  delete headers[HEADER_REQUEST_ID];
  if (typeof port !== 'string' || typeof protocol !== 'string' || typeof client !== 'string') return undefined;
  if (typeof requestId !== 'string' || !PUBLIC_PROTOCOLS.has(protocol)) return undefined;
  const publicPort = Number(port);
  if (!Number.isInteger(publicPort) || publicPort < 0 || publicPort > 65535) return undefined;
  return { publicPort, publicProtocol: protocol as PublicProtocol, clientAddress: client, requestId };
}

/** FEATURE_SPLICED_HTTP1 says the agent takes whole public HTTP/1.1 connections on one stream (§4.5). */
export const FEATURE_SPLICED_HTTP1 = 'spliced-http1';

/** SPLICED_HTTP1_PROTOCOL is the extended CONNECT `:protocol` (RFC 8441 §4) of a spliced HTTP/1.1 connection. */
export const SPLICED_HTTP1_PROTOCOL = 'tuna-http1';

/** splicedRequestId is the id of the `n`th request (from 1) of a spliced connection whose stream id is `base`. */
export function splicedRequestId(base: string, n: number): string {
  return `${base}.${n.toString(36)}`;
}

/** Http1Limits are the values HEADER_HTTP1_LIMITS carries (the edge's `limits.maxHeaderBytes`, `limits.public.headersTimeoutMs`, `idleTimeoutMs`). */
export interface Http1Limits {
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
}

/** formatHttp1Limits writes a HEADER_HTTP1_LIMITS value (non-integers are truncated: the field holds decimals only). */
export function formatHttp1Limits(limits: Http1Limits): string {
  return [limits.maxHeaderBytes, limits.headersTimeoutMs, limits.idleTimeoutMs].map((n) => String(Math.max(0, Math.trunc(n)))).join(',');
}

const DECIMAL = /^[0-9]{1,12}$/;

/**
 * parseHttp1Limits reads a HEADER_HTTP1_LIMITS value, or undefined when it is absent or malformed
 * (fewer than three fields, a field that is not a decimal integer): the agent then keeps its
 * defaults. It checks syntax only; the agent clamps the values to its own bounds.
 */
export function parseHttp1Limits(value: string | string[] | undefined): Http1Limits | undefined {
  if (typeof value !== 'string') return undefined;
  const fields = value.split(',', 4).map((f) => f.trim());
  if (fields.length < 3 || !fields.slice(0, 3).every((f) => DECIMAL.test(f))) return undefined;
  return { maxHeaderBytes: Number(fields[0]), headersTimeoutMs: Number(fields[1]), idleTimeoutMs: Number(fields[2]) };
}
