import type { IGRPCRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GRPCRoute';
import type { IGRPCRouteMatch } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GRPCRouteMatch';
import type { IGRPCRouteRule } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GRPCRouteRule';
import type { IHTTPRouteFilter } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRouteFilter';
import type { Backend, HttpMatch, PathMatch } from '../../model/index.js';
import { namespaceOf } from '../common/meta.js';
import { resolveFilteredBackend } from './backend-filters.js';
import type { RouteOf } from './backend-refs.js';
import type { Problem, TranslationContext } from './context.js';
import { convertFilters } from './http-filters.js';
import { convertNamed } from './http-matches.js';
import { hostnameProblem } from './http-routes.js';
import { asKube } from './kube-object.js';
import { checkRegex } from './regex-safety.js';
import { finishBackends, verdictOf } from './rules.js';
import type { CompiledRule, RuleOutcome } from './rules.js';
import type { RouteVerdict } from './route-status.js';

/** GRPC_FILTERS are the GRPCRoute filter types (Gateway API v1.6 GRPCRouteFilterType). */
const GRPC_FILTERS = new Set(['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestMirror', 'ExtensionRef']);

/**
 * compileGrpcRoute turns a GRPCRoute's rules into graph rules. A gRPC call is an HTTP/2 POST to
 * `/<service>/<method>`, so method matches become path matches; backends are spoken to over h2c.
 */
export function compileGrpcRoute(ctx: TranslationContext, route: IGRPCRoute): { rules: CompiledRule[]; verdict: RouteVerdict } {
  const ref: RouteOf = { kind: 'GRPCRoute', namespace: namespaceOf(asKube(route)) };
  const outcomes = (route.spec?.rules ?? []).map((rule, i) => compileRule(ctx, ref, rule, i));
  return verdictOf(outcomes, hostnameProblem(route.spec?.hostnames ?? []));
}

function compileRule(ctx: TranslationContext, ref: RouteOf, rule: IGRPCRouteRule, index: number): RuleOutcome {
  const unknown = (rule.filters ?? []).find((f) => !GRPC_FILTERS.has(f.type));
  if (unknown) return { dropped: { reason: 'UnsupportedValue', message: `filter type ${unknown.type} is not supported on a GRPCRoute` }, unresolved: [] };
  const f = convertFilters(ctx, ref, (rule.filters ?? []) as IHTTPRouteFilter[]);
  if (f.invalid) return { dropped: f.invalid, unresolved: f.unresolved };
  const matches: HttpMatch[] = [];
  for (const m of rule.matches?.length ? rule.matches : [{}]) {
    const r = convertGrpcMatch(m);
    if ('reason' in r) return { dropped: r, unresolved: f.unresolved };
    matches.push(r);
  }
  const unresolved = [...f.unresolved];
  const backends: Backend[] = [];
  for (const b of rule.backendRefs ?? []) {
    const r = resolveFilteredBackend(ctx, ref, b, 'h2c');
    if ('invalid' in r) return { dropped: r.invalid, unresolved };
    backends.push(r.backend);
    if (r.problem) unresolved.push(r.problem);
  }
  return { rule: { index, matches, ...finishBackends(f.filters, backends) }, unresolved };
}

/** convertGrpcMatch maps a GRPCRouteMatch (method and headers) to an HTTP match. */
function convertGrpcMatch(m: IGRPCRouteMatch): HttpMatch | Problem {
  const path = methodPath(m);
  if ('reason' in path) return path;
  const headers = convertNamed('header', m.headers ?? [], true);
  if (!Array.isArray(headers)) return headers;
  return { path, headers, query: [] };
}

/**
 * methodPath: Exact service and method → Exact `/svc/Method`; service only → Prefix `/svc` (prefixes
 * match whole path segments); method only, or RegularExpression → a pattern over the two segments.
 */
function methodPath(m: IGRPCRouteMatch): PathMatch | Problem {
  const method = m.method;
  if (!method || (method.service === undefined && method.method === undefined)) return { type: 'Prefix', value: '/' };
  const type = method.type ?? 'Exact';
  if (type === 'Exact') {
    if (method.service !== undefined && method.method !== undefined) return { type: 'Exact', value: `/${method.service}/${method.method}` };
    if (method.service !== undefined) return { type: 'Prefix', value: `/${method.service}` };
    return { type: 'RegularExpression', value: `/[^/]+/${escapeRegex(method.method ?? '')}` };
  }
  if (type !== 'RegularExpression') return { reason: 'UnsupportedValue', message: `method match type ${String(type)} is not supported` };
  for (const part of [method.service, method.method]) {
    if (part === undefined) continue;
    const v = checkRegex(part);
    if (!v.ok) return { reason: 'UnsupportedValue', message: `method match ${v.message}: ${part}` };
  }
  return { type: 'RegularExpression', value: `/(?:${method.service ?? '[^/]+'})/(?:${method.method ?? '[^/]+'})` };
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
