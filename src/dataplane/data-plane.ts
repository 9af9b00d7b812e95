import type { IncomingMessage, ServerResponse } from 'node:http';
import http2 from 'node:http2';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { RouteGraph, ServiceBackend } from '../model/index.js';
import { emptyGraph } from '../model/index.js';
import { SPLICED_HTTP1_PROTOCOL } from '../wire/index.js';
import type { TunnelStreamContext, TunnelStreamHandler } from '../wire/index.js';
import type { Random } from './balancer.js';
import { BackendTlsClients, serviceBackendsOf } from './backend-tls.js';
import { SecureContextCache, StaticCertificateSource } from './certificates.js';
import type { CertificateSource } from './certificates.js';
import { EndpointPicker } from './endpoints.js';
import type { EndpointResolver } from './endpoints.js';
import { downstreamFromHttp1, downstreamFromHttp2, sendLocalResponse } from './exchange.js';
import type { Downstream } from './exchange.js';
import { normalizeHost } from './host.js';
import { resolveRequest } from './http-handler.js';
import type { ConnectionFacts } from './http-handler.js';
import { authorizeAll, withBody } from './external-auth.js';
import type { ExternalAuthFilter } from './request-plan.js';
import { forwardRequest } from './http-proxy.js';
import type { ProxyDeps } from './http-proxy.js';
import { MirrorSender } from './mirror.js';
import type { ExchangeObserver } from './observer.js';
import { planRequest } from './request-plan.js';
import type { ForwardPlan, LocalAnswer } from './request-plan.js';
import { compileRouteTable, routeDatagram, routeStream } from './router.js';
import type { RoutedRequest } from './http-handler.js';
import { decoratePlan, gatePolicies, withResponseHeaders } from './policies/apply.js';
import type { PolicyRequest } from './policies/apply.js';
import { limitBody } from './policies/body-limit.js';
import { PolicyCompiler } from './policies/compile.js';
import type { CompiledPolicies } from './policies/compile.js';
import type { EntryPoint, RouteTable } from './router.js';
import { SplicedHttp1Server } from './spliced-http1.js';
import type { SplicedConnection, SplicedHttp1Limits } from './spliced-http1.js';
import { proxyDecrypted, proxyTcp } from './tcp-proxy.js';
import { terminateTls } from './tls-terminator.js';
import type { TerminatedConnection } from './tls-terminator.js';
import { Http1Client } from './upstream-http1.js';
import type { Http1ClientOptions } from './upstream-http1.js';
import { Http2Client } from './upstream-http2.js';
import type { UpstreamClient } from './upstream.js';
import { DEFAULT_UDP_IDLE_TIMEOUT_MS, proxyUdp } from './udp-proxy.js';
import type { UdpObserver } from './udp-proxy.js';
import { proxyWebSocket } from './websocket-proxy.js';
import { proxyHttp1Upgrade, writeLocal } from './websocket-upgrade.js';
import type { Duplex } from 'node:stream';

/** DataPlaneOptions are the data plane's collaborators and limits. */
export interface DataPlaneOptions {
  endpoints: EndpointResolver;
  /** key material for `terminate-in-cluster` listeners (none: such streams get 503) */
  certificates?: CertificateSource;
  /** random source for weighted choices and mirror sampling (tests inject a seeded one) */
  random?: Random;
  http1?: Partial<Http1ClientOptions>;
  /** called for failures worth a log line; never given key material */
  onError?: (err: unknown, context: TunnelStreamContext) => void;
  /** observer, when given, sees every HTTP exchange (the request inspector); none: no extra work per request */
  observer?: ExchangeObserver;
  /** clock of the rate-limit policies and of the JWT key-set fetch cooldown, in milliseconds (tests inject a fake one); default performance.now */
  now?: () => number;
  /** told of a JWT key-set fetch that failed (the route keeps its last good keys, or answers 503 without any) */
  onJwksError?: (url: string, err: unknown) => void;
  /** told of an oidc policy's provider configuration or key fetch that failed (its routes keep the last good configuration, or answer 503 without any) */
  onOidcError?: (issuer: string, err: unknown) => void;
  /** false: do not tell edges that whole HTTP/1.1 connections may come on one stream (docs/protocol.md §4.5); default true */
  spliceHttp1?: boolean;
  /** limits of spliced connections whose edge sends none (`tuna-http1-limits`; default: the edge's public defaults) */
  splicedHttp1Limits?: SplicedHttp1Limits;
  /** false: do not tell edges that UDP flows may come (docs/protocol.md §4.6); default true */
  acceptUdp?: boolean;
  /** a UDP flow with no datagram either way for this long is ended (default 60 s) */
  udpIdleTimeoutMs?: number;
  /** told of every UDP datagram dropped and flow refused, with why (the operator's /metrics) */
  udpObserver?: UdpObserver;
}

/**
 * DataPlane handles every stream that arrives on the agent's tunnels: HTTP requests are routed
 * over the route graph, filtered and proxied to a ready endpoint; WebSocket (extended CONNECT),
 * TCP and TLS (CONNECT) streams are bridged or terminated. `update` swaps the compiled graph
 * atomically: a request keeps the table it started with, so a route change never fails it.
 */
export class DataPlane implements TunnelStreamHandler {
  /** acceptsSplicedHttp1 makes the tunnels tell the edge that this data plane serves spliced HTTP/1.1 connections. */
  readonly acceptsSplicedHttp1: boolean;
  /** acceptsUdp makes the tunnels tell the edge that this data plane takes UDP flows. */
  readonly acceptsUdp: boolean;
  private readonly udpIdleTimeoutMs: number;
  private readonly udpFlows = new Set<() => void>();
  private readonly udpObserver: UdpObserver | undefined;
  private table: RouteTable = compileRouteTable(emptyGraph());
  private readonly deps: ProxyDeps;
  private readonly clients: { http: Http1Client; h2c: Http2Client; h2: Http2Client };
  private readonly contexts: SecureContextCache;
  private readonly tlsClients: BackendTlsClients;
  private readonly onError: (err: unknown, context: TunnelStreamContext) => void;
  private readonly observer: ExchangeObserver | undefined;
  private readonly policies: PolicyCompiler;
  private readonly spliced: SplicedHttp1Server;

  constructor(options: DataPlaneOptions) {
    this.acceptsSplicedHttp1 = options.spliceHttp1 ?? true;
    this.acceptsUdp = options.acceptUdp ?? true;
    this.udpIdleTimeoutMs = options.udpIdleTimeoutMs ?? DEFAULT_UDP_IDLE_TIMEOUT_MS;
    this.udpObserver = options.udpObserver;
    // Each request of a spliced connection is routed on the table in force when it arrives.
    this.spliced = new SplicedHttp1Server(
      {
        // the context of one request names it by its own id (the inspector and error logs key on it)
        onRequest: (req, res, c) => this.serveHttp(this.table, downstreamFromHttp1(req, res), splicedFacts(c), requestContext(c, req)),
        onUpgrade: (req, socket, head, c) => this.serveHttp1Upgrade(this.table, req, socket, head, splicedFacts(c), requestContext(c, req)),
      },
      options.splicedHttp1Limits,
    );
    const random = options.random ?? Math.random;
    const picker = new EndpointPicker();
    this.clients = { http: new Http1Client(options.http1), h2c: new Http2Client({ mode: 'h2c' }), h2: new Http2Client({ mode: 'h2' }) };
    const certificates = options.certificates ?? new StaticCertificateSource();
    // A backend with a BackendTLSPolicy gets the pooled clients of its own TLS settings (backend-tls.ts).
    this.tlsClients = new BackendTlsClients(certificates, options.http1);
    const clientFor = (b: ServiceBackend): UpstreamClient => {
      if (b.tls) return this.tlsClients.clientFor(b.tls, b.protocol);
      return b.protocol === 'h2c' || b.protocol === 'h2' ? this.clients[b.protocol] : this.clients.http;
    };
    const mirror = new MirrorSender(options.endpoints, picker, clientFor, random);
    this.deps = { endpoints: options.endpoints, picker, random, clientFor, tls: this.tlsClients, mirror, onError: (err, context) => this.onError(err, context) };
    this.contexts = new SecureContextCache(certificates);
    this.onError = options.onError ?? (() => undefined);
    this.observer = options.observer;
    this.policies = new PolicyCompiler(options.now ?? (() => performance.now()), {
      ...(options.onJwksError ? { onJwksError: options.onJwksError } : {}),
      ...(options.onOidcError ? { onOidcError: options.onOidcError } : {}),
    });
  }

  /** update replaces the route graph; streams already routed keep their route (and their policies' state, where the policy is unchanged). */
  update(graph: RouteGraph): void {
    this.table = compileRouteTable(graph, (route, binding) => this.policies.compile(route, binding));
    this.policies.sweep();
    this.tlsClients.sweep(serviceBackendsOf(graph));
  }

  /** graph returns the route graph in force. */
  graph(): RouteGraph {
    return this.table.graph;
  }

  /** handleStream serves one stream the edge opened on a tunnel (see TunnelStreamHandler). */
  handleStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, context: TunnelStreamContext): void {
    // A client reset surfaces as a stream error; it concerns this stream only.
    stream.on('error', () => undefined);
    const table = this.table;
    const entry: EntryPoint = { bindingId: context.bindingId, publicPort: context.publicPort, publicProtocol: context.publicProtocol };
    const conn: ConnectionFacts = { clientAddress: context.clientAddress, scheme: isSecure(context.publicProtocol) ? 'https' : 'http', entry };
    try {
      if (context.publicProtocol === 'udp') return this.serveUdp(table, stream, headers, entry);
      if (headers[':method'] !== 'CONNECT') return this.serveHttp(table, downstreamFromHttp2(stream, headers), conn, context);
      const protocol = headers[':protocol'];
      if (protocol === 'websocket') return this.serveWebSocket(table, stream, headers, conn, context);
      if (protocol === SPLICED_HTTP1_PROTOCOL && this.acceptsSplicedHttp1) return this.spliced.serve(stream, headers, context);
      if (protocol !== undefined) return void stream.respond({ ':status': 501 }, { endStream: true });
      this.serveRawStream(table, stream, headers, entry, context);
    } catch (err) {
      this.onError(err, context);
      if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    }
  }

  /** drainSpliced ends spliced HTTP/1.1 connections between requests (the agent is stopping; spliced-http1.ts). */
  drainSpliced(): void {
    this.spliced.drain();
  }

  /** drainUdp ends every open UDP flow with END_STREAM (the agent is stopping: a flow would otherwise hold its tunnel until the drain timeout). */
  drainUdp(): void {
    for (const end of [...this.udpFlows]) end();
  }

  /** close releases pooled upstream connections (and stops the spliced servers' deadline checks). */
  close(): void {
    this.policies.close();
    this.spliced.close();
    this.clients.http.close();
    this.clients.h2c.close();
    this.clients.h2.close();
    this.tlsClients.close();
  }

  /** upstreamClients exposes the pools (tests assert connection reuse; metrics count them). */
  upstreamClients(): { http: Http1Client; h2c: Http2Client; h2: Http2Client } {
    return this.clients;
  }

  private serveHttp(table: RouteTable, ds: Downstream, conn: ConnectionFacts, context: TunnelStreamContext): void {
    this.observer?.observe(ds, context);
    const routed = resolveRequest(table, ds, conn);
    if (!('route' in routed)) return sendLocalResponse(ds, routed.status, routed.body, routed.headers);
    this.observer?.routed?.(ds, routed.route.id);
    if (routed.policies !== undefined) return this.serveHttpWithPolicies(routed, routed.policies, ds, conn, context);
    const plan = planRequest(routed.route, routed.facts);
    if (plan.kind === 'local') return sendLocalResponse(ds, plan.status, plan.body, plan.headers);
    if (plan.externalAuth) return this.forwardAuthorized(routed.route, ds, plan, routed.facts, context, [plan.externalAuth]);
    forwardRequest(this.deps, routed.route, ds, plan, context);
  }

  /**
   * forwardAuthorized asks the plan's external authorization first (external-auth.ts): allowed,
   * the request goes on with the headers the answer lets through (and the body it read, if it did);
   * refused, the client gets the answer.
   */
  private forwardAuthorized(
    route: RoutedRequest['route'],
    ds: Downstream,
    plan: ForwardPlan,
    facts: RoutedRequest['facts'],
    context: TunnelStreamContext,
    checks: readonly ExternalAuthFilter[],
    onLocal?: (local: LocalAnswer) => void,
  ): void {
    authorizeAll(this.deps, checks, facts, ds, (verdict) => {
      if (verdict.kind === 'local') return onLocal ? onLocal(verdict) : sendLocalResponse(ds, verdict.status, verdict.body, verdict.headers);
      Object.assign(plan.headers, verdict.headers);
      forwardRequest(this.deps, route, verdict.body === undefined ? ds : withBody(ds, verdict.body), plan, context);
    });
  }

  /** serveHttpWithPolicies applies a route's policies (src/dataplane/policies), then forwards as serveHttp does. */
  private serveHttpWithPolicies(routed: RoutedRequest, p: CompiledPolicies, ds: Downstream, conn: ConnectionFacts, context: TunnelStreamContext): void {
    const proceed = (local: LocalAnswer | undefined): void => {
      if (local) return sendLocalResponse(ds, local.status, local.body, local.headers);
      const plan = planRequest(p.route, routed.facts);
      if (plan.kind === 'local') return void sendLocalResponse(ds, plan.status, plan.body, withResponseHeaders(p, plan).headers);
      // A declared length was judged already; only a body of unknown length is counted on the way.
      const isCounted = p.maxBodyBytes !== undefined && ds.hasBody && ds.headers['content-length'] === undefined;
      const down = isCounted ? limitBody(ds, p.maxBodyBytes) : ds;
      const decorated = decoratePlan(p, plan, req);
      const checks = authorizations(p, decorated);
      if (checks.length > 0) return this.forwardAuthorized(p.route, down, decorated, routed.facts, context, checks, (a) => sendLocalResponse(ds, a.status, a.body, withResponseHeaders(p, a).headers));
      forwardRequest(this.deps, p.route, down, decorated, context);
    };
    const req: PolicyRequest = { facts: routed.facts, publicScheme: conn.scheme, isUpgrade: false };
    gatePolicies(p, req, proceed, (err) => {
      this.onError(err, context);
      sendLocalResponse(ds, 500, 'policy error\n');
    });
  }

  /** planUpgrade plans a WebSocket handshake, after the route's policies when it has any. */
  private planUpgrade(routed: RoutedRequest, conn: ConnectionFacts, context: TunnelStreamContext, onLocal: (local: LocalAnswer) => void, onForward: (plan: ForwardPlan) => void): void {
    const p = routed.policies;
    const req: PolicyRequest = { facts: routed.facts, publicScheme: conn.scheme, isUpgrade: true };
    const plan = (): void => {
      const planned = planRequest(p?.route ?? routed.route, routed.facts);
      if (planned.kind === 'local') return onLocal(p ? withResponseHeaders(p, planned) : planned);
      const decorated = p ? decoratePlan(p, planned, req) : planned;
      const checks = authorizations(p, decorated);
      if (checks.length === 0) return onForward(decorated);
      // an upgrade is asked about without its body (it has none before the switch)
      authorizeAll(this.deps, checks, routed.facts, undefined, (verdict) => {
        if (verdict.kind === 'local') return onLocal(p ? withResponseHeaders(p, verdict) : verdict);
        Object.assign(decorated.headers, verdict.headers);
        onForward(decorated);
      });
    };
    if (p === undefined) return plan();
    gatePolicies(p, req, (local) => (local ? onLocal(local) : plan()), (err) => {
      this.onError(err, context);
      onLocal({ kind: 'local', status: 500, body: 'policy error\n', headers: {} });
    });
  }

  private serveWebSocket(table: RouteTable, stream: ServerHttp2Stream, headers: IncomingHttpHeaders, conn: ConnectionFacts, context: TunnelStreamContext): void {
    const ds = downstreamFromHttp2(stream, headers);
    const routed = resolveRequest(table, ds, conn, 'GET');
    if (!('route' in routed)) return sendLocalResponse(ds, routed.status, routed.body, routed.headers);
    const onLocal = (local: LocalAnswer): void => sendLocalResponse(ds, local.status, local.body, local.headers);
    this.planUpgrade(routed, conn, context, onLocal, (plan) => {
      try {
        proxyWebSocket(this.deps, routed.route, ds, stream, plan);
      } catch (err) {
        this.onError(err, context);
        sendLocalResponse(ds, 502, 'proxy error\n');
      }
    });
  }

  /** serveHttp1Upgrade routes a WebSocket Upgrade found inside terminated TLS (others get 501). */
  private serveHttp1Upgrade(table: RouteTable, req: IncomingMessage, socket: Duplex, head: Buffer, conn: ConnectionFacts, context: TunnelStreamContext): void {
    const local = (status: number, body: string, headers: Record<string, string> = {}): void => writeLocal(socket, { kind: 'local', status, body, headers });
    if (String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return local(501, 'only WebSocket upgrades are supported\n');
    const line = { method: req.method ?? '', target: req.url ?? '', authority: req.headers.host ?? '', headers: req.headers };
    const routed = resolveRequest(table, line, conn, 'GET');
    if (!('route' in routed)) return local(routed.status, routed.body, routed.headers);
    this.planUpgrade(routed, conn, context, (answer) => writeLocal(socket, answer), (plan) => proxyHttp1Upgrade(this.deps, routed.route, plan, req, socket, head));
  }

  /** serveUdp relays one UDP flow (a plain CONNECT, docs/protocol.md §4.6) to the route of the binding's `udp` listener. */
  private serveUdp(table: RouteTable, stream: ServerHttp2Stream, headers: IncomingHttpHeaders, entry: EntryPoint): void {
    const observer = this.udpObserver;
    if (!this.acceptsUdp || headers[':method'] !== 'CONNECT' || headers[':protocol'] !== undefined) {
      observer?.refused('udp-off');
      return void stream.respond({ ':status': 400 }, { endStream: true });
    }
    const result = routeDatagram(table, entry);
    if (result.kind === 'none') {
      observer?.refused('no-route');
      return void stream.respond({ ':status': 404 }, { endStream: true });
    }
    proxyUdp(this.deps, stream, result.backends, { idleTimeoutMs: this.udpIdleTimeoutMs, open: this.udpFlows, observer });
  }

  /**
   * serveRawStream handles a plain CONNECT: TLS to terminate here, or bytes for a TCP/TLS route.
   * The CONNECT `:authority` carries the SNI name (or the public host) the edge routed on.
   */
  private serveRawStream(table: RouteTable, stream: ServerHttp2Stream, headers: IncomingHttpHeaders, entry: EntryPoint, context: TunnelStreamContext): void {
    const sni = normalizeHost(headers[':authority'] ?? '');
    const result = routeStream(table, entry, sni);
    if (result.kind === 'none') return void stream.respond({ ':status': 404 }, { endStream: true });
    if (result.kind === 'forward') return proxyTcp(this.deps, stream, result.backends);
    const tlsOptions = { handshakeTimeoutMs: 10_000, http2Settings: { enableConnectProtocol: true } };
    if (result.kind === 'terminate-forward') {
      const refuse = (): void => undefined;
      const onDecryptedSocket = (socket: Duplex): void => proxyDecrypted(this.deps, socket, result.backends);
      return terminateTls(stream, result.listeners, this.contexts, { onDecryptedSocket, onHttp2Stream: refuse, onHttp1Request: refuse, onHttp1Upgrade: refuse }, tlsOptions, sni);
    }
    // The SNI rides along so that a request whose Host belongs to another listener gets 421; a
    // verified client certificate rides along to become the backend's x-forwarded-client-cert.
    const connFor = (tlsConn: TerminatedConnection): ConnectionFacts => {
      const name = tlsConn.sni === undefined ? undefined : normalizeHost(tlsConn.sni);
      const inner: EntryPoint = { ...entry, publicProtocol: 'https', ...(name === undefined ? {} : { sni: name }) };
      const identity = tlsConn.clientCertificate === undefined ? {} : { clientCertificate: tlsConn.clientCertificate };
      return { clientAddress: context.clientAddress, scheme: 'https', entry: inner, ...identity };
    };
    terminateTls(
      stream,
      result.listeners,
      this.contexts,
      {
        // A decrypted request is routed on the table in force when it arrives, like a tunnel stream.
        onHttp2Stream: (s, h, sni) => {
          s.on('error', () => undefined);
          if (h[':method'] !== 'CONNECT') return this.serveHttp(this.table, downstreamFromHttp2(s, h), connFor(sni), context);
          if (h[':protocol'] === 'websocket') return this.serveWebSocket(this.table, s, h, connFor(sni), context);
          s.respond({ ':status': 501 }, { endStream: true });
        },
        onHttp1Request: (req: IncomingMessage, res: ServerResponse, sni) => this.serveHttp(this.table, downstreamFromHttp1(req, res), connFor(sni), context),
        onHttp1Upgrade: (req, socket, head, sni) => this.serveHttp1Upgrade(this.table, req, socket, head, connFor(sni), context),
      },
      tlsOptions,
      sni,
    );
  }
}

function splicedFacts(c: SplicedConnection): ConnectionFacts {
  const { context } = c;
  const entry: EntryPoint = { bindingId: context.bindingId, publicPort: context.publicPort, publicProtocol: context.publicProtocol };
  return { clientAddress: context.clientAddress, scheme: c.scheme, entry, splicedHost: c.routedHost ?? '' };
}

function requestContext(c: SplicedConnection, req: IncomingMessage): TunnelStreamContext {
  const id = req.headers['x-request-id'];
  return { ...c.context, requestId: typeof id === 'string' ? id : c.context.requestId };
}

function isSecure(protocol: TunnelStreamContext['publicProtocol']): boolean {
  return protocol === 'https' || protocol === 'tls';
}

/** authorizations are the external authorizations a request must pass: its route policy's, then its rule's filter's. */
function authorizations(p: CompiledPolicies | undefined, plan: ForwardPlan): ExternalAuthFilter[] {
  const out: ExternalAuthFilter[] = [];
  if (p?.externalAuth) out.push(p.externalAuth);
  if (plan.externalAuth) out.push(plan.externalAuth);
  return out;
}
