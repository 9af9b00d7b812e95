import type { Backend, BackendProtocol, ServiceBackend } from '../../model/index.js';
import { resolveServiceBackend } from '../common/backend.js';
import type { Problem, TranslationContext } from './context.js';
import { GATEWAY_GROUP } from './kinds.js';
import type { GatewayReason } from '../common/reasons.js';
import { refersTo } from '../kinds.js';
import type { RouteKind } from '../kinds.js';

/** BackendObjectRef is the part of a Gateway API BackendObjectReference tuna reads. */
export interface BackendObjectRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  port?: number;
  weight?: number;
}

/** RouteOf names the route holding a reference (for ReferenceGrant checks). */
export interface RouteOf {
  kind: RouteKind;
  namespace: string;
}

/** ServiceResolution is a resolved Service port, or the route ResolvedRefs reason it failed with. */
export type ServiceResolution = { ok: true; backend: ServiceBackend } | { ok: false; problem: Problem };

/**
 * resolveServiceRef resolves a backend reference to a Service port (Gateway API BackendObjectReference):
 * only core Services (InvalidKind otherwise); another namespace only with a ReferenceGrant
 * (RefNotPermitted); the Service and its port must exist (BackendNotFound); ExternalName Services are
 * refused with tuna's own reason ExternalNameService; non-TCP ports get UnsupportedProtocol.
 */
export function resolveServiceRef(
  ctx: TranslationContext,
  route: RouteOf,
  ref: BackendObjectRef,
  protocol?: BackendProtocol,
): ServiceResolution {
  const group = ref.group ?? '';
  const kind = ref.kind ?? 'Service';
  const namespace = ref.namespace ?? route.namespace;
  const what = `backendRef ${namespace}/${ref.name}`;
  if (!refersTo(ref, 'Service'))
    return fail('InvalidKind', `${what} is a ${group ? `${group}/` : ''}${kind}; tuna supports core Services only`);
  const from = { group: GATEWAY_GROUP, kind: route.kind, namespace: route.namespace };
  if (!ctx.grants.isPermitted(from, { group: '', kind: 'Service', namespace, name: ref.name }))
    return fail('RefNotPermitted', `${what} is in another namespace and no ReferenceGrant allows it`);
  if (ref.port === undefined) return fail('BackendNotFound', `${what} has no port; a port is required for Services`);
  const r = resolveServiceBackend(ctx.index, namespace, ref.name, ref.port, protocol);
  if (r.ok) return { ok: true, backend: r.backend };
  switch (r.reason) {
    case 'ServiceNotFound':
    case 'ServicePortNotFound':
      return fail('BackendNotFound', r.message);
    case 'ExternalNameService':
      return fail('ExternalNameService', r.message);
    default:
      return fail('UnsupportedProtocol', r.message);
  }
}

function fail(reason: GatewayReason, message: string): ServiceResolution {
  return { ok: false, problem: { reason, message } };
}

/**
 * resolveBackend turns a weighted backendRef into a graph Backend. A reference that cannot be
 * resolved becomes an UnavailableBackend answering 500 with the same weight (HTTPRoute backendRefs:
 * "the proportion of requests that would otherwise have been routed to an invalid backend MUST
 * receive a 500"), so the bad target never reaches the graph.
 */
export function resolveBackend(
  ctx: TranslationContext,
  route: RouteOf,
  ref: BackendObjectRef,
  protocol?: BackendProtocol,
): { backend: Backend; problem?: Problem } {
  const weight = ref.weight ?? 1;
  const r = resolveServiceRef(ctx, route, ref, protocol);
  if (r.ok) return { backend: { ...r.backend, weight } };
  return { backend: { kind: 'unavailable', weight, statusCode: 500, reason: r.problem.reason }, problem: r.problem };
}
