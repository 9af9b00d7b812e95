import type { Backend, Binding, HttpRoute, Listener, ListenerProtocol, RouteGraph, StreamRoute, VirtualHost } from '../model/index.js';
import { OIDC_PATH_PREFIX } from '../model/index.js';
import { matchesWildcard, selectByHost, wildcardDepthOf } from './host.js';
import type { WildcardDepth } from '../wire/index.js';
import { compileMatch } from './match.js';
import type { CompiledMatch, RequestFacts } from './match.js';
import type { CompiledPolicies } from './policies/compile.js';

/**
 * The router: a pure lookup over one compiled route graph. binding → the listeners of the public
 * port → virtual host (exact, longest wildcard, `*`) → the first route, in graph order, whose match
 * holds. The graph's order is the Gateway API precedence (src/model/order.ts), so first match wins.
 */

/** CompiledRoute is one HttpRoute with its match precompiled. */
export interface CompiledRoute {
  route: HttpRoute;
  matches: CompiledMatch;
  /** the route's policies (its own over its binding's defaults); absent when it has none */
  policies?: CompiledPolicies;
}

/** PolicyCompile builds the policies in force on a route of a binding (src/dataplane/policies). */
export type PolicyCompile = (route: HttpRoute, binding: Binding | undefined) => CompiledPolicies | undefined;

/** CompiledVirtualHost is a virtual host with its routes precompiled, in precedence order. */
export interface CompiledVirtualHost {
  vhost: VirtualHost;
  listener: Listener;
  routes: CompiledRoute[];
}

/** RouteTable is the compiled form of a graph; it is immutable, so a request can keep its own. */
export interface RouteTable {
  readonly graph: RouteGraph;
  readonly listenersByBinding: ReadonlyMap<string, Listener[]>;
  readonly vhostsByListener: ReadonlyMap<string, CompiledVirtualHost[]>;
  readonly streamRoutesByListener: ReadonlyMap<string, StreamRoute[]>;
  /**
   * the HTTP listeners and virtual hosts of each entry point a request came in by, per binding id,
   * filled on first use (routeHttp's per-request lookup without arrays or closures); at most
   * `maxCachedEntries` per binding, since the port is whatever the edge sends
   */
  readonly httpEntries: Map<string, HttpEntry[]>;
}

/** HttpEntry is what routeHttp needs of one entry point (binding, public port and protocol). */
interface HttpEntry {
  publicPort: number;
  publicProtocol: ListenerProtocol;
  listeners: Listener[];
  vhosts: CompiledVirtualHost[];
}

const maxCachedEntries = 16;

/** compileRouteTable compiles every match of the graph once, and with `compilePolicies` every route's policies. */
export function compileRouteTable(graph: RouteGraph, compilePolicies?: PolicyCompile): RouteTable {
  const listeners = new Map(graph.listeners.map((l) => [l.id, l]));
  const bindings = new Map(graph.bindings.map((b) => [b.id, b]));
  const listenersByBinding = groupBy(graph.listeners, (l) => l.bindingId);
  const vhostsByListener = new Map<string, CompiledVirtualHost[]>();
  for (const vhost of graph.virtualHosts) {
    const listener = listeners.get(vhost.listenerId);
    if (!listener) continue;
    const binding = bindings.get(listener.bindingId);
    const list = vhostsByListener.get(listener.id) ?? [];
    list.push(compileVirtualHost(vhost, listener, binding, compilePolicies));
    vhostsByListener.set(listener.id, list);
  }
  const streamRoutesByListener = groupBy(graph.streamRoutes, (r) => r.listenerId);
  return { graph, listenersByBinding, vhostsByListener, streamRoutesByListener, httpEntries: new Map() };
}

/**
 * withoutPolicies holds each virtual host compiled with no policy on any of its routes, with the
 * listener and binding it was compiled under: such a compilation is plain data and closures over
 * the matches, so the next graph's same virtual host (canonicalize hands the same object for an
 * unchanged one) under the same listener and binding takes it as it is. At 10,000 hosts compiling
 * every match again was about a tenth of each sync (docs/tunnel-performance.md §13). A virtual host
 * with policies is compiled each time: its policies' state is the data plane's (PolicyCompiler).
 */
const withoutPolicies = new WeakMap<VirtualHost, { compiled: CompiledVirtualHost; binding: Binding | undefined }>();

function compileVirtualHost(vhost: VirtualHost, listener: Listener, binding: Binding | undefined, compilePolicies: PolicyCompile | undefined): CompiledVirtualHost {
  const known = withoutPolicies.get(vhost);
  if (known !== undefined && known.compiled.listener === listener && known.binding === binding) return known.compiled;
  let hasPolicies = false;
  const routes = vhost.routes.map((route): CompiledRoute => {
    const policies = compilePolicies?.(route, binding);
    if (policies === undefined) return { route, matches: compileMatch(route.match) };
    hasPolicies = true;
    return { route, matches: compileMatch(route.match), policies };
  });
  const compiled = { vhost, listener, routes };
  // without a policy compiler a route's policies are not looked at: nothing to keep for a compile that has one
  if (!hasPolicies && compilePolicies !== undefined) withoutPolicies.set(vhost, { compiled, binding });
  return compiled;
}

function groupBy<T>(items: readonly T[], keyOf: (x: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of items) {
    const list = out.get(keyOf(x)) ?? [];
    list.push(x);
    out.set(keyOf(x), list);
  }
  return out;
}

/** EntryPoint says where a stream arrived: the binding, the public port and protocol at the edge. */
export interface EntryPoint {
  bindingId: string;
  publicPort: number;
  publicProtocol: ListenerProtocol;
  /** the TLS server name the client sent, when its TLS was terminated here (the data plane) */
  sni?: string;
}

/**
 * selectListeners returns the binding's listeners on the public port. The edge may publish a
 * listener on another port than the graph names (a development edge on a random port, 80 → 8080),
 * so when no listener has that port, the listeners speaking the public protocol are used instead.
 */
export function selectListeners(table: RouteTable, entry: EntryPoint, protocols: readonly ListenerProtocol[]): Listener[] {
  const all = (table.listenersByBinding.get(entry.bindingId) ?? []).filter((l) => protocols.includes(l.protocol));
  const onPort = all.filter((l) => l.port === entry.publicPort);
  if (onPort.length > 0) return onPort;
  const sameProtocol = all.filter((l) => l.protocol === entry.publicProtocol);
  return sameProtocol.length > 0 ? sameProtocol : all;
}

/** HttpRouteResult is the outcome of routing one HTTP request. */
export type HttpRouteResult =
  | { kind: 'route'; vhost: CompiledVirtualHost; route: HttpRoute; policies: CompiledPolicies | undefined }
  | { kind: 'no-host' }
  | { kind: 'no-route'; vhost: CompiledVirtualHost }
  | { kind: 'misdirected'; sni: string };

/**
 * routeHttp finds the route of an HTTP request whose normalised host is `host`. On a connection
 * whose TLS was terminated here, a Host that another listener serves is `misdirected` (421).
 */
export function routeHttp(table: RouteTable, entry: EntryPoint, host: string, req: RequestFacts): HttpRouteResult {
  const { listeners, vhosts } = httpEntry(table, entry);
  if (entry.sni !== undefined && isMisdirected(listeners, entry.sni, host)) return { kind: 'misdirected', sni: entry.sni };
  const vhost = selectByHost(vhosts, hostnameOfVhost, host, depthOfVhost);
  if (!vhost) return { kind: 'no-host' };
  // The oidc policy's callback and logout are paths of the host, whatever its routes match: they go to the host's route with that policy.
  if (req.path.startsWith(OIDC_PATH_PREFIX)) for (const r of vhost.routes) if (r.policies?.oidc !== undefined) return { kind: 'route', vhost, route: r.route, policies: r.policies };
  for (const r of vhost.routes) if (r.matches(req)) return { kind: 'route', vhost, route: r.route, policies: r.policies };
  return { kind: 'no-route', vhost };
}

const httpProtocols: readonly ListenerProtocol[] = ['http', 'https'];

/** httpEntry returns the HTTP listeners of an entry point and their virtual hosts, from the table's cache when it holds them. */
function httpEntry(table: RouteTable, entry: EntryPoint): HttpEntry {
  let cached = table.httpEntries.get(entry.bindingId);
  if (cached !== undefined) {
    for (const e of cached) if (e.publicPort === entry.publicPort && e.publicProtocol === entry.publicProtocol) return e;
  }
  const listeners = selectListeners(table, entry, httpProtocols);
  const vhosts = listeners.flatMap((l) => table.vhostsByListener.get(l.id) ?? []);
  const made: HttpEntry = { publicPort: entry.publicPort, publicProtocol: entry.publicProtocol, listeners, vhosts };
  if (cached === undefined) table.httpEntries.set(entry.bindingId, (cached = []));
  if (cached.length < maxCachedEntries) cached.push(made);
  return made;
}

function hostnameOfVhost(v: CompiledVirtualHost): string {
  return v.vhost.hostname;
}

function depthOfVhost(v: CompiledVirtualHost): WildcardDepth {
  return wildcardDepthOf(v.listener);
}

/**
 * listenerForName picks the listener whose hostname best fits `name` (Gateway API listener
 * precedence): the exact hostname, then the longest wildcard (at the listener's wildcard depth),
 * then a listener without hostname.
 */
export function listenerForName(listeners: readonly Listener[], name: string): Listener | undefined {
  return selectByHost(listeners, (l) => l.hostname ?? '*', name, wildcardDepthOf);
}

/**
 * isMisdirected says whether a request for `host` arrived on a TLS connection opened for `sni`
 * that belongs to another listener: among the HTTPS listeners of the port, the one the SNI
 * selects is not the one the Host selects (RFC 9110 §15.5.20; Gateway API `Listener.hostname`).
 * A Host no listener serves is not misdirected: it gets the listener's 404.
 */
export function isMisdirected(listeners: readonly Listener[], sni: string, host: string): boolean {
  const https = listeners.filter((l) => l.protocol === 'https');
  const byHost = listenerForName(https, host);
  return byHost !== undefined && byHost.id !== listenerForName(https, sni)?.id;
}

/** StreamRouteResult is what a raw CONNECT stream is for. */
export type StreamRouteResult =
  | { kind: 'terminate'; listeners: Listener[] }
  | { kind: 'terminate-forward'; listeners: Listener[]; route: StreamRoute; backends: Backend[] }
  | { kind: 'forward'; route: StreamRoute; backends: Backend[] }
  | { kind: 'none' };

/**
 * routeStream decides what a raw byte stream (TCP port or TLS by SNI) is for: TLS to terminate here
 * (listeners with `terminate-in-cluster`) and then either HTTP to route, or — for a `tls`
 * listener with TLSRoutes (Gateway API TLS mode Terminate) — decrypted bytes to forward; or bytes
 * to forward as they are (TCP, TLS passthrough). `sni` is the server name when known.
 */
export function routeStream(table: RouteTable, entry: EntryPoint, sni: string | undefined): StreamRouteResult {
  const listeners = selectListeners(table, entry, ['tcp', 'tls', 'https']);
  const bySni = listeners.filter((l) => l.tls?.mode === 'terminate-in-cluster' || l.tls?.mode === 'passthrough');
  if (bySni.length > 0 && (entry.publicProtocol === 'tls' || entry.publicProtocol === 'https')) return routeTlsStream(table, bySni, sni);
  const route = selectStreamRoute(
    listeners.flatMap((l) => table.streamRoutesByListener.get(l.id) ?? []),
    sni,
  );
  return route ? { kind: 'forward', route, backends: route.backends } : { kind: 'none' };
}

/**
 * routeTlsStream picks the listener of a raw TLS stream by its SNI first (Gateway API "Listeners
 * that are distinct only by Hostname": exact, then the longest wildcard, then no hostname; "TLS: the
 * Listener Hostname MUST match the SNI"), then does what that listener's mode says, so that with
 * Terminate and Passthrough listeners on one port (TLSRouteModeMixed) a name the passthrough
 * listener owns is never decrypted here and a name a terminating listener owns is never passed
 * through. A stream that selects no listener is rejected ("the request MUST be rejected"), except
 * on a port with HTTPS listeners, where it is terminated and rejected in HTTP: a Host another
 * listener serves gets 421, any other 404 (Listener.hostname on misdirected requests).
 */
function routeTlsStream(table: RouteTable, listeners: readonly Listener[], sni: string | undefined): StreamRouteResult {
  const https = listeners.filter((l) => l.protocol === 'https' && l.tls?.mode === 'terminate-in-cluster');
  const chosen = listenerForName(listeners, sni ?? '');
  if (chosen === undefined) return https.length > 0 ? { kind: 'terminate', listeners: https } : { kind: 'none' };
  if (chosen.protocol === 'https') return { kind: 'terminate', listeners: https };
  const route = selectStreamRoute(table.streamRoutesByListener.get(chosen.id) ?? [], sni);
  if (route === undefined) return { kind: 'none' };
  if (chosen.tls?.mode === 'passthrough') return { kind: 'forward', route, backends: route.backends };
  return { kind: 'terminate-forward', listeners: [chosen], route, backends: route.backends };
}

/**
 * selectStreamRoute picks the route whose hostnames name the SNI (exact or wildcard), else one
 * without hostnames; without an SNI, the first route.
 */
function selectStreamRoute(routes: readonly StreamRoute[], sni: string | undefined): StreamRoute | undefined {
  const named = sni === undefined ? undefined : routes.find((r) => r.hostnames.some((h) => h === sni || matchesWildcard(h, sni)));
  return named ?? routes.find((r) => r.hostnames.length === 0) ?? (sni === undefined ? routes[0] : undefined);
}

/**
 * routeDatagram picks the stream route of a UDP flow: a route of the binding's `udp` listeners on
 * the public port (or, as for TCP, of its `udp` listeners when none has that port). UDP carries no
 * name to choose by, so the first route without hostnames wins, else the first.
 */
export function routeDatagram(table: RouteTable, entry: EntryPoint): { kind: 'forward'; route: StreamRoute; backends: Backend[] } | { kind: 'none' } {
  const routes = selectListeners(table, entry, ['udp']).flatMap((l) => table.streamRoutesByListener.get(l.id) ?? []);
  const route = selectStreamRoute(routes, undefined);
  return route ? { kind: 'forward', route, backends: route.backends } : { kind: 'none' };
}
