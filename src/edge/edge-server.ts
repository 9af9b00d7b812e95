import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { DEFAULT_TUNNEL_LIMITS } from '../wire/index.js';
import type { EdgeWorker, TunnelLimits } from '../wire/index.js';
import type { ListenerStatus } from '../control-api/index.js';
import type { CertificateManager, CertificateProvider } from './acme/index.js';
import type { EdgePeers } from './edge-peers.js';
import { StaticTunnelAuthority, StaticBindingDirectory, acceptTunnel, TunnelRegistry } from './tunnels/index.js';
import type { Grant, KeyRecord, TunnelAuthority, BindingDirectory, EdgeBinding } from './tunnels/index.js';
import type { EdgeConfigFile } from './config.js';
import { EdgeConfigError } from './errors.js';
import { BindingListeners, DEFAULT_BINDING_RETRY_MS, PUBLIC_SOCKETS, closeServer, listenOn, UdpListeners, DEFAULT_TUNNEL_LISTENER_LIMITS, TunnelListener } from './listeners/index.js';
import { certificatesOnReservation, createConfiguredCertificates, staticCertificateExpiries, staticCertificates } from './acme/index.js';
import { DEFAULT_PUBLIC_CONNECTION_LIMITS, ClientFairness, newRequestIdGenerator, DEFAULT_HTTP1_FORWARDING, PublicFront, DEFAULT_UDP_LIMITS, UdpFront } from './fronts/index.js';
import type { EdgeAccessLog, EdgeLimits, FrontContext, Http1Forwarding } from './fronts/index.js';
import { EdgeMetrics, adminKeyAuthorizer, createMetricsServer, sendMetrics, sendMetricsUnauthorized } from './metrics/index.js';
import type { MetricsAuthorizer } from './metrics/index.js';
import { FailureRateLimiter } from './control/index.js';
import type { RateLimitOptions } from './control/index.js';
import type { Store } from './store/index.js';
import { openStoreMode } from './store-mode/index.js';
import type { StoreOpener } from './store-mode/index.js';

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
  /** who may read `/metrics` on the tunnel listener (store mode: an admin API key); default anyone */
  authorizeMetrics?: MetricsAuthorizer;
  /** a binding listener that failed to bind is tried again after this long (default 30 s) */
  bindingRetryMs?: number;
  /** store mode: how to open `config.store` when no `store` is given (startEdge; default openConfiguredStore) */
  openStore?: StoreOpener;
  /** this process is one worker of several sharing the node's listeners (`tuna edge --workers N`, src/cli/edge-workers.ts) */
  worker?: EdgeWorker;
  /** the other workers of the node: a control API change here makes them re-read the store at once (store mode) */
  peers?: EdgePeers;
  /** the access log of public requests and raw connections (docs/edge.md "Access log"); absent: none */
  accessLog?: EdgeAccessLog;
  /** the cluster's primary serves `listen.metrics` with every worker's series: this worker opens no metrics listener and answers the primary instead */
  metricsFromPrimary?: boolean;
}

/** EdgeAddresses are the bound addresses of every listener. */
export interface EdgeAddresses {
  tunnel: AddressInfo;
  http?: AddressInfo;
  https?: AddressInfo;
  /** the `listen.metrics` listener */
  metrics?: AddressInfo;
  /** by binding id: the tcp-port listener, or every port of a dedicated address */
  bindings: Map<string, AddressInfo[]>;
  /** by binding id: the UDP socket of a tcp-port binding whose transports include udp */
  udp: Map<string, AddressInfo[]>;
}

/** tcpHostOf is the host tcp-port listeners bind: the HTTP listener's (GET /v1/edge reports it as `tcpHost`). */
function tcpHostOf(config: EdgeConfigFile): string {
  return config.listen.http?.host ?? '0.0.0.0';
}

/** bindingsFromConfig converts the config file's bindings to directory entries. */
export function bindingsFromConfig(config: EdgeConfigFile): EdgeBinding[] {
  return (config.bindings ?? []).map((b) => {
    const binding: EdgeBinding = { id: b.id, kind: b.kind, hostnames: b.hostnames ?? [], tls: b.tls ?? 'edge' };
    if (b.port !== undefined) binding.port = b.port;
    if (b.address !== undefined) binding.address = b.address;
    if (b.ports !== undefined) binding.ports = b.ports;
    if (b.transports !== undefined) binding.transports = b.transports;
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

/**
 * EdgeServer is the edge relay: public listeners, the tunnel acceptor, /healthz and /metrics.
 * `close()` is graceful (stop accepting, GOAWAY every tunnel and public HTTP/2 client, let
 * in-flight streams finish, then drop what is left); `destroy()` is immediate.
 */
export class EdgeServer {
  /** registry holds the live tunnels (exposed for the control API: revocation closes tunnels). */
  readonly registry = new TunnelRegistry();
  /** metrics are the edge's counters. */
  readonly metrics: EdgeMetrics;
  /** directory resolves bindings. */
  readonly directory: BindingDirectory;
  readonly #options: EdgeServerOptions;
  readonly #authority: TunnelAuthority;
  readonly #front: PublicFront;
  readonly #tunnelLimits: TunnelLimits;
  readonly #log: (line: string) => void;
  readonly #tunnelServer: HttpServer;
  readonly #tunnelListener: TunnelListener;
  #http: NetServer | undefined;
  #https: NetServer | undefined;
  #metricsServer: HttpServer | undefined;
  readonly #bindingListeners: BindingListeners;
  readonly #udpFront: UdpFront;
  readonly #udpListeners: UdpListeners;
  #unsubscribe: (() => void) | undefined;
  #isClosing = false;
  readonly #limiter: FailureRateLimiter;
  readonly #closeHooks: (() => Promise<void>)[] = [];
  #hooksDone: Promise<void> | undefined;

  constructor(options: EdgeServerOptions) {
    this.#options = options;
    this.metrics = new EdgeMetrics(options.worker);
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
      fairness: new ClientFairness(edgeLimits.connections.maxInFlightPerClient),
      requestId: newRequestIdGenerator(),
      isClosing: () => this.#isClosing,
      http1Forwarding: http1ForwardingOf(config, options.accessLog !== undefined),
      ...(options.accessLog !== undefined ? { accessLog: options.accessLog } : {}),
    };
    const statics = staticCertificates(config);
    this.#front = new PublicFront(ctx, statics, this.#tunnelLimits, options.certificateProvider);
    const staticExpiries = staticCertificateExpiries(statics).map((c) => ({ ...c, source: 'static' as const }));
    const provider = options.certificateProvider;
    this.metrics.certificates = () => [...staticExpiries, ...(provider?.expiries?.() ?? []).map((c) => ({ ...c, source: 'store' as const }))];
    this.#tunnelServer = this.#createTunnelServer();
    const isTunnelTls = config.listen.tunnel.tls?.cert !== undefined && config.listen.tunnel.tls.key !== undefined;
    this.#tunnelListener = new TunnelListener(this.#tunnelServer, isTunnelTls, { ...DEFAULT_TUNNEL_LISTENER_LIMITS, ...limits.tunnelListener }, this.metrics);
    this.#bindingListeners = new BindingListeners({
      directory: this.directory,
      front: this.#front,
      tcpHost: tcpHostOf(config),
      metrics: this.metrics,
      log: this.#log,
      retryMs: options.bindingRetryMs ?? DEFAULT_BINDING_RETRY_MS,
    });
    this.#udpFront = new UdpFront(ctx, { ...DEFAULT_UDP_LIMITS, ...limits.udp });
    const udpDeps = { directory: this.directory, front: this.#udpFront, host: tcpHostOf(config), metrics: this.metrics, log: this.#log };
    this.#udpListeners = new UdpListeners({ ...udpDeps, retryMs: options.bindingRetryMs ?? DEFAULT_BINDING_RETRY_MS });
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
          ...(this.#options.worker !== undefined ? { worker: this.#options.worker } : {}),
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
    if (req.method === 'GET' && path === '/metrics' && this.#options.config.listen.metrics === undefined) return this.#serveMetrics(req, res);
    if (this.#options.requestHandler?.(req, res) === true) return;
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  }

  // On the tunnel listener: open in config mode, an admin API key in store mode (metrics-endpoint.ts).
  // With workers, the primary gathers every worker's series (docs/edge.md, "Workers").
  #serveMetrics(req: IncomingMessage, res: ServerResponse): void {
    const authorize = this.#options.authorizeMetrics;
    const render = (): Promise<string> => this.#options.peers?.nodeMetrics?.() ?? this.metrics.render(this.registry);
    if (authorize === undefined) return sendMetrics(res, render());
    authorize(req).then(
      (isAllowed) => (isAllowed ? sendMetrics(res, render()) : sendMetricsUnauthorized(res)),
      () => res.writeHead(500).end(),
    );
  }

  /** listen binds every configured listener; tcp-port and address listeners follow the directory. */
  async listen(): Promise<void> {
    const { listen } = this.#options.config;
    await this.#tunnelListener.listen(listen.tunnel.port, listen.tunnel.host ?? '0.0.0.0');
    if (listen.http !== undefined) {
      this.#http = createNetServer(PUBLIC_SOCKETS, (socket) => this.#front.acceptHttp(socket));
      await listenOn(this.#http, listen.http.port, listen.http.host ?? '0.0.0.0', 'the HTTP listener');
    }
    if (listen.https !== undefined) {
      this.#https = createNetServer(PUBLIC_SOCKETS, (socket) => void this.#front.acceptHttps(socket).catch(() => socket.destroy()));
      await listenOn(this.#https, listen.https.port, listen.https.host ?? '0.0.0.0', 'the HTTPS listener');
    }
    if (this.#options.metricsFromPrimary === true) this.metrics.answerClusterPrimary(this.registry);
    else if (listen.metrics !== undefined) {
      this.#metricsServer = createMetricsServer(() => this.metrics.render(this.registry), () => this.#isClosing);
      await listenOn(this.#metricsServer, listen.metrics.port, listen.metrics.host ?? '127.0.0.1', 'the metrics listener');
    }
    await Promise.all([this.#bindingListeners.reconcile(), this.#udpListeners.reconcile()]);
    this.#unsubscribe = this.directory.subscribe(() => {
      this.#bindingListeners.reconcile().catch((err: Error) => this.#log(`binding listeners: ${err.message}`));
      this.#udpListeners.reconcile().catch((err: Error) => this.#log(`udp listeners: ${err.message}`));
    });
  }

  /** address returns where each listener is bound (port 0 in the config means any free port). */
  address(): EdgeAddresses {
    const info = (s: NetServer | HttpServer | undefined): AddressInfo | undefined => (s?.address() ?? undefined) as AddressInfo | undefined;
    const bindings = new Map<string, AddressInfo[]>();
    for (const { bindingId, server } of this.#bindingListeners.servers()) {
      const list = bindings.get(bindingId) ?? [];
      list.push(info(server)!);
      bindings.set(bindingId, list);
    }
    const out: EdgeAddresses = { tunnel: this.#tunnelListener.address()!, bindings, udp: this.#udpListeners.addresses() };
    const http = info(this.#http);
    const https = info(this.#https);
    const metrics = info(this.#metricsServer);
    if (metrics !== undefined) out.metrics = metrics;
    if (http !== undefined) out.http = http;
    if (https !== undefined) out.https = https;
    return out;
  }

  /** ownPorts are the bound ports of the edge's own listeners (tunnel/control, HTTP, HTTPS), which no reservation may take. */
  ownPorts(): number[] {
    const { tunnel, http, https, metrics } = this.address();
    return [tunnel.port, http?.port, https?.port, metrics?.port].filter((p): p is number => p !== undefined);
  }

  /** ownListeners are the edge's own listeners with their bound hosts, which no address reservation may ask for where it binds. */
  ownListeners(): { name: string; host: string; port: number }[] {
    const { tunnel, http, https, metrics } = this.address();
    const named = [['tunnel', tunnel], ['http', http], ['https', https], ['metrics', metrics]] as const;
    return named.flatMap(([name, info]) => (info === undefined ? [] : [{ name, host: info.address, port: info.port }]));
  }

  /** bindingListenerStatus lists the listeners a binding needs on this node, open or failed to bind (a reservation's status). */
  bindingListenerStatus(bindingId: string): ListenerStatus[] {
    return [...this.#bindingListeners.statusOf(bindingId), ...this.#udpListeners.statusOf(bindingId)].sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol));
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
    this.#bindingListeners.stop();
    const servers = [this.#http, this.#https, this.#metricsServer, ...this.#bindingListeners.servers().map((e) => e.server)];
    const closing = [this.#tunnelListener.close(), ...servers.filter((s) => s !== undefined).map((s) => closeServer(s))];
    this.#tunnelListener.closeAllConnections();
    this.#front.close();
    this.#udpListeners.close();
    this.registry.wakeAll();
    // Shared connections first: their GOAWAY stops the agent re-attaching what the edge drains.
    const drained = Promise.all([...this.registry.shared().map((c) => c.close()), ...this.registry.all().map((t) => t.close())]);
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
    this.#bindingListeners.stop();
    void this.#runCloseHooks();
    for (const tunnel of this.registry.all()) tunnel.destroy();
    for (const connection of this.registry.shared()) connection.destroy();
    this.#front.destroy();
    this.#udpListeners.close();
    this.#udpFront.destroy();
    this.#tunnelListener.closeAllConnections();
    void this.#tunnelListener.close();
    for (const s of [this.#http, this.#https, this.#metricsServer, ...this.#bindingListeners.servers().map((e) => e.server)]) {
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
  const publicListeners = () => ({ http: started.edge?.address().http?.port, https: started.edge?.address().https?.port, tcpHost: tcpHostOf(config) });
  const ownPorts = () => started.edge?.ownPorts() ?? [];
  const ownListeners = () => started.edge?.ownListeners() ?? [];
  const mode = await openStoreMode(config, {
    ...(options.store !== undefined ? { store: options.store } : {}),
    ...(options.openStore !== undefined ? { openStore: options.openStore } : {}),
    ...(options.log !== undefined ? { log: options.log } : {}),
    ...(options.worker !== undefined ? { worker: options.worker } : {}),
    ...(options.peers !== undefined ? { peers: options.peers } : {}),
    publicListeners,
    ownPorts,
    ownListeners,
    listenerStatus: (bindingId) => started.edge?.bindingListenerStatus(bindingId) ?? [],
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
    authorizeMetrics: options.authorizeMetrics ?? adminKeyAuthorizer((token) => mode.store.authenticateApiKey(token)),
    ...(certificates !== undefined ? { certificateProvider: certificates } : {}),
    requestHandler: (req, res) => {
      if (!mode.requestHandler(req, res)) return options.requestHandler?.(req, res) === true;
      started.edge?.metrics.countControlRequest(req.method ?? '');
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

/**
 * http1ForwardingOf is how public HTTP/1.1 is forwarded: the config's `http1Forwarding`, else the
 * default, but per request when the access log is on (a spliced connection goes to the agent whole,
 * so the edge would see none of its requests to log). An access log with `http1Forwarding: spliced`
 * asked for is refused, naming both.
 */
function http1ForwardingOf(config: EdgeConfigFile, hasAccessLog: boolean): Http1Forwarding {
  if (!hasAccessLog) return config.http1Forwarding ?? DEFAULT_HTTP1_FORWARDING;
  if (config.http1Forwarding === 'spliced') {
    throw new EdgeConfigError('invalid edge config: http1Forwarding: spliced hands each public HTTP/1.1 connection to the agent whole, so the edge access log would see none of its requests; drop it (the access log forwards per request) or log on the agent (tuna http --access-log)');
  }
  return 'per-request';
}
