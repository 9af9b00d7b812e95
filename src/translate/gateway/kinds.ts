/**
 * Gateway API route kinds and the listener protocols that serve them (Gateway API v1.6,
 * `Listener.allowedRoutes.kinds` and `ListenerStatus.supportedKinds`), read from the table of kinds.
 */
import { GATEWAY_GROUP, ROUTE_KINDS } from '../kinds.js';
import type { RouteKind } from '../kinds.js';

export { GATEWAY_GROUP };
export type { RouteKind };

/** RouteGroupKind is the status shape of a supported kind. */
export interface RouteGroupKind {
  group: string;
  kind: string;
}

/**
 * kindsForProtocol lists the route kinds a listener of a protocol can serve, in the order tuna reports
 * them (table order). A TLS listener serves TLSRoutes in both modes (TLSRouteModeTerminate), a UDP
 * listener UDPRoutes.
 */
export function kindsForProtocol(protocol: string): RouteKind[] {
  return ROUTE_KINDS.filter((k) => {
    const protocols: readonly string[] = k.route.listenerProtocols;
    return protocols.includes(protocol);
  }).map((k) => k.kind);
}

/** isRouteKind narrows a kind name to one tuna attaches. */
export function isRouteKind(kind: string): kind is RouteKind {
  return ROUTE_KINDS.some((k) => k.kind === kind);
}
