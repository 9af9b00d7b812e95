/**
 * Gateway API groups, kinds and the route kinds each listener protocol accepts (Gateway API v1.6,
 * `Listener.allowedRoutes.kinds` and `ListenerStatus.supportedKinds`).
 */

/** GATEWAY_GROUP is the Gateway API group. */
export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

/** RouteKind is a route kind tuna attaches to listeners. */
export type RouteKind = 'HTTPRoute' | 'GRPCRoute' | 'TLSRoute' | 'TCPRoute';

/** RouteGroupKind is the status shape of a supported kind. */
export interface RouteGroupKind {
  group: string;
  kind: string;
}

/**
 * kindsForProtocol lists the route kinds a listener of a protocol can serve, in the order tuna reports
 * them. A TLS listener serves TLSRoutes in both modes (TLSRouteModeTerminate); UDP serves nothing.
 */
export function kindsForProtocol(protocol: string): RouteKind[] {
  switch (protocol) {
    case 'HTTP':
    case 'HTTPS':
      return ['HTTPRoute', 'GRPCRoute'];
    case 'TLS':
      return ['TLSRoute'];
    case 'TCP':
      return ['TCPRoute'];
    default:
      return [];
  }
}

/** isRouteKind narrows a kind name to one tuna attaches. */
export function isRouteKind(kind: string): kind is RouteKind {
  return kind === 'HTTPRoute' || kind === 'GRPCRoute' || kind === 'TLSRoute' || kind === 'TCPRoute';
}
