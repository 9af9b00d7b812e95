import type { Backend, HttpRoute, Listener, RouteGraph, RoutePolicies, ServiceBackend } from '../../model/index.js';
import { compareStrings, emptyGraph } from '../../model/index.js';
import { sourceOf } from '../common/meta.js';
import type { HostClaim } from '../types.js';
import type { IngressEntry } from './entry.js';
import type { HostRoutes, RouteTable } from './route-table.js';

/** Public ports of the edge's shared listeners for Ingress hosts. */
const httpPort = 80;
const httpsPort = 443;

/** IngressGraph is the Ingress fragment: the graph and one HostClaim per (Ingress, host). */
export interface IngressGraph {
  graph: RouteGraph;
  claims: HostClaim[];
}

/** RouteSpec is one route to emit, before it is copied onto each listener of the host. */
interface RouteSpec {
  owner: IngressEntry;
  /** `rule/0/match/1` or `default-backend/<host>` */
  path: string;
  section: string;
  rule: number;
  match: number;
  matchPath: HttpRoute['match']['path'];
  backend: ServiceBackend;
}

/**
 * buildHostGraphs turns the resolved route table into graph nodes, one IngressGraph per host (in
 * host order), so that an incremental translation can replace the hosts a change touched and keep
 * the others. Each host with at least one route becomes `binding/host/<host>` with an http listener
 * (port 80) and, when it has a certificate, an https listener (port 443, TLS terminated in the
 * cluster); both carry the same routes. A binding's source is the oldest Ingress with a route on
 * it. Hosts with no route are not published. Marks on each entry the hosts where its routes were
 * placed.
 */
export function buildHostGraphs(table: RouteTable): Map<string, IngressGraph> {
  const out = new Map<string, IngressGraph>();
  const hosts = [...table.values()].sort((a, b) => compareStrings(a.host, b.host));
  for (const routes of hosts) {
    const built = buildHostGraph(routes);
    if (built !== undefined) out.set(routes.host, built);
  }
  return out;
}

/** buildIngressGraph is the whole Ingress fragment: every host's nodes and claims, in host order. */
export function buildIngressGraph(table: RouteTable): IngressGraph {
  return joinHostGraphs(buildHostGraphs(table).values());
}

/** joinHostGraphs concatenates per-host graphs into one fragment graph (merge canonicalises the order). */
export function joinHostGraphs(parts: Iterable<IngressGraph>): IngressGraph {
  const graph = emptyGraph();
  const claims: HostClaim[] = [];
  for (const part of parts) {
    for (const b of part.graph.bindings) graph.bindings.push(b);
    for (const l of part.graph.listeners) graph.listeners.push(l);
    for (const v of part.graph.virtualHosts) graph.virtualHosts.push(v);
    for (const c of part.claims) claims.push(c);
  }
  return { graph, claims };
}

function buildHostGraph(routes: HostRoutes): IngressGraph | undefined {
  const specs = routeSpecs(routes);
  const owners = [...new Set(specs.map((s) => s.owner))].sort((a, b) => a.rank - b.rank);
  const owner = owners[0];
  if (owner === undefined) return undefined;
  const graph = emptyGraph();
  const claims: HostClaim[] = [];
  const bindingId = `binding/host/${routes.host}`;
  graph.bindings.push({ id: bindingId, kind: 'host', hostnames: [routes.host], source: sourceOf(owner.ref) });
  const listeners: Listener[] = [
    { id: `${bindingId}/listener/http`, bindingId, name: 'http', port: httpPort, protocol: 'http', source: sourceOf(owner.ref) },
  ];
  const cert = routes.certificate;
  if (cert)
    listeners.push({
      id: `${bindingId}/listener/https`,
      bindingId,
      name: 'https',
      port: httpsPort,
      protocol: 'https',
      tls: { mode: 'terminate-in-cluster', certificates: [cert.secret] },
      source: sourceOf(cert.owner.ref, `tls/${cert.tlsIndex}`),
    });
  for (const listener of listeners) {
    graph.listeners.push(listener);
    graph.virtualHosts.push({
      id: `${listener.id}/vhost/${routes.host}`,
      listenerId: listener.id,
      hostname: routes.host,
      routes: specs.map((s) => toRoute(s, listener.name, cert !== undefined)),
    });
  }
  for (const o of owners) {
    o.published.add(routes.host);
    claims.push({ hostname: routes.host, bindingId, owner: o.ref, created: o.created });
  }
  return { graph, claims };
}

function routeSpecs(routes: HostRoutes): RouteSpec[] {
  const specs: RouteSpec[] = [...routes.paths.values()].map((c) => ({
    owner: c.owner,
    path: `rule/${c.rule}/match/${c.path}`,
    section: `rule/${c.rule}/path/${c.path}`,
    rule: c.rule,
    match: c.path,
    matchPath: c.match,
    backend: c.backend,
  }));
  const fallback = routes.fallback;
  if (fallback)
    specs.push({
      owner: fallback.owner,
      path: `default-backend/${routes.host}`,
      section: 'defaultBackend',
      // after every rule of its Ingress: a defaultBackend is the last resort
      rule: fallback.owner.ingress.spec?.rules?.length ?? 0,
      match: 0,
      matchPath: { type: 'Prefix', value: '/' },
      backend: fallback.backend,
    });
  return specs;
}

/** routePolicies gives the policies of the owner's ingress-nginx annotations on a host with or without a certificate. */
function routePolicies(owner: IngressEntry, hasCertificate: boolean): RoutePolicies | undefined {
  const nginx = owner.nginx;
  if (!nginx) return undefined;
  const redirect = nginx.forceSslRedirect || (nginx.sslRedirect && hasCertificate);
  const policies: RoutePolicies = redirect ? { ...nginx.policies, httpsRedirect: { statusCode: 308 } } : nginx.policies;
  return Object.keys(policies).length > 0 ? policies : undefined;
}

function toRoute(spec: RouteSpec, listener: string, hasCertificate: boolean): HttpRoute {
  const backends: Backend[] = [spec.backend];
  const policies = routePolicies(spec.owner, hasCertificate);
  return {
    id: `ingress/${spec.owner.key}/${listener}/${spec.path}`,
    source: sourceOf(spec.owner.ref, spec.section),
    origin: { created: spec.owner.created, key: spec.owner.key, rule: spec.rule, match: spec.match },
    match: { path: spec.matchPath, headers: [], query: [] },
    filters: spec.owner.nginx?.externalAuth ? [{ type: 'ExternalAuth', ...spec.owner.nginx.externalAuth }] : [],
    backends,
    ...(policies ? { policies } : {}),
  };
}
