import type {
  V1EndpointSlice,
  V1Ingress,
  V1IngressClass,
  V1Namespace,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import type { IGateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import type { IGatewayClass } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GatewayClass';
import type { IGRPCRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GRPCRoute';
import type { IHTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import type { IReferenceGrant } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/ReferenceGrant';
import type { ITLSRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/TLSRoute';
import type { ITCPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1alpha2/TCPRoute';
import type { Domain, TCPPort, Tunnel } from '../crd/index.js';
import type { ObjectRef, ObjectStatus, RouteGraph } from '../model/index.js';

/**
 * Snapshot is everything the translators read, as plain Kubernetes objects. Lists are in no
 * particular order; translators must not depend on it. Secrets carry metadata and type only
 * (no key material reaches the translators).
 */
export interface Snapshot {
  namespaces: V1Namespace[];
  services: V1Service[];
  endpointSlices: V1EndpointSlice[];
  secrets: V1Secret[];
  ingressClasses: V1IngressClass[];
  ingresses: V1Ingress[];
  gatewayClasses: IGatewayClass[];
  gateways: IGateway[];
  httpRoutes: IHTTPRoute[];
  grpcRoutes: IGRPCRoute[];
  /** v1 and v1alpha2 TLSRoutes alike (same spec shape for what tuna reads) */
  tlsRoutes: ITLSRoute[];
  tcpRoutes: ITCPRoute[];
  /** v1 and v1beta1 ReferenceGrants alike */
  referenceGrants: IReferenceGrant[];
  domains: Domain[];
  tcpPorts: TCPPort[];
  tunnels: Tunnel[];
}

/** TranslateOptions are the operator's settings that change translation. */
export interface TranslateOptions {
  /** the edge's base domain: generated hostnames are `<name>-<namespace>.<baseDomain>` */
  baseDomain: string;
  ingressClassName: string;
  ingressControllerName: string;
  gatewayControllerName: string;
  loadBalancerClass: string;
}

/** defaultTranslateOptions are tuna's documented defaults. */
export const defaultTranslateOptions: TranslateOptions = {
  baseDomain: 'tuna.example',
  ingressClassName: 'tuna',
  ingressControllerName: 'tuna.dev/ingress-controller',
  gatewayControllerName: 'tuna.dev/gateway-controller',
  loadBalancerClass: 'tuna',
};

/**
 * HostClaim says that an object wants a hostname on the edge's shared HTTP(S) listeners for one of
 * its fragment's bindings. Claims of one fragment group never conflict with each other (several
 * Ingresses merge on one host); claims of different groups on one hostname do.
 */
export interface HostClaim {
  hostname: string;
  bindingId: string;
  owner: ObjectRef;
  /** the owner's creation timestamp (RFC 3339); the oldest claim wins */
  created: string;
}

/**
 * Fragment is the part of the graph one claim group contributes: all Ingresses of class tuna form
 * one group (`ingress`); each Service, Gateway and Tunnel is a group of its own.
 */
export interface Fragment {
  group: string;
  graph: RouteGraph;
  claims: HostClaim[];
}

/** TranslatorOutput is what each per-kind translator returns. */
export interface TranslatorOutput {
  fragments: Fragment[];
  statuses: ObjectStatus[];
}

/** TranslateResult is the whole translation: one canonical graph and every object's status. */
export interface TranslateResult {
  graph: RouteGraph;
  statuses: ObjectStatus[];
}

/** emptySnapshot returns a snapshot with every list empty. */
export function emptySnapshot(): Snapshot {
  return {
    namespaces: [],
    services: [],
    endpointSlices: [],
    secrets: [],
    ingressClasses: [],
    ingresses: [],
    gatewayClasses: [],
    gateways: [],
    httpRoutes: [],
    grpcRoutes: [],
    tlsRoutes: [],
    tcpRoutes: [],
    referenceGrants: [],
    domains: [],
    tcpPorts: [],
    tunnels: [],
  };
}
