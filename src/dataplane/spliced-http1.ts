import http, { STATUS_CODES } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { Duplex } from 'node:stream';
import { HEADER_HTTP1_LIMITS, parseHttp1Limits, splicedRequestId } from '../wire/index.js';
import type { TunnelStreamContext } from '../wire/index.js';
import { normalizeHost } from './host.js';

/**
 * Spliced HTTP/1.1 on the agent (docs/protocol.md §4.5): the edge carries a whole
 * public HTTP/1.1 connection on one extended CONNECT stream (`:protocol: tuna-http1`), and the
 * agent's own HTTP/1.1 server parses every request on it, as it does for HTTP/1.1 decrypted in the
 * cluster. What the edge adds to each request per-request (X-Forwarded-*, x-request-id; the
 * `tuna-*` fields a client sent removed) is added here, once per request, from the stream's
 * tunnel headers.
 */

/** SplicedHttp1Limits bound the requests after the first (the edge checked the first head itself). */
export interface SplicedHttp1Limits {
  /** 431 above this many bytes of request head (the edge's `limits.maxHeaderBytes`) */
  maxHeaderBytes: number;
  /** a request head must be complete within this long of its first byte, else 408 (the edge's `limits.public.headersTimeoutMs`) */
  headersTimeoutMs: number;
  /** a whole request must arrive within this long, else 408; 0: no such deadline (the edge has none either) */
  requestTimeoutMs: number;
  /** an idle keep-alive connection is closed after this long (the edge's `limits.public.idleTimeoutMs`) */
  keepAliveTimeoutMs: number;
}

/**
 * DEFAULT_SPLICED_HTTP1_LIMITS are the edge's public HTTP/1.1 defaults (docs/edge-relay.md), used
 * for a spliced stream without a (well-formed) `tuna-http1-limits` field. No whole-request
 * deadline: the edge bounds a request per request only by inactivity (300 s), which it keeps for
 * a spliced connection as a whole, so a long upload is not cut here when it would not be there.
 */
export const DEFAULT_SPLICED_HTTP1_LIMITS: Readonly<SplicedHttp1Limits> = Object.freeze({
  maxHeaderBytes: 16 << 10,
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 0,
  keepAliveTimeoutMs: 75_000,
});

/**
 * SPLICED_HTTP1_LIMIT_BOUNDS clamp what an edge's `tuna-http1-limits` may set, [min, max]:
 * - head bytes 1 KiB to 64 KiB: 64 KiB is the tunnel's HTTP/2 header list limit
 *   (DEFAULT_TUNNEL_LIMITS.maxHeaderListBytes), about the largest head a per-request stream can
 *   bring this agent, so splicing never makes the agent hold much more per connection; below 1 KiB no
 *   browser request gets through, and 0 would mean Node's process default;
 * - head deadline and keep-alive idle 100 ms to 300 s: 0 would disable them in Node, and past
 *   300 s a spliced connection without a byte is cut at the edge anyway (§4.5), so a longer
 *   value would only let a slow head hold an agent stream and parser longer than the edge's.
 */
export const SPLICED_HTTP1_LIMIT_BOUNDS = Object.freeze({
  maxHeaderBytes: [1 << 10, 64 << 10] as const,
  headersTimeoutMs: [100, 300_000] as const,
  keepAliveTimeoutMs: [100, 300_000] as const,
});

/**
 * splicedLimits returns the limits for one spliced stream: its edge's `tuna-http1-limits` clamped
 * to SPLICED_HTTP1_LIMIT_BOUNDS, or `defaults` when the field is absent or malformed.
 */
export function splicedLimits(headers: IncomingHttpHeaders, defaults: Readonly<SplicedHttp1Limits> = DEFAULT_SPLICED_HTTP1_LIMITS): Readonly<SplicedHttp1Limits> {
  const sent = parseHttp1Limits(headers[HEADER_HTTP1_LIMITS]);
  if (sent === undefined) return defaults;
  const b = SPLICED_HTTP1_LIMIT_BOUNDS;
  const headersTimeoutMs = clamp(sent.headersTimeoutMs, b.headersTimeoutMs);
  return {
    maxHeaderBytes: clamp(sent.maxHeaderBytes, b.maxHeaderBytes),
    // Node refuses a head deadline past a (non-zero) whole-request one.
    headersTimeoutMs: defaults.requestTimeoutMs > 0 ? Math.min(headersTimeoutMs, defaults.requestTimeoutMs) : headersTimeoutMs,
    requestTimeoutMs: defaults.requestTimeoutMs,
    keepAliveTimeoutMs: clamp(sent.idleTimeoutMs, b.keepAliveTimeoutMs),
  };
}

function clamp(value: number, [min, max]: readonly [number, number]): number {
  return Math.min(max, Math.max(min, value));
}

// Distinct limit sets an agent keeps a server for: one per edge configuration it is connected to,
// in practice one or two; a set past this many (only a misbehaving edge) gets the defaults.
const MAX_LIMIT_SETS = 16;

/** SplicedConnection is what the agent knows about one spliced connection. */
export interface SplicedConnection {
  readonly context: TunnelStreamContext;
  readonly scheme: 'http' | 'https';
  /** the host (normal form) the edge picked the binding by; undefined when it was not one */
  readonly routedHost: string | undefined;
}

/** SplicedHandlers serve the requests of spliced connections. */
export interface SplicedHandlers {
  onRequest(req: IncomingMessage, res: ServerResponse, conn: SplicedConnection): void;
  onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, conn: SplicedConnection): void;
}

interface ConnectionState extends SplicedConnection {
  readonly stream: ServerHttp2Stream;
  /** requests begun on the connection (x-request-id numbers them) */
  requests: number;
  /** requests whose response has not closed yet */
  inFlight: number;
  /** set once the tunnel drains: the connection ends after its last response */
  isDraining: boolean;
  /** the connection became a WebSocket: it is no longer HTTP the server can end between requests */
  isUpgraded: boolean;
}

/**
 * SplicedHttp1Server hands every spliced stream of a data plane to an HTTP/1.1 server (not
 * listening) as a connection: keep-alive, pipelining, `100-continue` and Upgrade are Node's, the
 * limits are the stream's (splicedLimits): one server per distinct set of limits, made on first use.
 */
export class SplicedHttp1Server {
  readonly #handlers: SplicedHandlers;
  readonly #defaults: Readonly<SplicedHttp1Limits>;
  readonly #servers = new Map<string, http.Server>();
  readonly #connections = new WeakMap<object, ConnectionState>();
  readonly #open = new Set<ConnectionState>();
  readonly #watchedSessions = new WeakSet<object>();

  constructor(handlers: SplicedHandlers, limits: Readonly<SplicedHttp1Limits> = DEFAULT_SPLICED_HTTP1_LIMITS) {
    this.#handlers = handlers;
    this.#defaults = limits;
  }

  /** close stops the servers' deadline checks and ends their idle connections (Node's server.close; the agent calls it after its tunnels closed). */
  close(): void {
    for (const server of this.#servers.values()) server.close();
    this.#servers.clear();
  }

  #serverFor(limits: Readonly<SplicedHttp1Limits>): http.Server {
    const key = `${limits.maxHeaderBytes},${limits.headersTimeoutMs},${limits.requestTimeoutMs},${limits.keepAliveTimeoutMs}`;
    let server = this.#servers.get(key);
    if (server !== undefined) return server;
    if (this.#servers.size >= MAX_LIMIT_SETS && limits !== this.#defaults) return this.#serverFor(this.#defaults);
    server = this.#createServer(limits);
    this.#servers.set(key, server);
    return server;
  }

  #createServer(limits: Readonly<SplicedHttp1Limits>): http.Server {
    const handlers = this.#handlers;
    const server = http.createServer({
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // how often Node looks for heads and requests past their deadline (its default, 30 s, would
      // let a 300 ms head deadline run 100 times over): a quarter of the shortest deadline.
      connectionsCheckingInterval: checkingIntervalMs(limits),
    });
    // Node runs headersTimeout and requestTimeout only for a server that emitted 'listening'
    // (it starts the connection list and its checks there); this one is fed connections and never
    // listens, so without this a head that never completes was held until the edge's 300 s cut.
    server.emit('listening');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const conn = this.#connections.get(req.socket);
      if (conn === undefined) return void res.destroy();
      conn.inFlight++;
      res.once('close', () => {
        conn.inFlight--;
        if (conn.isDraining && conn.inFlight === 0) endConnection(conn);
      });
      // while the tunnel drains, keep-alive clients go after this response (RFC 9112 §9.6), as at the edge.
      if (conn.isDraining) res.shouldKeepAlive = false;
      if (!prepareRequest(req, res, conn)) return;
      handlers.onRequest(req, res, conn);
    });
    server.on('clientError', answerClientError);
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const conn = this.#connections.get(socket);
      if (conn === undefined || hasAmbiguousHost(req.rawHeaders)) return void socket.destroy();
      conn.isUpgraded = true;
      addForwardedHeaders(req.headers, conn);
      handlers.onUpgrade(req, socket, head, conn);
    });
    return server;
  }

  /** serve accepts one spliced stream: answers 200 and hands the stream to the server as its connection. */
  serve(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, context: TunnelStreamContext): void {
    const authority = headers[':authority'];
    const routedHost = typeof authority === 'string' ? normalizeHost(authority) : undefined;
    const scheme = context.publicProtocol === 'https' ? 'https' : 'http';
    const state: ConnectionState = { context, scheme, routedHost, stream, requests: 0, inFlight: 0, isDraining: false, isUpgraded: false };
    this.#connections.set(stream, state);
    this.#open.add(state);
    stream.once('close', () => this.#open.delete(state));
    // The edge drains (its GOAWAY): spliced connections of that tunnel end between requests.
    const session = stream.session;
    if (session !== undefined && !this.#watchedSessions.has(session)) {
      this.#watchedSessions.add(session);
      session.once('goaway', () => {
        for (const c of this.#open) if (c.stream.session === session) drainConnection(c);
      });
    }
    const server = this.#serverFor(splicedLimits(headers, this.#defaults));
    stream.respond({ ':status': 200 });
    server.emit('connection', stream);
  }

  /**
   * drain ends every spliced connection between requests: idle ones now, busy ones after their
   * response (with `Connection: close`). Called when the agent stops, so that idle keep-alive
   * clients do not hold its tunnels open until the drain timeout.
   */
  drain(): void {
    for (const c of this.#open) drainConnection(c);
  }
}

// A quarter of the shortest deadline, from 25 ms to Node's default 30 s.
function checkingIntervalMs(limits: Readonly<SplicedHttp1Limits>): number {
  const shortest = limits.requestTimeoutMs > 0 ? Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) : limits.headersTimeoutMs;
  return Math.min(30_000, Math.max(25, Math.floor(shortest / 4)));
}

// A connection whose first request has not begun is not idle: the edge sends that request's head
// right after the 200 (it read it to pick the tunnel), so ending the connection now would close
// it on a client that was never answered. That request is answered with `Connection: close`.
function drainConnection(conn: ConnectionState): void {
  if (conn.isUpgraded) return;
  conn.isDraining = true;
  if (conn.inFlight === 0 && conn.requests > 0) endConnection(conn);
}

// END_STREAM: the edge ends the public connection (FIN) once its bytes are out (docs/protocol.md §4.5).
function endConnection(conn: ConnectionState): void {
  if (!conn.stream.writableEnded && !conn.stream.destroyed) conn.stream.end();
}

// How long a connection answered for a broken request may take to close before it is reset.
const CLIENT_ERROR_LINGER_MS = 5_000;

/**
 * answerClientError answers a request the parser refused (431 for a head over the limit, 408 for a
 * head or request past its deadline, 400 otherwise) and ends the connection. Node's own answer
 * destroys the socket right after writing, which on a tunnel stream is a reset that discards the
 * answer still queued in it, so the client would see only a closed connection.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent === true) return void socket.destroy();
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
}

// RFC 9112 §3.2: two Host lines are a 400 (the edge checks this per request; Node keeps only the first).
function hasAmbiguousHost(raw: readonly string[]): boolean {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') count++;
  return count > 1;
}

function prepareRequest(req: IncomingMessage, res: ServerResponse, conn: ConnectionState): boolean {
  if (hasAmbiguousHost(req.rawHeaders)) {
    const body = 'bad request: ambiguous Host header\n';
    res.shouldKeepAlive = false;
    res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(body);
    return false;
  }
  addForwardedHeaders(req.headers, conn);
  return true;
}

/**
 * addForwardedHeaders does for one request of a spliced connection what the edge does for a
 * request it forwards itself (docs/protocol.md §4.1): the client address appended to
 * X-Forwarded-For, X-Forwarded-Proto/-Host/-Port set, x-request-id replaced (the stream's id and
 * the request's number on the connection), and any `tuna-*` field the client sent removed.
 */
function addForwardedHeaders(headers: IncomingHttpHeaders, conn: ConnectionState): void {
  for (const name in headers) if (name.startsWith('tuna-')) delete headers[name];
  const { clientAddress, publicPort, requestId } = conn.context;
  const prior = headers['x-forwarded-for'];
  headers['x-forwarded-for'] = prior === undefined || prior === '' ? clientAddress : `${prior}, ${clientAddress}`;
  headers['x-forwarded-proto'] = conn.scheme;
  headers['x-forwarded-host'] = normalizeHost(headers.host ?? '') ?? '';
  headers['x-forwarded-port'] = String(publicPort);
  headers['x-request-id'] = splicedRequestId(requestId, ++conn.requests);
}
