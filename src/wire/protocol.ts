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

/** HEADER_PUBLIC_PROTOCOL carries what the client spoke at the edge: http, https, tls or tcp. */
export const HEADER_PUBLIC_PROTOCOL = 'tuna-public-protocol';

/** HEADER_CLIENT_ADDRESS carries the public client's IP address as the edge saw it. */
export const HEADER_CLIENT_ADDRESS = 'tuna-client-address';

/** HEADER_REQUEST_ID carries the edge's request id on every stream (HTTP streams also get `x-request-id`). */
export const HEADER_REQUEST_ID = 'tuna-request-id';

/** TUNNEL_HEADERS lists every stream header the edge adds and the agent strips; the edge drops client copies. */
export const TUNNEL_HEADERS: readonly string[] = [
  HEADER_PUBLIC_PORT,
  HEADER_PUBLIC_PROTOCOL,
  HEADER_CLIENT_ADDRESS,
  HEADER_REQUEST_ID,
];

/** TCP_AUTHORITY_HOST is the `:authority` host of CONNECT streams for plain TCP (RFC 6761 `.invalid`). */
export const TCP_AUTHORITY_HOST = 'tcp.invalid';

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

const PUBLIC_PROTOCOLS: ReadonlySet<string> = new Set(['http', 'https', 'tls', 'tcp']);

/** StreamMeta is the part of TunnelStreamContext the edge sends on each stream. */
export type StreamMeta = Omit<TunnelStreamContext, 'bindingId'>;

/** writeStreamMeta adds the tunnel headers for one stream to an outgoing header object. */
export function writeStreamMeta(headers: OutgoingHttpHeaders, meta: StreamMeta): void {
  headers[HEADER_PUBLIC_PORT] = String(meta.publicPort);
  headers[HEADER_PUBLIC_PROTOCOL] = meta.publicProtocol;
  headers[HEADER_CLIENT_ADDRESS] = meta.clientAddress;
  headers[HEADER_REQUEST_ID] = meta.requestId;
}

/**
 * takeStreamMeta removes the tunnel headers from a stream's headers and returns them, or undefined
 * when they are missing or malformed (the agent answers 400: only a broken edge sends that).
 */
export function takeStreamMeta(headers: IncomingHttpHeaders): StreamMeta | undefined {
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

/**
 * HEADER_FEATURES lists, on the upgrade request (versions 1 and 2 alike), the optional features
 * the agent supports, comma-separated (docs/protocol.md §4.5). An edge uses a feature on a
 * connection only when the agent named it there; unknown tokens are ignored.
 */
export const HEADER_FEATURES = 'tuna-features';

/** FEATURE_SPLICED_HTTP1 says the agent takes whole public HTTP/1.1 connections on one stream (§4.5). */
export const FEATURE_SPLICED_HTTP1 = 'spliced-http1';

/** SPLICED_HTTP1_PROTOCOL is the extended CONNECT `:protocol` (RFC 8441 §4) of a spliced HTTP/1.1 connection. */
export const SPLICED_HTTP1_PROTOCOL = 'tuna-http1';

/** parseFeatures reads a `tuna-features` value into its lowercase tokens (empty without one). */
export function parseFeatures(value: string | string[] | undefined): ReadonlySet<string> {
  const tokens = new Set<string>();
  if (value === undefined) return tokens;
  for (const part of [value].flat().join(',').split(',')) {
    const token = part.trim().toLowerCase();
    if (token !== '') tokens.add(token);
  }
  return tokens;
}

/** splicedRequestId is the id of the `n`th request (from 1) of a spliced connection whose stream id is `base`. */
export function splicedRequestId(base: string, n: number): string {
  return `${base}.${n.toString(36)}`;
}
