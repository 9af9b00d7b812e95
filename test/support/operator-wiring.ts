/**
 * wireOperator makes an Operator in the test's own process the way `tuna operator` wires one
 * (src/operator/process.ts): one data plane and endpoint resolver, a tunnel manager dialing the
 * edge, the tunnels keyed by each binding's key (`keys.forTunnel`) and the edge's binding ids.
 * `objects` is the cluster (KubeObjects) or a fake of it; `options` adds or overrides the rest
 * (a status writer, events, secrets ...). Not started: the caller awaits `operator.start()`.
 */
import type { ControlClient } from '../../src/control-api/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { EdgeReconciler, Operator, OperatorTunnels, TunnelKeys } from '../../src/operator/index.js';
import type { AcceptedCertificates, EdgeReconcilerOptions, OperatorOptions } from '../../src/operator/index.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import type { EdgeEndpoint } from '../../src/tunnel/dialer.js';
import { TunnelManager } from '../../src/tunnel/manager.js';

export interface WiredOperator {
  operator: Operator;
  keys: TunnelKeys;
  dataPlane: DataPlane;
}

export interface WireOptions {
  objects: OperatorOptions['objects'];
  /** the edge's tunnel endpoint */
  edge: { endpoint: EdgeEndpoint };
  client: ControlClient;
  /** what `tuna operator` would learn from GET /v1/edge, and the cluster id of its reservations */
  reconciler: EdgeReconcilerOptions;
  /** the certificates the operator accepted from Secrets, shared with the data plane (HTTPS listeners) */
  certificates?: AcceptedCertificates;
  /** tunnel connections per binding (default 1) */
  connections?: number;
  options?: Partial<OperatorOptions>;
}

export function wireOperator(w: WireOptions): WiredOperator {
  const keys = new TunnelKeys();
  const keyRefOf = (id: string): string | undefined => keys.forTunnel(id)?.keyId;
  const endpoints = new StaticEndpointResolver();
  const dataPlane = new DataPlane({ endpoints, ...(w.certificates !== undefined ? { certificates: w.certificates } : {}) });
  const manager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, keys, {});
  const operator = new Operator({
    objects: w.objects,
    dataPlane,
    endpoints,
    tunnels: new OperatorTunnels(manager, [w.edge.endpoint], w.connections ?? 1, keyRefOf),
    reconciler: new EdgeReconciler(w.client, keys, w.reconciler),
    keyRefOf,
    edgeIdOf: (id) => keys.edgeIdOf(id),
    tunnelErrors: manager,
    ...(w.certificates !== undefined ? { certificates: w.certificates } : {}),
    ...w.options,
  });
  return { operator, keys, dataPlane };
}
