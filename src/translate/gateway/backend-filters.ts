import type { IHTTPHeaderFilter } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPHeaderFilter';
import type { Backend, BackendFilter, BackendProtocol } from '../../model/index.js';
import { resolveBackend } from './backend-refs.js';
import type { BackendObjectRef, RouteOf } from './backend-refs.js';
import type { Problem, TranslationContext } from './context.js';
import { headerModifier } from './http-filters.js';

/** RouteBackendFilter is the part of an HTTPRouteFilter or GRPCRouteFilter a backendRef filter is read from. */
export interface RouteBackendFilter {
  type: string;
  requestHeaderModifier?: IHTTPHeaderFilter;
  responseHeaderModifier?: IHTTPHeaderFilter;
}

/** FilteredBackendRef is a backendRef of an HTTPRoute or GRPCRoute rule, with its own filters. */
export interface FilteredBackendRef extends BackendObjectRef {
  filters?: RouteBackendFilter[];
}

/** BackendOutcome is a graph backend with its ResolvedRefs problem, or the problem that drops the rule. */
export type BackendOutcome = { backend: Backend; problem?: Problem } | { invalid: Problem };

/**
 * resolveFilteredBackend resolves a weighted backendRef and its filters. Gateway API
 * HTTPBackendRef.filters (and GRPCBackendRef.filters) "MUST be executed if and only if the request
 * is being forwarded to the backend defined here"; tuna supports the two header modifiers there
 * (HTTPRouteBackendRequestHeaderModification). Any other type drops the rule with UnsupportedValue
 * naming it, because skipping a filter the user asked for would forward a request they meant changed.
 */
export function resolveFilteredBackend(ctx: TranslationContext, route: RouteOf, ref: FilteredBackendRef, protocol?: BackendProtocol): BackendOutcome {
  const filters: BackendFilter[] = [];
  for (const f of ref.filters ?? []) {
    if (f.type === 'RequestHeaderModifier') filters.push({ type: 'RequestHeaderModifier', ...headerModifier(f.requestHeaderModifier) });
    else if (f.type === 'ResponseHeaderModifier') filters.push({ type: 'ResponseHeaderModifier', ...headerModifier(f.responseHeaderModifier) });
    else
      return {
        invalid: {
          reason: 'UnsupportedValue',
          message: `filter type ${f.type} on backendRef ${ref.name} is not supported (only RequestHeaderModifier and ResponseHeaderModifier are); put it on the rule`,
        },
      };
  }
  const r = resolveBackend(ctx, route, ref, protocol);
  // An unresolved backend answers 500 itself: its filters have no request to change.
  if (filters.length === 0 || r.backend.kind !== 'service') return r;
  return { ...r, backend: { ...r.backend, filters } };
}
