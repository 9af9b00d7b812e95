import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { constants as h2constants } from 'node:http2';
import type { ClientHttp2Stream, OutgoingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { BodyLimit } from './body-limit.js';
import type { ClientFairness } from './client-fairness.js';
import type { BindingDirectory, EdgeBinding, EdgeTunnel, TunnelRegistry } from '../tunnels/index.js';
import type { EdgeMetrics, PublicFront } from '../metrics/index.js';
import type { EdgeAccessLog } from './access-log.js';
import { BAD_HOST } from './host-header.js';
import type { ForwardInfo } from './request-headers.js';
import type { PublicConnectionLimits } from './connection-guard.js';

/** EdgeLimits bound what one public request may cost the edge. */
export interface EdgeLimits {
  /** 413 above this many request body bytes; absent means no limit */
  maxRequestBodyBytes?: number;
  /** 431 when a request's header list is larger (RFC 6585 §5); default 16 KiB like Node's HTTP/1.1 parser */
  maxHeaderBytes: number;
  /** how long a request waits for a tunnel of its binding to (re)connect before 503 */
  tunnelWaitMs: number;
  /** deadlines, connection limits and HTTP/2 abuse budgets of the public listeners */
  connections: PublicConnectionLimits;
}

/** ConnectionInfo is what a public connection tells about every request on it. */
export interface ConnectionInfo {
  publicProtocol: 'http' | 'https';
  port: number;
  clientAddress: string;
  /** set on dedicated-address listeners: every request is this binding's, whatever its Host */
  binding?: EdgeBinding;
}

/** forwardInfo is what the edge adds to one request that arrived on a public connection. */
export function forwardInfo(info: ConnectionInfo, host: string, requestId: string): ForwardInfo {
  return {
    host,
    publicPort: info.port,
    publicProtocol: info.publicProtocol,
    clientAddress: info.clientAddress,
    requestId,
  };
}

/** FrontContext is what the public front ends share. */
export interface FrontContext {
  directory: BindingDirectory;
  registry: TunnelRegistry;
  metrics: EdgeMetrics;
  limits: EdgeLimits;
  /** requests in flight per (binding, client address) */
  fairness: ClientFairness;
  requestId(): string;
  /** isClosing turns true when the edge drains: HTTP/1.1 responses then say `Connection: close`. */
  isClosing(): boolean;
  /** how public HTTP/1.1 is forwarded (http1-splice.ts); absent: per request */
  http1Forwarding?: 'spliced' | 'per-request';
  /** the access log (access-log.ts); absent: none */
  accessLog?: EdgeAccessLog;
}

/** newRequestIdGenerator returns cheap unique ids: a random per-process prefix and a counter. */
export function newRequestIdGenerator(): () => string {
  const prefix = randomBytes(6).toString('hex');
  let counter = 0;
  return () => `${prefix}-${(++counter).toString(36)}`;
}

/** resolveHttpBinding finds the binding a request is for; tcp-port bindings never serve HTTP. */
export function resolveHttpBinding(ctx: FrontContext, info: ConnectionInfo, host: string): EdgeBinding | undefined {
  if (info.binding !== undefined) return info.binding;
  const binding = ctx.directory.byHost(host);
  return binding === undefined || binding.kind === 'tcp-port' ? undefined : binding;
}

/** findTunnel returns a live tunnel for the binding, waiting the configured time for one. */
export async function findTunnel(ctx: FrontContext, bindingId: string): Promise<EdgeTunnel | undefined> {
  return ctx.registry.pick(bindingId) ?? (await ctx.registry.waitFor(bindingId, ctx.limits.tunnelWaitMs));
}

/** Answers the edge gives itself: short, plain text, never echoing request data. */
export const REPLY = {
  unknownHost: [404, 'unknown host\n'],
  noTunnel: [503, 'no tunnel is connected for this host\n'],
  tunnelFailed: [502, 'the tunnel failed before the service answered\n'],
  badTarget: [400, 'bad request target\n'],
  tooLarge: [413, 'request body too large\n'],
  headersTooLarge: [431, 'request header fields too large\n'],
  notImplemented: [501, 'upgrade not supported\n'],
  connectNotAllowed: [405, 'CONNECT is not allowed here\n'],
  clientBusy: [429, 'too many requests in flight from this address to this host\n'],
} as const satisfies Record<string, readonly [number, string]>;

/** REPLY_REASONS name each of REPLY as tuna_edge_answers_total labels it (noTunnel: no-tunnel). */
const REPLY_REASONS = new Map<readonly [number, string], string>(
  Object.entries({ ...REPLY, badHost: BAD_HOST }).map(([name, reply]) => [reply, name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)]),
);

/** countReply counts one of REPLY: an answered request (by status, with its duration) and the edge's own answer (by reason). */
export function countReply(ctx: FrontContext, reply: readonly [number, string], exchange: object, front: PublicFront): void {
  ctx.metrics.countRequest(reply[0], exchange, front);
  ctx.metrics.countEdgeAnswer(REPLY_REASONS.get(reply) ?? 'other');
}

/** replyHttp1 sends one of REPLY on an HTTP/1.1 response. */
export function replyHttp1(ctx: FrontContext, res: ServerResponse, reply: readonly [number, string], close = false): void {
  countReply(ctx, reply, res, 'http1');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const headers: Record<string, string | number> = {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(reply[1]),
  };
  if (close) headers.connection = 'close';
  res.writeHead(reply[0], headers);
  res.end(reply[1]);
}

/** replyHttp2 sends one of REPLY on a public HTTP/2 stream. */
export function replyHttp2(ctx: FrontContext, stream: ServerHttp2Stream, reply: readonly [number, string]): void {
  countReply(ctx, reply, stream, 'http2');
  if (stream.destroyed) return;
  if (stream.headersSent) {
    stream.close();
    return;
  }
  stream.respond({ ':status': reply[0], 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(reply[1]) });
  stream.end(reply[1]);
}

/**
 * openTunnelStream opens one public request's stream on a tunnel, as both HTTP fronts do: the
 * body limit when one is configured and the request has a body, the stream counters, and an
 * error listener (a reset reaches the fronts through 'close' and rstCode).
 */
export function openTunnelStream(ctx: FrontContext, tunnel: EdgeTunnel, headers: OutgoingHttpHeaders, isBodyless: boolean): { upstream: ClientHttp2Stream; limiter: BodyLimit | undefined } {
  const upstream = tunnel.request(headers, { endStream: isBodyless });
  const limit = ctx.limits.maxRequestBodyBytes;
  const limiter = isBodyless || limit === undefined ? undefined : new BodyLimit(limit);
  ctx.metrics.streamsTotal++;
  ctx.metrics.streamsActive++;
  upstream.on('error', () => undefined);
  return { upstream, limiter };
}

/** IDEMPOTENT_METHODS may be sent again automatically (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/**
 * mayRetryElsewhere says whether a stream that ended with no response may be sent once more on
 * another tunnel of its binding. Only a bodyless request on its first attempt (the edge keeps no
 * copy of a body), and only when nothing can have been half done: the agent refused the stream
 * unprocessed (REFUSED_STREAM, a GOAWAY race, RFC 9113 §8.7), or the request is idempotent
 * (RFC 9110 §9.2.2) and its tunnel went away under it — the replica serving it stopped or its
 * connection broke, as in a rolling upgrade.
 */
export function mayRetryElsewhere(upstream: ClientHttp2Stream, tunnel: EdgeTunnel, method: string, isBodyless: boolean, attempt: number): boolean {
  if (!isBodyless || attempt !== 0) return false;
  if (upstream.rstCode === h2constants.NGHTTP2_REFUSED_STREAM) return true;
  return !tunnel.isAvailable && IDEMPOTENT_METHODS.has(method);
}

/** isRefused says the agent refused the stream unprocessed: RST_STREAM(REFUSED_STREAM), or a GOAWAY whose last stream id is below it (RFC 9113 §8.7). */
export function isRefused(upstream: ClientHttp2Stream): boolean {
  return upstream.rstCode === h2constants.NGHTTP2_REFUSED_STREAM;
}

/**
 * retryTunnel is the tunnel a retried request goes to: another one of the binding that is up now,
 * or the first to connect within `tunnelWaitMs` (the replica that replaces a stopping one); never
 * the one that failed it, even while that one still takes streams (it refused this one).
 */
export async function retryTunnel(ctx: FrontContext, bindingId: string, failed: EdgeTunnel): Promise<EdgeTunnel | undefined> {
  return ctx.registry.pick(bindingId, failed) ?? (await ctx.registry.waitFor(bindingId, ctx.limits.tunnelWaitMs, failed));
}

/**
 * retryFailedReply is the answer to a request whose retry found no tunnel: a refused request was
 * processed nowhere, so it is the binding's lack of a tunnel (503, as if it had waited from the
 * start); one whose tunnel went away under it may have been half done (502).
 */
export function retryFailedReply(upstream: ClientHttp2Stream): readonly [number, string] {
  return isRefused(upstream) ? REPLY.noTunnel : REPLY.tunnelFailed;
}
