import type { IParentReference } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/ParentReference';
import type { GatewayContext, ListenerContext, ListenerSetContext, Problem, TranslationContext } from './context.js';
import { intersectHostnames } from './hostnames.js';
import { GATEWAY_GROUP } from './kinds.js';
import type { RouteKind } from './kinds.js';
import { isKind, refersTo } from '../kinds.js';

/** ListenerAttachment is a listener a route attached to, with the route's effective hostnames there. */
export interface ListenerAttachment {
  listener: ListenerContext;
  hostnames: string[];
}

/** ParentAttachment is the outcome of one parentRef that names a Gateway of a tuna class or a ListenerSet of one. */
export interface ParentAttachment {
  /** the parentRef exactly as the route wrote it (RouteParentStatus.parentRef) */
  parentRef: IParentReference;
  /** the Gateway whose binding serves the parent's listeners (the parent itself, or a ListenerSet's parent) */
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
 * attachRoute resolves each parentRef naming a Gateway of a tuna class, or a ListenerSet whose
 * parent is one (other parents belong to other controllers and are left out). Gateway API v1.6
 * attachment, in order: the listeners the parentRef selects by sectionName and port (none:
 * NoMatchingParent); those whose allowedRoutes admit the route's kind and namespace (none:
 * NotAllowedByListeners); those that are programmed; and those where the listener and route
 * hostnames intersect (none: NoMatchingListenerHostname). A Gateway parentRef selects only the
 * Gateway's own listeners, a ListenerSet parentRef only that set's (GEP-1713; the conformance test
 * ListenerSetGatewayParentSectionNameNotFound).
 */
export function attachRoute(ctx: TranslationContext, route: RouteIdentity): ParentAttachment[] {
  const out: ParentAttachment[] = [];
  for (const parentRef of route.parentRefs) {
    if ((parentRef.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP) continue;
    const key = `${parentRef.namespace ?? route.namespace}/${parentRef.name}`;
    if (refersTo(parentRef, 'Gateway')) {
      const gateway = ctx.gateways.get(key);
      if (gateway) out.push(attachToParent(parentOfGateway(gateway), parentRef, route));
    } else if (isKind(parentRef, 'ListenerSet')) {
      const set = ctx.listenerSets.get(key);
      if (set) out.push(attachToParent(parentOfListenerSet(set), parentRef, route));
    }
  }
  return out;
}

/** RouteParent is a Gateway or a ListenerSet as a route's parent: its listeners, and its Gateway's binding. */
interface RouteParent {
  label: string;
  gateway: GatewayContext;
  listeners: ListenerContext[];
  accepted: boolean;
}

function parentOfGateway(gateway: GatewayContext): RouteParent {
  return { label: `Gateway ${gateway.namespace}/${gateway.name}`, gateway, listeners: gateway.listeners, accepted: !gateway.rejected };
}

function parentOfListenerSet(set: ListenerSetContext): RouteParent {
  return { label: `ListenerSet ${set.namespace}/${set.name}`, gateway: set.gateway, listeners: set.listeners, accepted: !set.rejected };
}

function attachToParent(parent: RouteParent, parentRef: IParentReference, route: RouteIdentity): ParentAttachment {
  const result: ParentAttachment = { parentRef, gateway: parent.gateway, listeners: [] };
  const gwName = parent.label;
  if (!parent.accepted) {
    result.problem = { reason: 'NoMatchingParent', message: `${gwName} is not accepted` };
    return result;
  }
  const candidates = parent.listeners.filter(
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
