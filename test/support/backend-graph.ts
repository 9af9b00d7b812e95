import type { Backend, HttpFilter, HttpMatch, HttpRoute, Listener, RouteGraph, ServiceBackend, StreamRoute } from '../../src/model/index.js';
import { canonicalize, emptyGraph } from '../../src/model/index.js';

/** Builders of small route graphs for data-plane tests. */

/** serviceBackend names `default/<service>` port 80, protocol http, weight 1 unless overridden. */
export function serviceBackend(service: string, overrides: Partial<ServiceBackend> = {}): ServiceBackend {
  return { kind: 'service', namespace: 'default', service, port: 80, portName: 'http', protocol: 'http', weight: 1, ...overrides };
}

/** httpRoute builds a route; the match defaults to Prefix `/`. */
export function httpRoute(
  id: string,
  backends: Backend[],
  options: { match?: Partial<HttpMatch>; filters?: HttpFilter[]; rule?: number; extra?: Partial<HttpRoute> } = {},
): HttpRoute {
  return {
    id: `test/${id}`,
    source: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default', name: id },
    origin: { created: '', key: `default/${id}`, rule: options.rule ?? 0, match: 0 },
    match: { path: { type: 'Prefix', value: '/' }, headers: [], query: [], ...options.match },
    filters: options.filters ?? [],
    backends,
    ...options.extra,
  };
}

/** VirtualHostSpec is one hostname and its routes. */
export interface VirtualHostSpec {
  hostname: string;
  routes: HttpRoute[];
}

/** BINDING is the binding id every test graph uses. */
export const BINDING = 'binding/host/test';

/**
 * hostGraph builds one binding with an HTTP listener on port 80 holding the given virtual hosts,
 * in canonical order (routes sorted by the Gateway API precedence as the translators emit them).
 */
export function hostGraph(vhosts: VirtualHostSpec[], more: { listeners?: Listener[]; streamRoutes?: StreamRoute[] } = {}): RouteGraph {
  const graph = emptyGraph();
  const hostnames = vhosts.map((v) => v.hostname).filter((h) => h !== '*');
  graph.bindings.push({ id: BINDING, kind: 'host', hostnames: hostnames.length > 0 ? hostnames : ['test.localhost'], source: src('binding') });
  const listener: Listener = { id: `${BINDING}/listener/http`, bindingId: BINDING, name: 'http', port: 80, protocol: 'http', source: src('listener') };
  graph.listeners.push(listener, ...(more.listeners ?? []));
  for (const v of vhosts) graph.virtualHosts.push({ id: `${listener.id}/vhost/${v.hostname}`, listenerId: listener.id, hostname: v.hostname, routes: v.routes });
  graph.streamRoutes.push(...(more.streamRoutes ?? []));
  return canonicalize(graph);
}

function src(name: string): HttpRoute['source'] {
  return { group: 'test', kind: 'Test', namespace: 'default', name };
}
