/** Small builders for route-graph nodes in unit tests. */
import type { Binding, HttpRoute, Listener, RouteGraph, ServiceBackend, VirtualHost } from '../../src/model/index.js';
import { emptyGraph } from '../../src/model/index.js';

const src = { group: 'networking.k8s.io', kind: 'Ingress', namespace: 'default', name: 'web' };

/** hostBinding builds a host binding with its http listener. */
export function hostBinding(host: string): { binding: Binding; listener: Listener } {
  const id = `binding/host/${host}`;
  return {
    binding: { id, kind: 'host', hostnames: [host], source: src },
    listener: { id: `${id}/listener/http`, bindingId: id, name: 'http', port: 80, protocol: 'http', source: src },
  };
}

/** serviceBackend builds a Service backend of weight 1. */
export function serviceBackend(service: string, port = 80): ServiceBackend {
  return { kind: 'service', namespace: 'default', service, port, portName: '', protocol: 'http', weight: 1 };
}

/** route builds an HTTP route with a path match. */
export function route(id: string, path: HttpRoute['match']['path'], extra: Partial<HttpRoute> = {}): HttpRoute {
  return {
    id,
    source: src,
    origin: { created: '2026-01-01T00:00:00Z', key: 'default/web', rule: 0, match: 0 },
    match: { path, headers: [], query: [] },
    filters: [],
    backends: [serviceBackend('app')],
    ...extra,
  };
}

/** graphWith builds a graph holding one host with the given routes. */
export function graphWith(host: string, routes: HttpRoute[]): RouteGraph {
  const { binding, listener } = hostBinding(host);
  const vhost: VirtualHost = { id: `${listener.id}/vhost/${host}`, listenerId: listener.id, hostname: host, routes };
  return { ...emptyGraph(), bindings: [binding], listeners: [listener], virtualHosts: [vhost] };
}
