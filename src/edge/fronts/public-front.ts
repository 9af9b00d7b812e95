import { createServer as createHttp1Server } from 'node:http';
import type { IncomingMessage, Server as Http1Server, ServerResponse } from 'node:http';
import { createServer as createHttp2Server } from 'node:http2';
import type { Http2Server, ServerHttp2Session, ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { createSecureContext, createServer as createTlsServer } from 'node:tls';
import type { SecureContext, Server as TlsServer, TLSSocket } from 'node:tls';
import { ACME_TLS_ALPN_PROTOCOL } from '../acme/index.js';
import type { CertificateProvider } from '../acme/index.js';
import type { EdgeBinding } from '../tunnels/index.js';
import { ConnectionGuard, publicGuardCounters } from './connection-guard.js';
import type { ConnectionInfo, FrontContext } from './front-context.js';
import { peekAlpnOffer } from './alpn-offer.js';
import { forwardHttp1 } from './http1-front.js';
import { http2SessionOptions, watchHttp2Abuse } from './http2-abuse.js';
import type { AbuseWatch } from './http2-abuse.js';
import { forwardHttp2 } from './http2-front.js';
import { spliceHttp1 } from './http1-splice.js';
import { forwardRaw, watchRawTimeouts } from './raw-front.js';
import { peekServerName } from './sni.js';
import { forwardWebSocket } from './websocket-front.js';

/** EdgeCertificate is a certificate the edge terminates TLS with, for the names it lists. */
export interface EdgeCertificate {
  hostnames: string[];
  cert: string;
  key: string;
}

/** PublicWindows are the flow-control windows of public HTTP/2 connections. */
export interface PublicWindows {
  streamWindowBytes: number;
  connectionWindowBytes: number;
}

// An HTTP/1.1 response (or request body) without a byte this long is cut, as before the public limits (Envoy's stream_idle_timeout is 5 min).
const STREAM_IDLE_TIMEOUT_MS = 300_000;
// RFC 9113 §3.4: every prior-knowledge HTTP/2 connection starts with this preface.
const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/**
 * PublicFront accepts public connections from every listener and hands each to the right
 * protocol: HTTP/1.1 or prior-knowledge h2c (sniffed from the first bytes), TLS terminated here
 * (then ALPN picks h2 or HTTP/1.1) or routed raw by SNI, and plain TCP. One HTTP/1.1 server and
 * one HTTP/2 server (neither listening) serve the connections of all listeners.
 */
export class PublicFront {
  readonly #ctx: FrontContext;
  readonly #guard: ConnectionGuard;
  readonly #h1: Http1Server;
  readonly #h2: Http2Server;
  readonly #tls: TlsServer | undefined;
  readonly #provider: CertificateProvider | undefined;
  readonly #acmeTls: TlsServer | undefined;
  readonly #info = new WeakMap<object, ConnectionInfo>();
  readonly #sockets = new Set<Socket>();
  readonly #sessions = new Set<ServerHttp2Session>();
  readonly #abuse = new WeakMap<ServerHttp2Session, AbuseWatch>();
  #pendingInfo: ConnectionInfo | undefined;

  /** `provider` (ACME and stored certificates) is asked after an exact static name, before a static wildcard. */
  constructor(ctx: FrontContext, certificates: EdgeCertificate[], windows: PublicWindows, provider?: CertificateProvider) {
    this.#ctx = ctx;
    this.#provider = provider;
    const limits = ctx.limits.connections;
    this.#guard = new ConnectionGuard(limits, publicGuardCounters(ctx.metrics));
    this.#h1 = createHttp1Server({ maxHeaderSize: ctx.limits.maxHeaderBytes });
    // An HTTP/1.1 connection is closed after idleTimeoutMs between keep-alive requests (nginx's
    // keepalive_timeout), and after STREAM_IDLE_TIMEOUT_MS without a byte during one (a quiet
    // event stream is not idle); upgraded WebSockets clear it.
    this.#h1.timeout = STREAM_IDLE_TIMEOUT_MS;
    this.#h1.keepAliveTimeout = limits.idleTimeoutMs;
    this.#h1.on('timeout', (socket: Socket) => {
      this.#guard.countIdle();
      socket.destroy();
    });
    this.#h1.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.#guard.onHttp1Request(req, res);
      forwardHttp1(ctx, this.#infoOf(req.socket), req, res).catch(() => res.destroy());
    });
    this.#h1.on('upgrade', (req: IncomingMessage, socket, head: Buffer) => {
      forwardWebSocket(ctx, this.#infoOf(req.socket), req, socket, head).catch(() => socket.destroy());
    });
    this.#h2 = createHttp2Server({
      ...http2SessionOptions(limits),
      settings: {
        enableConnectProtocol: true,
        initialWindowSize: windows.streamWindowBytes,
        // nghttp2 accepts up to 4x our limit so that we can answer 431 instead of a reset.
        maxHeaderListSize: ctx.limits.maxHeaderBytes * 4,
        maxConcurrentStreams: 250,
      },
    });
    this.#h2.on('session', (session: ServerHttp2Session) => {
      if (this.#pendingInfo !== undefined) this.#info.set(session, this.#pendingInfo);
      this.#sessions.add(session);
      session.once('close', () => this.#sessions.delete(session));
      session.on('error', noop);
      this.#abuse.set(session, watchHttp2Abuse(session, limits, ctx.metrics));
      session.once('connect', () => session.setLocalWindowSize(windows.connectionWindowBytes));
      this.#idleWithoutStreams(session, limits.idleTimeoutMs);
    });
    this.#h2.on('stream', (stream: ServerHttp2Stream, headers) => {
      const session = stream.session as ServerHttp2Session;
      // before any deferral: a session destroyed meanwhile errors every stream it holds.
      stream.on('error', noop);
      const abuse = this.#abuse.get(session);
      abuse?.watch(stream);
      const forward = (): void => {
        if (stream.closed) return;
        forwardHttp2(ctx, this.#info.get(session) ?? this.#fallbackInfo(), stream, headers).catch(() => stream.destroy());
      };
      // A connection that resets streams waits one turn of the event loop before each new stream
      // reaches a tunnel: the rest of the read (its RST_STREAM frames) is parsed first.
      if (abuse?.isResetting() === true) setImmediate(forward);
      else forward();
    });
    this.#tls = certificates.length === 0 && provider === undefined ? undefined : this.#createTls(certificates);
    this.#acmeTls = provider?.challenge === undefined ? undefined : this.#createAcmeTls(provider);
  }

  // Like Envoy's idle_timeout: an HTTP/2 connection is idle only while it has no open stream, so a
  // quiet long response keeps it; the timer is re-armed when its last stream closes.
  #idleWithoutStreams(session: ServerHttp2Session, idleMs: number): void {
    let open = 0;
    session.on('stream', (stream: ServerHttp2Stream) => {
      open++;
      stream.once('close', () => {
        if (--open === 0 && !session.destroyed) session.setTimeout(idleMs);
      });
    });
    session.on('timeout', () => {
      if (open > 0) return;
      this.#guard.countIdle();
      session.destroy();
    });
    session.setTimeout(idleMs);
  }

  // RFC 8737 §3: a TLS-ALPN-01 validator offers only `acme-tls/1` and closes after the handshake;
  // it gets the challenge certificate of its SNI name and no application data.
  #createAcmeTls(provider: CertificateProvider): TlsServer {
    const server = createTlsServer({
      ALPNProtocols: [ACME_TLS_ALPN_PROTOCOL],
      SNICallback: (servername, callback) => callback(null, provider.challenge?.(servername)),
    });
    server.on('tlsClientError', noop);
    server.on('secureConnection', (socket: TLSSocket) => {
      socket.on('error', noop);
      socket.end();
    });
    return server;
  }

  #createTls(certificates: EdgeCertificate[]): TlsServer {
    const contexts = new Map<string, SecureContext>();
    for (const c of certificates) {
      const context = createSecureContext({ cert: c.cert, key: c.key });
      for (const name of c.hostnames) contexts.set(name.toLowerCase(), context);
    }
    const first = certificates[0];
    const provider = this.#provider;
    const server = createTlsServer({
      handshakeTimeout: this.#guard.limits.headersTimeoutMs,
      ...(first !== undefined ? { cert: first.cert, key: first.key } : {}),
      ALPNProtocols: ['h2', 'http/1.1'],
      SNICallback: (servername, callback) => {
        const name = servername.toLowerCase();
        const dot = name.indexOf('.');
        const wildcard = (): SecureContext | undefined => (dot > 0 ? contexts.get(`*${name.slice(dot)}`) : undefined);
        const exact = contexts.get(name);
        if (exact !== undefined || provider === undefined) return callback(null, exact ?? wildcard());
        provider.resolve(name).then(
          (context) => callback(null, context ?? wildcard()),
          () => callback(null, wildcard()),
        );
      },
    });
    server.on('tlsClientError', noop);
    server.on('secureConnection', (socket: TLSSocket) => {
      const info = this.#pendingFor(socket);
      const raw = (socket as unknown as { _parent?: Socket })._parent;
      if (raw !== undefined) this.#guard.alias(socket, raw);
      this.#dispatchHttp(socket, info, socket.alpnProtocol === 'h2');
    });
    return server;
  }

  #fallbackInfo(): ConnectionInfo {
    return { publicProtocol: 'http', port: 0, clientAddress: '' };
  }

  #infoOf(socket: object): ConnectionInfo {
    return this.#info.get(socket) ?? this.#fallbackInfo();
  }

  // TLS sockets are wrapped by the TLS server: carry the info across via the wrapped socket.
  #pendingFor(tlsSocket: TLSSocket): ConnectionInfo {
    const inner = (tlsSocket as unknown as { _parent?: object })._parent;
    const info = (inner !== undefined ? this.#info.get(inner) : undefined) ?? this.#fallbackInfo();
    const secure = { ...info, publicProtocol: 'https' as const };
    this.#info.set(tlsSocket, secure);
    return secure;
  }

  // Counts the connection and keeps it for destroy(); false when a limit closed it at accept.
  #track(socket: Socket): boolean {
    if (!this.#guard.admit(socket)) return false;
    this.#ctx.metrics.publicConnections++;
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    socket.on('error', noop);
    return true;
  }

  #baseInfo(socket: Socket, binding: EdgeBinding | undefined): ConnectionInfo {
    const info: ConnectionInfo = { publicProtocol: 'http', port: socket.localPort ?? 0, clientAddress: socket.remoteAddress ?? '' };
    if (binding !== undefined) info.binding = binding;
    return info;
  }

  #dispatchHttp(socket: Socket, info: ConnectionInfo, isH2: boolean): void {
    this.#info.set(socket, info);
    if (isH2) {
      // an HTTP/2 session has no HTTP/1.1 header block to wait for; its idle timeout governs.
      this.#guard.headersDone(socket);
      this.#pendingInfo = info;
      this.#h2.emit('connection', socket);
      this.#pendingInfo = undefined;
    } else if (this.#ctx.http1Forwarding === 'spliced' && info.binding === undefined && this.#ctx.limits.maxRequestBodyBytes === undefined) {
      // Dedicated addresses (every Host is the binding's) and an edge body limit stay per request (docs/edge.md).
      spliceHttp1(this.#ctx, socket, info, { onSpliced: () => this.#guard.headersDone(socket), fallback: () => this.#serveHttp1(socket) });
    } else this.#serveHttp1(socket);
  }

  #serveHttp1(socket: Socket): void {
    this.#h1.emit('connection', socket);
    // the HTTP/1.1 server reads the native handle; start the flow for bytes we pushed back.
    socket.resume();
  }

  /** acceptHttp serves a plain connection: HTTP/1.1, or h2c when it opens with the HTTP/2 preface. */
  acceptHttp(socket: Socket, binding?: EdgeBinding): void {
    if (!this.#track(socket)) return;
    const sniffing = this.#guard.watchFirstBytes(socket);
    const info = this.#baseInfo(socket, binding);
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, H2_PREFACE.length);
      const isPrefix = seen.compare(H2_PREFACE, 0, n, 0, n) === 0;
      if (isPrefix && n < H2_PREFACE.length) return;
      socket.off('data', onData);
      sniffing.done();
      socket.pause();
      socket.unshift(seen);
      this.#dispatchHttp(socket, info, isPrefix);
    };
    socket.on('data', onData);
  }

  /** acceptHttps peeks the SNI name: raw TLS to a tunnel for in-cluster/passthrough bindings, else terminate here. */
  async acceptHttps(socket: Socket, binding?: EdgeBinding): Promise<void> {
    if (!this.#track(socket)) return;
    const name = await this.#peekHello(socket);
    if (name === undefined) return;
    const target = binding ?? this.#ctx.directory.byHost(name);
    const port = socket.localPort ?? 0;
    if (target !== undefined && target.kind !== 'tcp-port' && target.tls !== 'edge') {
      this.#guard.headersDone(socket);
      this.#watchRaw(socket, false);
      return forwardRaw(this.#ctx, socket, { bindingId: target.id, publicProtocol: 'tls', port, serverName: name });
    }
    if (this.#acmeTls !== undefined && this.#provider?.challenge?.(name) !== undefined) {
      const offer = await peekAlpnOffer(socket, this.#guard.limits.headersTimeoutMs);
      if (offer === undefined || socket.destroyed) return void socket.destroy();
      if (offer.includes(ACME_TLS_ALPN_PROTOCOL)) return void this.#acmeTls.emit('connection', socket);
    }
    if (this.#tls === undefined) return void socket.destroy();
    this.#info.set(socket, this.#baseInfo(socket, binding));
    this.#tls.emit('connection', socket);
  }

  /** acceptTls routes raw TLS by SNI without terminating (a dedicated address's tls port). */
  async acceptTls(socket: Socket, binding: EdgeBinding): Promise<void> {
    if (!this.#track(socket)) return;
    const name = await this.#peekHello(socket);
    if (name === undefined) return;
    this.#guard.headersDone(socket);
    this.#watchRaw(socket, false);
    const port = socket.localPort ?? 0;
    return forwardRaw(this.#ctx, socket, { bindingId: binding.id, publicProtocol: 'tls', port, serverName: name });
  }

  /** acceptTcp relays a plain TCP connection to a binding. */
  // Raw TCP gets no first-byte deadline of the HTTP kind (server-first protocols, SMTP or MySQL,
  // send nothing first): its first byte may come from either side (watchRawTimeouts).
  acceptTcp(socket: Socket, binding: EdgeBinding): Promise<void> {
    if (!this.#track(socket)) return Promise.resolve();
    this.#watchRaw(socket, true);
    return forwardRaw(this.#ctx, socket, { bindingId: binding.id, publicProtocol: 'tcp', port: socket.localPort ?? 0 });
  }

  // Raw relays: the first byte either way (TCP only; TLS has sent its ClientHello) and idle.
  #watchRaw(socket: Socket, isTcp: boolean): void {
    const { tcpFirstByteTimeoutMs, tcpIdleTimeoutMs } = this.#ctx.limits.connections;
    watchRawTimeouts(socket, isTcp ? tcpFirstByteTimeoutMs : undefined, tcpIdleTimeoutMs, (phase) => this.#ctx.metrics.countPublicTimeout(`tcp-${phase}`));
  }

  // Reads the ClientHello under the first-byte and headers deadlines (a FIN before it closes the
  // socket); undefined (and the socket destroyed) when none came.
  async #peekHello(socket: Socket): Promise<string | undefined> {
    const sniffing = this.#guard.watchFirstBytes(socket);
    const name = await peekServerName(socket, this.#guard.limits.headersTimeoutMs);
    sniffing.done();
    if (name === undefined || socket.destroyed) {
      socket.destroy();
      return undefined;
    }
    return name;
  }

  /** close asks public HTTP/2 clients to go away (GOAWAY); in-flight streams continue. */
  close(): void {
    for (const session of this.#sessions) session.close();
  }

  /** destroy drops every public connection. */
  destroy(): void {
    for (const session of this.#sessions) session.destroy();
    for (const socket of this.#sockets) socket.destroy();
  }
}

function noop(): void {}
