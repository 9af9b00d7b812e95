import type { BackendProtocol, RouteGraph } from '../model/index.js';
import { canonicalize, emptyGraph } from '../model/index.js';
import type { Endpoint } from '../dataplane/index.js';

/**
 * Graphs for the one-line commands (`tuna http`, `tuna tcp`, `tuna udp`): one binding, one listener and one
 * route to a local target, in the same shape translators produce, so the same data plane and
 * tunnel manager serve them.
 */

/** QuickTarget is what a one-line command publishes. */
export interface QuickTarget {
  graph: RouteGraph;
  /** the Service the graph names, and the endpoint it resolves to */
  service: { namespace: string; name: string; portName: string; endpoint: Endpoint };
}

const source = { group: 'tuna.dev', kind: 'Cli', namespace: 'local' };
const namespace = 'local';

/** httpTarget publishes `hostname` on the edge's HTTP(S) listeners, proxied to `endpoint`. */
export function httpTarget(hostname: string, endpoint: Endpoint, protocol: BackendProtocol, bindingId = `binding/host/${hostname}`): QuickTarget {
  const name = 'http';
  const graph = emptyGraph();
  graph.bindings.push({ id: bindingId, kind: 'host', hostnames: [hostname], source: { ...source, name } });
  const listener = `${bindingId}/listener/http`;
  graph.listeners.push({ id: listener, bindingId, name: 'http', port: 80, protocol: 'http', source: { ...source, name } });
  graph.virtualHosts.push({
    id: `${listener}/vhost/${hostname}`,
    listenerId: listener,
    hostname,
    routes: [
      {
        id: `cli/local/${name}/rule/0/match/0`,
        source: { ...source, name },
        origin: { created: '', key: `${namespace}/${name}`, rule: 0, match: 0 },
        match: { path: { type: 'Prefix', value: '/' }, headers: [], query: [] },
        filters: [],
        backends: [{ kind: 'service', namespace, service: name, port: endpoint.port, portName: 'http', protocol, weight: 1 }],
      },
    ],
  });
  return { graph: canonicalize(graph), service: { namespace, name, portName: 'http', endpoint } };
}

/** tcpTarget publishes a TCP port of the edge (`remotePort` 0: any from its pool) to `endpoint`. */
export function tcpTarget(endpoint: Endpoint, remotePort: number, bindingId = `binding/tcp-port/local/tcp/${endpoint.port}`): QuickTarget {
  const name = 'tcp';
  const graph = emptyGraph();
  graph.bindings.push({ id: bindingId, kind: 'tcp-port', hostnames: [], port: remotePort, source: { ...source, name } });
  const listener = `${bindingId}/listener/tcp`;
  graph.listeners.push({ id: listener, bindingId, name: 'tcp', port: remotePort === 0 ? endpoint.port : remotePort, protocol: 'tcp', source: { ...source, name } });
  graph.streamRoutes.push({
    id: `cli/local/${name}/route`,
    listenerId: listener,
    hostnames: [],
    backends: [{ kind: 'service', namespace, service: name, port: endpoint.port, portName: 'tcp', protocol: 'tcp', weight: 1 }],
    source: { ...source, name },
  });
  return { graph: canonicalize(graph), service: { namespace, name, portName: 'tcp', endpoint } };
}

/**
 * udpTarget publishes a UDP port of the edge (`remotePort` 0: any) to `endpoint`: a tcp-port
 * binding (the edge's port binding, whose key or config opens it for UDP, docs/protocol.md §4.6)
 * with a `udp` listener and one stream route, the shape a Gateway UDPRoute would give.
 */
export function udpTarget(endpoint: Endpoint, remotePort: number, bindingId = `binding/tcp-port/local/udp/${endpoint.port}`): QuickTarget {
  const name = 'udp';
  const graph = emptyGraph();
  graph.bindings.push({ id: bindingId, kind: 'tcp-port', hostnames: [], port: remotePort, source: { ...source, name } });
  const listener = `${bindingId}/listener/udp`;
  graph.listeners.push({ id: listener, bindingId, name: 'udp', port: remotePort === 0 ? endpoint.port : remotePort, protocol: 'udp', source: { ...source, name } });
  graph.streamRoutes.push({
    id: `cli/local/${name}/route`,
    listenerId: listener,
    hostnames: [],
    backends: [{ kind: 'service', namespace, service: name, port: endpoint.port, portName: 'udp', protocol: 'udp', weight: 1 }],
    source: { ...source, name },
  });
  return { graph: canonicalize(graph), service: { namespace, name, portName: 'udp', endpoint } };
}
