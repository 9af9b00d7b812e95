import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { constants as h2constants, createServer } from 'node:http2';
import type { IncomingHttpHeaders, ServerHttp2Session, ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Clock, ClockTimer } from './clock.js';
import type { EdgeDialer, EdgeEndpoint } from './dialer.js';
import { EdgeWorkerMissedError, TunnelClosedError, TunnelDestroyedError, TunnelTimeoutError } from './errors.js';
import { upgradeTunnel } from './handshake.js';
import { DEFAULT_TUNNEL_LIMITS, FEATURE_SPLICED_HTTP1, FEATURE_UDP, HEADER_EDGE_WORKER, parseEdgeWorker, takeStreamMeta, tunnelSettings } from '../wire/index.js';
import type { EdgeWorker, TunnelLimits, TunnelStreamHandler } from '../wire/index.js';

/** TunnelSessionOptions configures one tunnel connection. */
export interface TunnelSessionOptions {
  edge: EdgeEndpoint;
  bindingId: string;
  /** the tunnel key; kept in memory only, never logged */
  key: string;
  dialer: EdgeDialer;
  clock: Clock;
  handler: TunnelStreamHandler;
  /**
   * set for a shared connection (protocol version 2): the upgrade names no binding and carries no
   * key (`bindingId` and `key` are unused), and every stream goes to the router, which attaches
   * bindings and routes streams by their `tuna-binding` header (SharedConnection)
   */
  router?: SharedStreamRouter;
  limits?: Partial<TunnelLimits>;
  /** PING every this many ms (default 10 s) … */
  pingIntervalMs?: number;
  /** … and destroy the session when one is not answered within this many ms (default 10 s) */
  pingTimeoutMs?: number;
  /** dial + upgrade budget (default 10 s) */
  handshakeTimeoutMs?: number;
  /** close() waits this long for in-flight streams before destroying them (default 30 s) */
  drainTimeoutMs?: number;
  /** tell the edge this agent reads the compact stream context (docs/protocol.md §4); default true, false acts as an older agent */
  compactMeta?: boolean;
  /**
   * the edge worker this connection must reach (an edge of several processes, docs/protocol.md
   * §9.8): a connection the edge's 101 names another worker on is closed and dialed again, at
   * most WORKER_DIALS_PER_WORKER times the worker count, then connect fails with EdgeWorkerMissedError
   */
  wantWorker?: number;
}

/** WORKER_DIALS_PER_WORKER bounds the dials for one wanted worker: this many times the edge's worker count. */
export const WORKER_DIALS_PER_WORKER = 8;

/** SharedStreamRouter takes every stream of a shared connection: the control stream and the bindings' streams. */
export interface SharedStreamRouter {
  routeStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void;
}

/** TunnelLinkEvents are a TunnelLink's events: each fires once; 'close' carries the error that ended it, if one did. */
export type TunnelLinkEvents = {
  open: [];
  draining: [];
  close: [err: Error | undefined];
};

/**
 * TunnelLink is what the tunnel manager holds for one binding on one edge connection: a
 * TunnelSession (protocol version 1, a connection of its own) or a BindingAttachment (version 2,
 * one binding on a shared connection). Both emit 'open', 'draining' and 'close' (err?) once.
 */
export interface TunnelLink extends EventEmitter<TunnelLinkEvents> {
  readonly connectionId: string;
  readonly bindingId: string;
  readonly state: TunnelSessionState;
  readonly socket: Socket | undefined;
  readonly error: Error | undefined;
  readonly grantHeaders: Readonly<Record<string, string>>;
  connect(): Promise<void>;
  close(): Promise<void>;
  destroy(err?: Error): void;
  closed(): Promise<void>;
}

/** TunnelSessionState is where a session is in its life. */
export type TunnelSessionState = 'idle' | 'connecting' | 'open' | 'draining' | 'closed';

// RFC 9113 §6.8: a GOAWAY with the maximum stream id announces shutdown without refusing streams
// already on the wire; the final GOAWAY follows at once with nothing in flight, else one PING
// round trip later or when the last stream closes (close()).
const SHUTDOWN_NOTICE_STREAM_ID = 2 ** 31 - 1;

/**
 * TunnelSession is one agent connection to the edge: dial, upgrade, then serve HTTP/2 streams the
 * edge opens. `close()` drains gracefully (GOAWAY, in-flight streams finish); `destroy(err)` ends
 * it now. It emits 'open' once serving and 'close' (err?) exactly once at the end.
 */
export class TunnelSession extends EventEmitter<TunnelLinkEvents> {
  /** connectionId identifies this connection in logs on both sides. */
  readonly connectionId = randomBytes(8).toString('hex');
  readonly #options: TunnelSessionOptions;
  readonly #limits: TunnelLimits;
  readonly #abort = new AbortController();
  #state: TunnelSessionState = 'idle';
  #socket: Socket | undefined;
  #h2: ServerHttp2Session | undefined;
  #pingTimer: ClockTimer | undefined;
  #drainTimer: ClockTimer | undefined;
  #error: Error | undefined;
  #grant: Record<string, string> = {};
  /** streams the edge opened that have not closed yet (a shared connection's control stream too) */
  #inFlight = 0;
  /** set by close(): sends the final GOAWAY, called when the last stream in flight closes */
  #onIdle: (() => void) | undefined;
  readonly #closed: Promise<void>;
  #resolveClosed!: () => void;

  constructor(options: TunnelSessionOptions) {
    super();
    this.#options = options;
    this.#limits = { ...DEFAULT_TUNNEL_LIMITS, ...options.limits };
    this.#closed = new Promise((resolve) => (this.#resolveClosed = resolve));
  }

  /** state is the current life stage. */
  get state(): TunnelSessionState {
    return this.#state;
  }

  /** socket is the underlying connection once dialed (tests compare identities). */
  get socket(): Socket | undefined {
    return this.#socket;
  }

  /** error is why the session ended, if it ended with one. */
  get error(): Error | undefined {
    return this.#error;
  }

  /** grantHeaders are the edge's 101 response headers (e.g. the public port it assigned). */
  get grantHeaders(): Readonly<Record<string, string>> {
    return this.#grant;
  }

  /** edgeWorker is the edge worker this connection reached (from the 101), or undefined for an edge of one process. */
  get edgeWorker(): EdgeWorker | undefined {
    return parseEdgeWorker(this.#grant[HEADER_EDGE_WORKER]);
  }

  /** bindingId is the binding this connection serves. */
  get bindingId(): string {
    return this.#options.bindingId;
  }

  /** connect dials and upgrades; it resolves once the session serves streams, and rejects with the reason it could not. */
  async connect(): Promise<void> {
    if (this.#state !== 'idle') throw new TunnelClosedError('connect() called twice');
    this.#state = 'connecting';
    const { edge, dialer, wantWorker } = this.#options;
    try {
      for (let dials = 1; ; dials++) {
        const socket = await dialer.dial(edge, this.#abort.signal);
        this.#socket = socket;
        if (this.#abort.signal.aborted) throw this.#error ?? new TunnelDestroyedError();
        const result = await upgradeTunnel(socket, {
          host: edge.servername ?? edge.host,
          ...(this.#options.router === undefined ? { binding: { id: this.#options.bindingId, key: this.#options.key } } : {}),
          connectionId: this.connectionId,
          timeoutMs: this.#options.handshakeTimeoutMs ?? 10_000,
          features: handlerFeatures(this.#options.handler),
          compactMeta: this.#options.compactMeta,
        });
        if (this.#abort.signal.aborted) throw this.#error ?? new TunnelDestroyedError();
        const reached = parseEdgeWorker(result.headers[HEADER_EDGE_WORKER]);
        // cluster's primary hands connections to the workers in turn: dial again for the one wanted.
        if (wantWorker !== undefined && reached !== undefined && wantWorker < reached.count && reached.index !== wantWorker) {
          socket.destroy();
          if (dials >= WORKER_DIALS_PER_WORKER * reached.count) throw new EdgeWorkerMissedError(wantWorker, reached.count, dials);
          continue;
        }
        this.#grant = result.headers;
        this.#serve(socket);
        return;
      }
    } catch (err) {
      this.#finish(err instanceof Error ? err : new Error(String(err)));
      throw this.#error ?? err;
    }
  }

  #serve(socket: Socket): void {
    const server = createServer({
      settings: tunnelSettings(this.#limits, true),
      maxSessionMemory: this.#limits.maxSessionMemoryMb,
    });
    server.on('session', (session: ServerHttp2Session) => {
      this.#h2 = session;
    });
    server.on('stream', (stream, headers) => this.#onStream(stream, headers));
    // The TLS handshake negotiated ALPN http/1.1 for the upgrade; Node's HTTP/2 server would treat
    // that socket as an HTTP/1.1 client. After 101 the protocol on it is HTTP/2 (docs/protocol.md §3).
    if ((socket as TLSSocket).encrypted === true) {
      Object.defineProperty(socket, 'alpnProtocol', { value: 'h2', configurable: true, writable: true });
    }
    server.emit('connection', socket);
    const h2 = this.#h2;
    if (h2 === undefined) throw new TunnelClosedError('HTTP/2 session did not start');
    h2.setLocalWindowSize(this.#limits.connectionWindowBytes);
    h2.on('error', (err: Error) => (this.#error ??= err));
    // the edge's GOAWAY makes Node close the session gracefully; mark it so the manager replaces it.
    h2.on('goaway', () => {
      if (this.#state === 'open') this.#state = 'draining';
      this.emit('draining');
    });
    h2.once('close', () => this.#finish(this.#error));
    socket.resume();
    this.#state = 'open';
    this.#schedulePing();
    this.emit('open');
  }

  #onStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    // a reset from the edge must never crash the agent, whatever the handler forgets to listen for.
    stream.on('error', noop);
    this.#inFlight++;
    stream.on('close', this.#streamClosed);
    if (this.#options.router !== undefined) return this.#options.router.routeStream(stream, headers);
    const meta = takeStreamMeta(headers);
    if (meta === undefined) {
      respondQuietly(stream, 400);
      return;
    }
    try {
      this.#options.handler.handleStream(stream, headers, { bindingId: this.#options.bindingId, ...meta });
    } catch {
      respondQuietly(stream, 500);
    }
  }

  // one bound function for every stream (no closure per request)
  readonly #streamClosed = (): void => {
    if (--this.#inFlight === 0) this.#onIdle?.();
  };

  #schedulePing(): void {
    const { clock } = this.#options;
    const interval = this.#options.pingIntervalMs ?? 10_000;
    const timeout = this.#options.pingTimeoutMs ?? 10_000;
    this.#pingTimer = clock.setTimeout(() => {
      const h2 = this.#h2;
      if (h2 === undefined || h2.destroyed || this.#state === 'closed') return;
      const deadline = clock.setTimeout(() => this.destroy(new TunnelTimeoutError('tunnel PING', timeout)), timeout);
      const sent = h2.ping((err) => {
        clock.clearTimeout(deadline);
        if (err === null && this.#state !== 'closed') this.#schedulePing();
      });
      if (!sent) clock.clearTimeout(deadline);
    }, interval);
  }

  /**
   * close drains: a shutdown-notice GOAWAY, one PING round trip so the edge has seen it, then the
   * final GOAWAY (RFC 9113 §6.8). Streams already open finish; the promise resolves when the
   * connection is gone. After drainTimeoutMs the remaining streams are destroyed. With nothing in
   * flight the final GOAWAY goes out at once (see below).
   */
  close(): Promise<void> {
    if (this.#state === 'closed') return this.#closed;
    if (this.#state === 'idle' || this.#state === 'connecting' || this.#h2 === undefined) {
      this.destroy(new TunnelClosedError());
      return this.#closed;
    }
    if (this.#state === 'draining' && this.#drainTimer !== undefined) return this.#closed;
    this.#state = 'draining';
    const h2 = this.#h2;
    const drainMs = this.#options.drainTimeoutMs ?? 30_000;
    this.#drainTimer = this.#options.clock.setTimeout(() => this.destroy(), drainMs);
    // The final GOAWAY goes out once the edge has seen the notice: its PING ack, its own GOAWAY,
    // or a bounded wait, whichever is first; or as soon as no stream is in flight. A Node edge
    // answers neither: its client session, closing on the NO_ERROR notice, sends its PING ack and
    // GOAWAY only after this side's final GOAWAY and FIN (measured, Node 24; docs/tunnel-performance.md
    // §11), so an idle agent waited out the whole bounded wait on every SIGTERM. With nothing in
    // flight there is nothing to drain: a stream the edge opened after the last one seen here is
    // refused by the final GOAWAY's last stream id, and the edge retries it elsewhere (RFC 9113 §8.7).
    const finalGoaway = (): void => {
      this.#onIdle = undefined;
      this.#options.clock.clearTimeout(fallback);
      h2.off('goaway', finalGoaway);
      if (!h2.destroyed && !h2.closed) h2.close();
    };
    const fallback = this.#options.clock.setTimeout(finalGoaway, Math.min(1000, this.#options.pingTimeoutMs ?? 10_000));
    h2.once('goaway', finalGoaway);
    try {
      h2.goaway(h2constants.NGHTTP2_NO_ERROR, SHUTDOWN_NOTICE_STREAM_ID);
      if (this.#inFlight === 0 || !h2.ping(finalGoaway)) finalGoaway();
      else this.#onIdle = finalGoaway;
    } catch {
      finalGoaway();
    }
    return this.#closed;
  }

  /** destroy ends the connection now; pending streams fail. err, if given, is reported on 'close'. */
  destroy(err?: Error): void {
    if (this.#state === 'closed') return;
    this.#error ??= err;
    this.#abort.abort(err ?? new TunnelDestroyedError());
    if (this.#h2 !== undefined && !this.#h2.destroyed) this.#h2.destroy();
    this.#socket?.destroy();
    if (this.#h2 === undefined) this.#finish(this.#error);
  }

  /** closed resolves when the session has ended, however it ended. */
  closed(): Promise<void> {
    return this.#closed;
  }

  #finish(err: Error | undefined): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#error ??= err;
    const { clock } = this.#options;
    if (this.#pingTimer !== undefined) clock.clearTimeout(this.#pingTimer);
    if (this.#drainTimer !== undefined) clock.clearTimeout(this.#drainTimer);
    this.#socket?.destroy();
    this.#resolveClosed();
    this.emit('close', this.#error);
  }
}

function noop(): void {}

/** respondQuietly answers a stream with a bare status, or resets it when it can no longer be answered. */
export function respondQuietly(stream: ServerHttp2Stream, status: number): void {
  if (stream.destroyed || stream.headersSent) {
    stream.close(h2constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
  stream.respond({ ':status': status }, { endStream: true });
}

/** handlerFeatures lists the optional stream kinds the data plane takes, for `tuna-features` (docs/protocol.md §4.5, §4.6). */
function handlerFeatures(handler: TunnelStreamHandler): string[] {
  return [...(handler.acceptsSplicedHttp1 === true ? [FEATURE_SPLICED_HTTP1] : []), ...(handler.acceptsUdp === true ? [FEATURE_UDP] : [])];
}
