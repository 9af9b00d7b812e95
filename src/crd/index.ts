/**
 * tuna.dev/v1alpha1 custom resources: Domain, TCPPort, Tunnel, RoutePolicy, GatewayParameters. io-ts codecs are the source of
 * truth; the TypeScript types are derived from them, and config/crd holds the matching
 * CustomResourceDefinitions. User reference: docs/crds.md.
 */
export { decodeDomain, decodeGatewayParameters, decodeRoutePolicy, decodeTCPPort, decodeTunnel } from './decode.js';
export { domainCodec, domainSpecCodec } from './domain.js';
export type { Domain, DomainSpec } from './domain.js';
export {
  TUNA_API_VERSION,
  TUNA_GROUP,
  isPortName,
  isPortNumber,
  localObjectReferenceCodec,
  objectMetaCodec,
  portNumberCodec,
  reclaimPolicyCodec,
  servicePortCodec,
} from './fields.js';
export type { CrdReclaimPolicy, LocalObjectReference } from './fields.js';
export { tcpPortCodec, tcpPortSpecCodec } from './tcp-port.js';
export type { TCPPort, TCPPortSpec } from './tcp-port.js';
export { tunnelCodec, tunnelProtocolCodec, tunnelServiceCodec, tunnelSpecCodec } from './tunnel.js';
export type { Tunnel, TunnelProtocol, TunnelSpec } from './tunnel.js';
export { ROUTE_POLICY_FIELDS, routePolicyCodec, routePolicySpecCodec } from './route-policy.js';
export type { RoutePolicy, RoutePolicySpec, RoutePolicyTargetRef } from './route-policy.js';
export { DATA_PLANES, MAX_DATA_PLANE_REPLICAS, MAX_NODE_SELECTOR, MAX_TOLERATIONS, MAX_TUNNEL_CONNECTIONS, dataPlaneDeploymentCodec, gatewayParametersCodec, gatewayParametersSpecCodec, isTunnelConnections } from './gateway-parameters.js';
export type { DataPlaneDeployment, GatewayParameters, GatewayParametersSpec } from './gateway-parameters.js';
