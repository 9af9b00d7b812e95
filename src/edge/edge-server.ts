import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import { DEFAULT_TUNNEL_LIMITS } from '../wire/index.js';
import type { TunnelLimits } from '../wire/index.js';
import type { CertificateManager, CertificateProvider } from './acme/index.js';
import { StaticTunnelAuthority } from './tunnels/authority.js';
import type { Grant, KeyRecord, TunnelAuthority } from './tunnels/authority.js';
import type { EdgeConfigFile } from './config.js';
import { StaticBindingDirectory } from './tunnels/directory.js';
import type { BindingDirectory, EdgeBinding } from './tunnels/directory.js';
import { certificatesOnReservation, createConfiguredCertificates, staticCertificates } from './edge-certificates.js';
import { EdgeListenError } from './errors.js';
import { DEFAULT_PUBLIC_CONNECTION_LIMITS } from './fronts/connection-guard.js';
import { newRequestIdGenerator } from './fronts/front-context.js';
import type { EdgeLimits, FrontContext } from './fronts/front-context.js';
import { EdgeMetrics } from './metrics.js';
import { PublicFront } from './fronts/public-front.js';
import { FailureRateLimiter } from './control/rate-limiter.js';
import type { RateLimitOptions } from './control/rate-limiter.js';
import type { Store } from './store/index.js';
import { openStoreMode } from './store-mode/store-mode.js';
import type { StoreOpener } from './store-mode/store-mode.js';
import { acceptTunnel } from './tunnels/tunnel-acceptor.js';
import { TunnelRegistry } from './tunnels/tunnel-registry.js';

/** EdgeServerOptions wires an edge; authority and directory default to the config file's. */
export interface EdgeServerOptions {
  config: EdgeConfigFile;
  authority?: TunnelAuthority;
  directory?: BindingDirectory;
  /** extra routes on the tunnel listener (the control API); return true when handled */
  requestHandler?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** log sink; lines never contain a key */
  log?: (line: string) => void;
  /** graceful close waits this long for in-flight streams (default 10 s) */
  drainTimeoutMs?: number;
  /** certificates beyond the config's static ones: stored and ACME-issued (docs/acme.md) */
  certificateProvider?: CertificateProvider;
  /** failed tunnel handshakes allowed per client address (default 100, refilling 1 per second) */
  tunnelRateLimit?: RateLimitOptions;
  /** called with the grant of every registered tunnel */
  onTunnelGranted?: (grant: Grant) => void;
  /** store mode: an open store to use instead of opening `config.store.url` (startEdge; not closed by the edge) */
  store?: Store;
  /** store mode: how to open `config.store` when no `store` is given (startEdge; default openConfiguredStore) */
  openStore?: StoreOpener;
}

/** EdgeAddresses are the bound addresses of every listener. */
export interface EdgeAddresses {
  tunnel: AddressInfo;
  http?: AddressInfo;
  https?: AddressInfo;
  /** by binding id: the tcp-port listener, or every port of a dedicated address */
  bindings: Map<string, AddressInfo[]>;
}

/** bindingsFromConfig converts the config file's bindings to directory entries. */
export function bindingsFromConfig(config: EdgeConfigFile): EdgeBinding[] {
  return (config.bindings ?? []).map((b) => {
    const binding: EdgeBinding = { id: b.id, kind: b.kind, hostnames: b.hostnames ?? [], tls: b.tls ?? 'edge' };
    if (b.port !== undefined) binding.port = b.port;
    if (b.address !== undefined) binding.address = b.address;
    if (b.ports !== undefined) binding.ports = b.ports;
    return binding;
  });
}

/** keysFromConfig converts the config file's key digests to authority records. */
export function keysFromConfig(config: EdgeConfigFile): KeyRecord[] {
  return (config.bindings ?? []).flatMap((b) =>
    (b.keys ?? []).map((k, i) => {
      const record: KeyRecord = { id: k.id ?? `${b.id}#${i}`, bindingId: b.id, sha256: Buffer.from(k.sha256, 'hex') };
      if (k.maxConnections !== undefined) record.maxConnections = k.maxConnections;
      if (k.expires !== undefined) record.expiresAt = Date.parse(k.expires);
      return record;
    }),
  );
}

// Public sockets stay half-open: a TCP client's FIN becomes END_STREAM on the tunnel while the
// answer still flows back (RFC 9293 §3.6; RFC 9113 §8.5 for CONNECT). HTTP servers expect the same.
const PUBLIC_SOCKETS = { allowHalfOpen: true, noDelay: true } as const;

function listenOn(server: NetServer | HttpServer, port: number, host: string, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(new EdgeListenError(what, err));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function closeServer(server: NetServer | HttpServer): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * EdgeServer is the edge relay: public listeners, the tunnel acceptor, /healthz and /metrics.
 * `close()` is graceful (stop accepting, GOAWAY every tunnel and public HTTP/2 client, let
 * in-flight streams finish, then drop what is left); `destroy()` is immediate.
 */
export class EdgeServer {
  /** registry holds the live tunnels (exposed for the control API: revocation closes tunnels). */
  readonly registry = new TunnelRegistry();
  /** metrics are the edge's counters. */
  readonly metrics = new EdgeMetrics();
  /** directory resolves bindings. */
  readonly directory: BindingDirectory;
  readonly #options: EdgeServerOptions;
  readonly #authority: TunnelAuthority;
  readonly #front: PublicFront;
  readonly #tunnelLimits: TunnelLimits;
  readonly #log: (line: string) => void;
  readonly #tunnelServer: HttpServer;
  #http: NetServer | undefined;
  #https: NetServer | undefined;
  readonly #bindingServers = new Map<string, { bindingId: string; server: NetServer }>();
  #unsubscribe: (() => void) | undefined;
  #isClosing = false;
  readonly #limiter: FailureRateLimiter;
  readonly #closeHooks: (() => Promise<void>)[] = [];
  #hooksDone: Promise<void> | undefined;

  constructor(options: EdgeServerOptions) {
    this.#options = options;
    const { config } = options;
    this.#log = options.log ?? (() => {});
    this.directory = options.directory ?? new StaticBindingDirectory(bindingsFromConfig(config));
    this.#authority = options.authority ?? new StaticTunnelAuthority(keysFromConfig(config));
    this.#limiter = new FailureRateLimiter(options.tunnelRateLimit ?? { capacity: 100, refillPerSecond: 1 }, { now: Date.now });
    const limits = config.limits ?? {};
    this.#tunnelLimits = {
      ...DEFAULT_TUNNEL_LIMITS,
      ...(limits.streamWindowBytes !== undefined ? { streamWindowBytes: limits.streamWindowBytes } : {}),
      ...(limits.connectionWindowBytes !== undefined ? { connectionWindowBytes: limits.connectionWindowBytes } : {}),
      ...(limits.maxConcurrentStreams !== undefined ? { maxConcurrentStreams: limits.maxConcurrentStreams } : {}),
    };
    const edgeLimits: EdgeLimits = {
      maxHeaderBytes: limits.maxHeaderBytes ?? 16 << 10,
      tunnelWaitMs: limits.tunnelWaitMs ?? 1000,
      connections: { ...DEFAULT_PUBLIC_CONNECTION_LIMITS, ...limits.public },
    };
    if (limits.maxRequestBodyBytes !== undefined) edgeLimits.maxRequestBodyBytes = limits.maxRequestBodyBytes;
    const ctx: FrontContext = {
      directory: this.directory,
      registry: this.registry,
      metrics: this.metrics,
      limits: edgeLimits,
      requestId: newRequestIdGenerator(),
      isClosing: () => this.#isClosing,
    };
    this.#front = new PublicFront(ctx, staticCertificates(config), this.#tunnelLimits, options.certificateProvider);
    this.#tunnelServer = this.#createTunnelServer();
  }

  #createTunnelServer(): HttpServer {
    const tls = this.#options.config.listen.tunnel.tls;
    const server: HttpServer =
      tls?.cert !== undefined && tls.key !== undefined ? createHttpsServer({ cert: tls.cert, key: tls.key }) : createHttpServer();
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.#serveAdmin(req, res));
    server.on('upgrade', (req: IncomingMessage, socket, head: Buffer) => {
      if (this.#isClosing) return void socket.destroy();
      acceptTunnel(
        {
          authority: this.#authority,
          directory: this.directory,
          registry: this.registry,
          metrics: this.metrics,
          limits: this.#tunnelLimits,
          pingIntervalMs: this.#options.config.limits?.pingIntervalMs ?? 10_000,
          log: this.#log,
          limiter: this.#limiter,
          ...(this.#options.onTunnelGranted !== undefined ? { onGranted: this.#options.onTunnelGranted } : {}),
        },
        req,
        socket,
        head,
      ).catch((err: Error) => {
        // e.g. the authority's store failing: the agent retries with backoff.
        this.#log(`tunnel upgrade failed: ${err.message}`);
        socket.destroy();
      });
    });
    return server;
  }

  #serveAdmin(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(this.#isClosing ? 503 : 200, { 'content-type': 'text/plain' }).end(this.#isClosing ? 'closing\n' : 'ok\n');
      return;
    }
    if (req.method === 'GET' && path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(this.metrics.render(this.registry));
      return;
    }
    if (this.#options.requestHandler?.(req, res) === true) return;
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  }

  /** listen binds every configured listener; tcp-port and address listeners follow the directory. */
  async listen(): Promise<void> {
    const { listen } = this.#options.config;
    await listenOn(this.#tunnelServer, listen.tunnel.port, listen.tunnel.host ?? '0.0.0.0', 'the tunnel listener');
    if (listen.http !== undefined) {
      this.#http = createNetServer(PUBLIC_SOCKETS, (socket) => this.#front.acceptHttp(socket));
      await listenOn(this.#http, listen.http.port, listen.http.host ?? '0.0.0.0', 'the HTTP listener');
    }
    if (listen.https !== undefined) {
      this.#https = createNetServer(PUBLIC_SOCKETS, (socket) => void this.#front.acceptHttps(socket).catch(() => socket.destroy()));
      await listenOn(this.#https, listen.https.port, listen.https.host ?? '0.0.0.0', 'the HTTPS listener');
    }
    await this.#reconcileBindingListeners();
    this.#unsubscribe = this.directory.subscribe(() => {
      this.#reconcileBindingListeners().catch((err: Error) => this.#log(`binding listeners: ${err.message}`));
    });
  }

  // One listener per tcp-port binding and per (address, port) of address bindings.
  async #reconcileBindingListeners(): Promise<void> {
    const wanted = new Map<string, { binding: EdgeBinding; host: string; port: number; accept: (s: Socket) => void }>();
    const tcpHost = this.#options.config.listen.http?.host ?? '0.0.0.0';
    for (const binding of this.directory.list()) {
      if (binding.kind === 'tcp-port' && binding.port !== undefined) {
        wanted.set(`${binding.id}|tcp|${binding.port}`, {
          binding,
          host: tcpHost,
          port: binding.port,
          accept: (s) => void this.#front.acceptTcp(s, binding).catch(() => s.destroy()),
        });
      }
      if (binding.kind === 'address' && binding.address !== undefined) {
        for (const p of binding.ports ?? []) {
          const accept =
            p.protocol === 'tcp'
              ? (s: Socket) => void this.#front.acceptTcp(s, binding).catch(() => s.destroy())
              : p.protocol === 'tls'
                ? (s: Socket) => void this.#front.acceptTls(s, binding).catch(() => s.destroy())
                : p.protocol === 'https'
                  ? (s: Socket) => void this.#front.acceptHttps(s, binding).catch(() => s.destroy())
                  : (s: Socket) => this.#front.acceptHttp(s, binding);
          wanted.set(`${binding.id}|${p.protocol}|${binding.address}:${p.port}`, { binding, host: binding.address, port: p.port, accept });
        }
      }
    }
    for (const [key, entry] of this.#bindingServers) {
      if (!wanted.has(key)) {
        this.#bindingServers.delete(key);
        await closeServer(entry.server);
      }
    }
    for (const [key, want] of wanted) {
      if (this.#bindingServers.has(key)) continue;
      const server = createNetServer(PUBLIC_SOCKETS, want.accept);
      await listenOn(server, want.port, want.host, `${want.host}:${want.port} for ${want.binding.id}`);
      this.#bindingServers.set(key, { bindingId: want.binding.id, server });
    }
  }

  /** address returns where each listener is bound (port 0 in the config means any free port). */
  address(): EdgeAddresses {
    const info = (s: NetServer | HttpServer | undefined): AddressInfo | undefined => (s?.address() ?? undefined) as AddressInfo | undefined;
    const bindings = new Map<string, AddressInfo[]>();
    for (const { bindingId, server } of this.#bindingServers.values()) {
      const list = bindings.get(bindingId) ?? [];
      list.push(info(server)!);
      bindings.set(bindingId, list);
    }
    const out: EdgeAddresses = { tunnel: info(this.#tunnelServer)!, bindings };
    const http = info(this.#http);
    const https = info(this.#https);
    if (http !== undefined) out.http = http;
    if (https !== undefined) out.https = https;
    return out;
  }

  /** closeTunnels drains the live tunnels that match (e.g. of a revoked key). */
  async closeTunnels(match: (tunnel: { bindingId: string; keyId: string }) => boolean): Promise<void> {
    await Promise.all(this.registry.all().filter(match).map((t) => t.close()));
  }

  /** onClose registers work to run when the edge closes (store mode: stop polling, close the store). */
  onClose(hook: () => Promise<void>): void {
    this.#closeHooks.push(hook);
  }

  // Runs the hooks once; close() and destroy() share the one promise.
  #runCloseHooks(): Promise<void> {
    this.#hooksDone ??= Promise.all(
      this.#closeHooks.map((hook) => hook().catch((err: Error) => this.#log(`edge close: ${err.name}`))),
    ).then(() => undefined);
    return this.#hooksDone;
  }

  /** close shuts down gracefully; in-flight streams get drainTimeoutMs to finish. */
  async close(): Promise<void> {
    if (this.#isClosing) return;
    this.#isClosing = true;
    this.#unsubscribe?.();
    const servers = [this.#tunnelServer, this.#http, this.#https, ...[...this.#bindingServers.values()].map((e) => e.server)];
    const closing = servers.filter((s) => s !== undefined).map((s) => closeServer(s));
    this.#tunnelServer.closeAllConnections();
    this.#front.close();
    this.registry.wakeAll();
    const drained = Promise.all(this.registry.all().map((t) => t.close()));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#options.drainTimeoutMs ?? 10_000)));
    await Promise.race([drained, timeout]);
    clearTimeout(timer);
    this.destroy();
    await Promise.all([...closing, this.#runCloseHooks()]);
  }

  /** destroy drops every connection now. */
  destroy(): void {
    this.#isClosing = true;
    this.#unsubscribe?.();
    void this.#runCloseHooks();
    for (const tunnel of this.registry.all()) tunnel.destroy();
    this.#front.destroy();
    this.#tunnelServer.closeAllConnections();
    for (const s of [this.#tunnelServer, this.#http, this.#https, ...[...this.#bindingServers.values()].map((e) => e.server)]) {
      if (s?.listening === true) s.close();
    }
  }
}

/**
 * startEdge creates an edge from a decoded config and starts listening. With a `store` section in
 * the config (or `options.store`) the edge runs in store mode (docs/edge.md): keys, reservations
 * and the control API at `/v1` come from the store; otherwise from the config file. With an `acme`
 * section too, certificates for reserved hostnames come from the store or the CA (docs/acme.md),
 * unless `options.certificateProvider` is given.
 */
export async function startEdge(config: EdgeConfigFile, options: Omit<EdgeServerOptions, 'config'> = {}): Promise<EdgeServer> {
  if (config.store === undefined && options.store === undefined) return listenOrDestroy(new EdgeServer({ ...options, config }));
  // GET /v1/edge reports the bound public ports, known only once the edge below listens.
  const started: { edge?: EdgeServer } = {};
  const publicListeners = () => ({ http: started.edge?.address().http?.port, https: started.edge?.address().https?.port });
  const mode = await openStoreMode(config, {
    ...(options.store !== undefined ? { store: options.store } : {}),
    ...(options.openStore !== undefined ? { openStore: options.openStore } : {}),
    ...(options.log !== undefined ? { log: options.log } : {}),
    publicListeners,
  });
  let certificates: CertificateManager | undefined;
  try {
    certificates = await createConfiguredCertificates(config, mode, options);
  } catch (err) {
    await mode.close();
    throw err;
  }
  let isClosed = false;
  const askForCertificates = certificates === undefined ? undefined : certificatesOnReservation(certificates, mode, staticCertificates(config), () => isClosed);
  const edge = new EdgeServer({
    ...options,
    config,
    authority: mode.authority,
    directory: mode.directory,
    ...(certificates !== undefined ? { certificateProvider: certificates } : {}),
    requestHandler: (req, res) => {
      if (!mode.requestHandler(req, res)) return options.requestHandler?.(req, res) === true;
      askForCertificates?.(req, res);
      return true;
    },
    onTunnelGranted: (grant) => {
      mode.onGranted(grant);
      options.onTunnelGranted?.(grant);
    },
  });
  started.edge = edge;
  // The manager stops renewing before the store goes (both hooks run on close() and destroy()).
  edge.onClose(async () => {
    isClosed = true;
    certificates?.close();
  });
  edge.onClose(() => mode.close());
  await listenOrDestroy(edge);
  try {
    await mode.start(edge.registry);
  } catch (err) {
    await edge.close();
    throw err;
  }
  return edge;
}

async function listenOrDestroy(edge: EdgeServer): Promise<EdgeServer> {
  try {
    await edge.listen();
  } catch (err) {
    edge.destroy();
    throw err;
  }
  return edge;
}
