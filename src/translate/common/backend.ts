import type { V1ServicePort } from '@kubernetes/client-node';
import type { BackendProtocol, ServiceBackend } from '../../model/index.js';
import type { SnapshotIndex } from './index-snapshot.js';

/** BackendResolution is a resolved Service port, or the reason it could not be resolved. */
export type BackendResolution =
  | { ok: true; backend: ServiceBackend }
  | { ok: false; reason: BackendProblem; message: string };

/**
 * BackendProblem is why a Service reference cannot be served. Each is reported on the object and
 * the reference never reaches the graph.
 */
export type BackendProblem = 'ServiceNotFound' | 'ServicePortNotFound' | 'ExternalNameService' | 'UnsupportedProtocol';

/**
 * protocolOfPort maps a Service port's appProtocol to how the data plane speaks to it
 * (KEP-3726 standard application protocols: `kubernetes.io/h2c`, `kubernetes.io/ws`, `kubernetes.io/wss`).
 */
export function protocolOfPort(port: V1ServicePort): BackendProtocol {
  switch (port.appProtocol) {
    case 'kubernetes.io/h2c':
    case 'grpc':
      return 'h2c';
    case 'kubernetes.io/ws':
    case 'kubernetes.io/wss':
      return 'ws';
    case 'https':
    case 'kubernetes.io/https':
      return 'h2';
    default:
      return 'http';
  }
}

/**
 * resolveServiceBackend finds `namespace/name` and its port (by number or by name). ExternalName
 * Services are refused: they would let a route publish an arbitrary outside host.
 */
export function resolveServiceBackend(
  index: SnapshotIndex,
  namespace: string,
  name: string,
  port: number | string | undefined,
  protocol?: BackendProtocol,
): BackendResolution {
  const svc = index.services.get(`${namespace}/${name}`);
  if (!svc) return { ok: false, reason: 'ServiceNotFound', message: `Service ${namespace}/${name} not found` };
  if (svc.spec?.type === 'ExternalName')
    return { ok: false, reason: 'ExternalNameService', message: `Service ${namespace}/${name} is of type ExternalName, which tuna does not publish` };
  const ports = svc.spec?.ports ?? [];
  // A Service may list one port number twice, for TCP and UDP (DNS: 53/UDP and 53/TCP): prefer the
  // transport the backend is spoken to over (UDP for a `udp` backend, else TCP).
  const transport = protocol === 'udp' ? 'UDP' : 'TCP';
  const isWanted = (p: V1ServicePort): boolean => (p.protocol ?? 'TCP') === transport;
  const byNumber = ports.filter((p) => p.port === port);
  const found =
    typeof port === 'string'
      ? ports.find((p) => p.name === port)
      : port === undefined && ports.length === 1
        ? ports[0]
        : (byNumber.find(isWanted) ?? byNumber[0]);
  if (!found)
    return {
      ok: false,
      reason: 'ServicePortNotFound',
      message: `Service ${namespace}/${name} has no port ${port === undefined ? '(none given)' : String(port)}`,
    };
  if ((found.protocol ?? 'TCP') !== transport)
    return {
      ok: false,
      reason: 'UnsupportedProtocol',
      message: transport === 'UDP'
        ? `Service ${namespace}/${name} port ${found.port} is ${found.protocol ?? 'TCP'}; a UDP route needs a UDP port`
        : `Service ${namespace}/${name} port ${found.port} is ${found.protocol}; tuna proxies TCP only`,
    };
  return {
    ok: true,
    backend: {
      kind: 'service',
      namespace,
      service: name,
      port: found.port,
      portName: found.name ?? '',
      protocol: protocol ?? protocolOfPort(found),
      weight: 1,
    },
  };
}
