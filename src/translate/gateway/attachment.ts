import type { IParentReference } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/ParentReference';
import type { GatewayContext, ListenerContext, Problem, TranslationContext } from './context.js';
import { intersectHostnames } from './hostnames.js';
import { GATEWAY_GROUP } from './kinds.js';
import type { RouteKind } from './kinds.js';

/** ListenerAttachment is a listener a route attached to, with the route's effective hostnames there. */
export interface ListenerAttachment {
  listener: ListenerContext;
  hostnames: string[];
}

/** ParentAttachment is the outcome of one parentRef that names a Gateway of a tuna class. */
export interface ParentAttachment {
  /** the parentRef exactly as the route wrote it (RouteParentStatus.parentRef) */
  parentRef: IParentReference;
  gateway: GatewayContext;
  listeners: ListenerAttachment[];
  /** why the route is not accepted by this parent */
  problem?: Problem;
  /** listeners the route lost although the parent accepted it (reported as Warning events) */
  lost?: Problem[];
}

/** RouteIdentity is what attachment needs to know about a route. */
export interface RouteIdentity {
  kind: RouteKind;
  namespace: string;
  parentRefs: IParentReference[];
  /** spec.hostnames ([] for TCPRoute) */
  hostnames: string[];
}

/**
 * attachRoute resolves each parentRef naming a Gateway of a tuna class (other parents belong to
 * other controllers and are left out). Gateway API v1.6 attachment, in order: the listeners the
 * parentRef selects by sectionName and port (none: NoMatchingParent); those whose allowedRoutes admit
 * the route's kind and namespace (none: NotAllowedByListeners); those that are programmed; and those
 * where the listener and route hostnames intersect (none: NoMatchingListenerHostname).
 */
export function attachRoute(ctx: TranslationContext, route: RouteIdentity): ParentAttachment[] {
  const out: ParentAttachment[] = [];
  for (const parentRef of route.parentRefs) {
    if ((parentRef.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (parentRef.kind ?? 'Gateway') !== 'Gateway') continue;
    const gateway = ctx.gateways.get(`${parentRef.namespace ?? route.namespace}/${parentRef.name}`);
    if (!gateway) continue;
    out.push(attachToGateway(gateway, parentRef, route));
  }
  return out;
}

function attachToGateway(gateway: GatewayContext, parentRef: IParentReference, route: RouteIdentity): ParentAttachment {
  const result: ParentAttachment = { parentRef, gateway, listeners: [] };
  const gwName = `Gateway ${gateway.namespace}/${gateway.name}`;
  if (gateway.rejected) {
    result.problem = { reason: 'NoMatchingParent', message: `${gwName} is not accepted` };
    return result;
  }
  const candidates = gateway.listeners.filter(
    (l) =>
      (parentRef.sectionName === undefined || l.name === parentRef.sectionName) &&
      (parentRef.port === undefined || l.port === parentRef.port),
  );
  if (candidates.length === 0) {
    const sel = [parentRef.sectionName && `sectionName ${parentRef.sectionName}`, parentRef.port && `port ${parentRef.port}`].filter(Boolean);
    result.problem = { reason: 'NoMatchingParent', message: `${gwName} has no listener with ${sel.join(' and ')}` };
    return result;
  }
  const allowed = candidates.filter((l) => l.kinds.includes(route.kind) && l.admitsNamespace(route.namespace));
  if (allowed.length === 0) {
    result.problem = {
      reason: 'NotAllowedByListeners',
      message: `no listener of ${gwName} allows a ${route.kind} from namespace ${route.namespace}`,
    };
    return result;
  }
  // A listener whose references do not resolve still takes routes (they count in attachedRoutes,
  // as the conformance suite checks) but is not served; a rejected or conflicted one takes none.
  const usable = allowed.filter((l) => !l.notAccepted && !l.conflict);
  if (usable.length === 0) {
    result.problem = {
      reason: 'NotAllowedByListeners',
      message: `listener(s) ${allowed.map((l) => l.name).join(', ')} of ${gwName} are not accepted`,
    };
    return result;
  }
  for (const listener of usable) {
    const hostnames = intersectHostnames(listener.hostname, route.hostnames);
    if (hostnames.length > 0) result.listeners.push({ listener, hostnames });
  }
  if (result.listeners.length === 0)
    result.problem = {
      reason: 'NoMatchingListenerHostname',
      message: `no listener hostname of ${gwName} intersects the route's hostnames`,
    };
  return result;
}
