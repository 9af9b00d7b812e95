/**
 * The graph of one accepted Tunnel. Ids are path-like and owned by the Tunnel, so a Tunnel's
 * fragment never collides with another Tunnel's (docs/translators/crd.md lists them).
 *
 * - http: host binding `binding/host/<hostname>`, listener `http` (80) and listener `https` (443,
 *   TLS mode `edge`: the edge terminates with its own certificate, DESIGN "TLS modes"; shown in the
 *   graph so the edge and the data plane see that the host is served on 443 as well), one virtual
 *   host on each with one route `/` (Prefix) → the Service.
 * - tls: host binding with one listener `tls` (443, passthrough) and a StreamRoute whose SNI is
 *   the hostname; the backend terminates TLS.
 * - tcp: tcp-port binding `binding/tcp-port/tunnel/<ns>/<tunnel>/<requested port>` (0 = any), listener
 *   `tcp` and a StreamRoute.
 */
import type { Tunnel } from '../../crd/index.js';
import type { HttpRoute, RouteGraph, ServiceBackend, SourceRef } from '../../model/index.js';
import { emptyGraph } from '../../model/index.js';
import { createdOf } from '../common/meta.js';
import { crdKey } from './status.js';

/** TunnelTarget is where an accepted Tunnel points: its hostname (http, tls) or requested port (tcp). */
export type TunnelTarget = { protocol: 'http' | 'tls'; hostname: string } | { protocol: 'tcp'; port: number };

function httpRoute(tunnel: Tunnel, source: SourceRef, listener: string, backend: ServiceBackend): HttpRoute {
  return {
    id: `tunnel/${crdKey(tunnel)}/${listener}/rule/0/match/0`,
    source,
    origin: { created: createdOf(tunnel), key: crdKey(tunnel), rule: 0, match: 0 },
    match: { path: { type: 'Prefix', value: '/' }, headers: [], query: [] },
    filters: [],
    backends: [backend],
  };
}

/**
 * tunnelGraph builds the fragment graph of one accepted Tunnel. Every node gets its own copy of
 * the source and backend: graph nodes are plain data that consumers may keep and compare, and
 * shared references would tie them together.
 */
export function tunnelGraph(tunnel: Tunnel, owner: SourceRef, target: TunnelTarget, service: ServiceBackend): RouteGraph {
  const graph = emptyGraph();
  const source = (): SourceRef => ({ ...owner });
  const backend = (): ServiceBackend => ({ ...service });
  if (target.protocol === 'tcp') {
    // `tunnel/` keeps the id apart from a LoadBalancer Service's `binding/tcp-port/<ns>/<name>/<port>`:
    // a Tunnel and a Service of one name may coexist, and graph ids must be unique.
    const bindingId = `binding/tcp-port/tunnel/${crdKey(tunnel)}/${target.port}`;
    const listenerId = `${bindingId}/listener/tcp`;
    graph.bindings.push({ id: bindingId, kind: 'tcp-port', hostnames: [], port: target.port, source: source() });
    // A listener needs a real port; with "any port" the edge's choice is not known here, so the
    // listener carries the Service port and the assigned one is reported in TCPPort/Tunnel status.
    graph.listeners.push({ id: listenerId, bindingId, name: 'tcp', port: target.port || service.port, protocol: 'tcp', source: source() });
    graph.streamRoutes.push({ id: `tunnel/${crdKey(tunnel)}/stream`, listenerId, source: source(), hostnames: [], backends: [backend()] });
    return graph;
  }
  const { hostname } = target;
  const bindingId = `binding/host/${hostname}`;
  graph.bindings.push({ id: bindingId, kind: 'host', hostnames: [hostname], source: source() });
  if (target.protocol === 'tls') {
    const listenerId = `${bindingId}/listener/tls`;
    graph.listeners.push({
      id: listenerId,
      bindingId,
      name: 'tls',
      port: 443,
      protocol: 'tls',
      tls: { mode: 'passthrough', certificates: [] },
      source: source(),
    });
    graph.streamRoutes.push({ id: `tunnel/${crdKey(tunnel)}/stream`, listenerId, source: source(), hostnames: [hostname], backends: [backend()] });
    return graph;
  }
  for (const [name, port] of [
    ['http', 80],
    ['https', 443],
  ] as const) {
    const listenerId = `${bindingId}/listener/${name}`;
    graph.listeners.push({
      id: listenerId,
      bindingId,
      name,
      port,
      protocol: name,
      ...(name === 'https' ? { tls: { mode: 'edge' as const, certificates: [] } } : {}),
      source: source(),
    });
    graph.virtualHosts.push({ id: `${listenerId}/vhost/${hostname}`, listenerId, hostname, routes: [httpRoute(tunnel, source(), name, backend())] });
  }
  return graph;
}
