import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { closeServer, listenOn } from './binding-listeners.js';
import { ConnectionGuard } from '../fronts/index.js';
import type { GuardCounters, ListenerLimits } from '../fronts/index.js';
import type { EdgeMetrics } from '../metrics/index.js';

/**
 * DEFAULT_TUNNEL_LISTENER_LIMITS (docs/edge-relay.md "The tunnel listener"): an agent sends its
 * ClientHello and its upgrade request at once, so the first byte gets 10 s and the TLS handshake
 * plus the request head 30 s; an idle control API keep-alive connection goes after 75 s (nginx's
 * keepalive_timeout). Agents of the one-binding-per-connection protocol hold one connection per
 * binding, so one address may hold 4,000 and the listener 8,000 (of the edge's descriptors, the
 * public listeners hold up to 10,000).
 */
export const DEFAULT_TUNNEL_LISTENER_LIMITS: ListenerLimits = {
  firstByteTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  idleTimeoutMs: 75_000,
  maxConnections: 8_000,
  maxConnectionsPerAddress: 4_000,
};

function tunnelGuardCounters(metrics: EdgeMetrics): GuardCounters {
  return {
    refused: (reason) => metrics.countTunnelListenerClose(reason),
    timedOut: (phase) => metrics.countTunnelListenerClose(phase),
    open: (count) => (metrics.tunnelListenerOpen = count),
  };
}

/**
 * TunnelListener accepts the tunnel listener's connections (tunnel upgrades, the control API,
 * /healthz, /metrics) under the public listeners' ConnectionGuard: connection limits at accept,
 * the first-byte deadline, the TLS handshake and request head under the headers deadline, a FIN
 * before the first byte closes, idle keep-alive connections close. It listens itself and feeds
 * the HTTP(S) server (which then never listens, so Node's headersTimeout would not run). An
 * upgraded socket leaves the deadlines: a tunnel's liveness is its PINGs.
 */
export class TunnelListener {
  readonly #server: HttpServer;
  readonly #isTls: boolean;
  readonly #guard: ConnectionGuard;
  readonly #net: NetServer;
  /** connections not (yet) upgraded to a tunnel: closeAllConnections drops them */
  readonly #http = new Set<Socket>();

  constructor(server: HttpServer, isTls: boolean, limits: ListenerLimits, metrics: EdgeMetrics) {
    this.#server = server;
    this.#isTls = isTls;
    this.#guard = new ConnectionGuard(limits, tunnelGuardCounters(metrics));
    // What http.createServer and https.createServer would have used.
    this.#net = createNetServer({ allowHalfOpen: !isTls, noDelay: true }, (socket) => this.#accept(socket));
    server.keepAliveTimeout = limits.idleTimeoutMs;
    // inactivity during a control API request; an upgraded socket clears it below
    server.timeout = limits.idleTimeoutMs;
    server.on('timeout', (socket: Duplex) => {
      this.#guard.countIdle();
      socket.destroy();
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      const raw = rawOf(socket);
      if (raw !== undefined) this.#guard.alias(socket, raw);
    });
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.#guard.onHttp1Request(req, res));
    server.prependListener('upgrade', (req: IncomingMessage, socket: Duplex) => {
      this.#guard.headersDone(req.socket);
      (socket as Socket).setTimeout(0);
      const raw = rawOf(req.socket) ?? (req.socket as Socket);
      this.#http.delete(raw);
    });
  }

  /** listen binds the listener, rejecting with EdgeListenError. */
  listen(port: number, host: string): Promise<void> {
    return listenOn(this.#net, port, host, 'the tunnel listener');
  }

  /** address is where the listener is bound. */
  address(): AddressInfo | undefined {
    return (this.#net.address() ?? undefined) as AddressInfo | undefined;
  }

  /** close stops accepting and resolves once the listener has closed (connections are the caller's). */
  close(): Promise<void> {
    return this.#net.listening ? closeServer(this.#net) : Promise.resolve();
  }

  /** closeAllConnections drops every connection that is not a tunnel (keep-alive and in-progress control API requests, handshakes). */
  closeAllConnections(): void {
    for (const socket of this.#http) socket.destroy();
    this.#http.clear();
  }

  #accept(socket: Socket): void {
    socket.on('error', noop);
    if (!this.#guard.admit(socket)) return;
    this.#http.add(socket);
    socket.once('close', () => this.#http.delete(socket));
    const sniffing = this.#guard.watchFirstBytes(socket);
    socket.once('data', (chunk: Buffer) => {
      sniffing.done();
      socket.pause();
      socket.unshift(chunk);
      this.#server.emit('connection', socket);
      // the HTTP server reads the native handle: start the flow for the byte pushed back (TLS reads it itself).
      if (!this.#isTls) socket.resume();
    });
  }
}

function rawOf(socket: object): Socket | undefined {
  return (socket as { _parent?: Socket })._parent;
}

function noop(): void {}
