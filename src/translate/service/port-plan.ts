import type { V1ServicePort } from '@kubernetes/client-node';
import type { BackendProtocol } from '../../model/index.js';
import type { TunaReason } from '../common/reasons.js';

/**
 * PortPlan is how one port of a tuna LoadBalancer Service is published: as a TCP or UDP port on the
 * edge, as an HTTP hostname, or not at all (with the message saying why).
 */
export type PortPlan =
  | { kind: 'tcp'; port: V1ServicePort; label: string }
  | { kind: 'udp'; port: V1ServicePort; label: string }
  | { kind: 'http'; port: V1ServicePort; label: string; protocol: BackendProtocol }
  | { kind: 'unsupported'; port: V1ServicePort; label: string; reason: TunaReason; message: string };

/**
 * The appProtocols served as an HTTP hostname instead of a raw TCP port (KEP-3726 standard
 * application protocols, plus the IANA name `http`). Every other value (https, kubernetes.io/wss,
 * grpc, …) stays a TCP port, so TLS to the backend passes through untouched.
 */
const httpAppProtocols: Record<string, BackendProtocol> = {
  http: 'http',
  'kubernetes.io/h2c': 'h2c',
  'kubernetes.io/ws': 'ws',
};

/** portLabel names a port for messages: `spec.ports[1] (db, 5432/TCP)` or `spec.ports[0] (5432/TCP)`. */
export function portLabel(port: V1ServicePort, index: number): string {
  const proto = port.protocol ?? 'TCP';
  return `spec.ports[${index}] (${port.name ? `${port.name}, ` : ''}${port.port}/${proto})`;
}

/**
 * planPort decides how a Service port is published. Tunnels carry TCP streams and UDP flows
 * (docs/protocol.md §4.6), so SCTP ports are refused; the Service's other ports are still published.
 */
export function planPort(port: V1ServicePort, index: number): PortPlan {
  const label = portLabel(port, index);
  const proto = port.protocol ?? 'TCP';
  // Manifest files skip the API server's validation (1-65535).
  if (!Number.isInteger(port.port) || port.port < 1 || port.port > 65535)
    return { kind: 'unsupported', port, label, reason: 'InvalidPort', message: `${label}: ${String(port.port)} is not a port number (1-65535)` };
  if (proto === 'UDP') return { kind: 'udp', port, label };
  if (proto !== 'TCP')
    return { kind: 'unsupported', port, label, reason: 'UnsupportedProtocol', message: `${label}: tuna tunnels carry TCP and UDP only; ${proto} is not supported` };
  const http = port.appProtocol !== undefined ? httpAppProtocols[port.appProtocol] : undefined;
  return http !== undefined ? { kind: 'http', port, label, protocol: http } : { kind: 'tcp', port, label };
}
