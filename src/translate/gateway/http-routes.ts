import type { IHTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import type { IHTTPRouteRule } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRouteRule';
import type { Backend, HttpMatch, RetryPolicy, RouteTimeouts } from '../../model/index.js';
import { namespaceOf } from '../common/meta.js';
import { resolveFilteredBackend } from './backend-filters.js';
import type { RouteOf } from './backend-refs.js';
import type { Problem, TranslationContext } from './context.js';
import { parseDuration } from './duration.js';
import { convertFilters, usesPrefixRewrite } from './http-filters.js';
import { convertHttpMatch } from './http-matches.js';
import { finishBackends, verdictOf } from './rules.js';
import type { CompiledRule, RuleOutcome } from './rules.js';
import type { RouteVerdict } from './route-status.js';
import { isAcceptableHostname } from './hostnames.js';
import { asKube } from './kube-object.js';

/**
 * compileHttpRoute turns an HTTPRoute's rules into graph rules, independent of where it attaches.
 * Invalid route hostnames (IP literals, malformed names) make the whole route UnsupportedValue;
 * an invalid rule is dropped (see verdictOf).
 */
export function compileHttpRoute(ctx: TranslationContext, route: IHTTPRoute): { rules: CompiledRule[]; verdict: RouteVerdict } {
  const ref: RouteOf = { kind: 'HTTPRoute', namespace: namespaceOf(asKube(route)) };
  const outcomes = (route.spec?.rules ?? []).map((rule, i) => compileRule(ctx, ref, rule, i));
  return verdictOf(outcomes, hostnameProblem(route.spec?.hostnames ?? []));
}

/** hostnameProblem refuses route hostnames that are not DNS names (Gateway API Hostname: no IPs). */
export function hostnameProblem(hostnames: string[]): Problem | undefined {
  const bad = hostnames.filter((h) => !isAcceptableHostname(h));
  if (bad.length === 0) return undefined;
  return { reason: 'UnsupportedValue', message: `hostname(s) ${bad.join(', ')} are not DNS names (IP addresses are not allowed)` };
}

function compileRule(ctx: TranslationContext, ref: RouteOf, rule: IHTTPRouteRule, index: number): RuleOutcome {
  const f = convertFilters(ctx, ref, rule.filters ?? []);
  if (f.invalid) return { dropped: f.invalid, unresolved: f.unresolved };
  const matches: HttpMatch[] = [];
  for (const m of rule.matches?.length ? rule.matches : [{}]) {
    const r = convertHttpMatch(m);
    if ('reason' in r) return { dropped: r, unresolved: f.unresolved };
    matches.push(r);
  }
  if (usesPrefixRewrite(f.filters) && matches.some((m) => m.path.type !== 'Prefix'))
    return { dropped: { reason: 'UnsupportedValue', message: 'ReplacePrefixMatch needs PathPrefix matches only' }, unresolved: f.unresolved };
  const unresolved = [...f.unresolved];
  const backends: Backend[] = [];
  for (const b of rule.backendRefs ?? []) {
    const r = resolveFilteredBackend(ctx, ref, b);
    if ('invalid' in r) return { dropped: r.invalid, unresolved };
    backends.push(r.backend);
    if (r.problem) unresolved.push(r.problem);
  }
  const timeouts = convertTimeouts(rule);
  if (timeouts && 'reason' in timeouts) return { dropped: timeouts, unresolved };
  const retry = convertRetry(rule);
  if (retry && 'reason' in retry) return { dropped: retry, unresolved };
  const done = finishBackends(f.filters, backends);
  return {
    rule: { index, matches, ...done, ...(timeouts ? { timeouts } : {}), ...(retry ? { retry } : {}) },
    unresolved,
  };
}

/**
 * convertTimeouts maps HTTPRouteTimeouts (GEP-1742, durations per GEP-2257) to milliseconds; a zero
 * duration means "no timeout" and is passed on as 0. backendRequest may not exceed request.
 */
function convertTimeouts(rule: IHTTPRouteRule): RouteTimeouts | Problem | undefined {
  const t = rule.timeouts;
  if (!t) return undefined;
  const out: RouteTimeouts = {};
  if (t.request !== undefined) {
    const ms = parseDuration(t.request);
    if (ms === undefined) return { reason: 'UnsupportedValue', message: `timeouts.request ${t.request} is not a valid duration` };
    out.requestMs = ms;
  }
  if (t.backendRequest !== undefined) {
    const ms = parseDuration(t.backendRequest);
    if (ms === undefined) return { reason: 'UnsupportedValue', message: `timeouts.backendRequest ${t.backendRequest} is not a valid duration` };
    out.backendRequestMs = ms;
  }
  if (out.requestMs && out.backendRequestMs !== undefined && (out.backendRequestMs === 0 || out.backendRequestMs > out.requestMs))
    return { reason: 'UnsupportedValue', message: 'timeouts.backendRequest must not be longer than timeouts.request' };
  return out;
}

/** DEFAULT_RETRY_CODES are retried when a retry policy names no codes (the Extended set of HTTPRouteRetry). */
export const DEFAULT_RETRY_CODES = [500, 502, 503, 504];

/** convertRetry maps HTTPRouteRetry (GEP-1731); attempts defaults to 1. */
function convertRetry(rule: IHTTPRouteRule): RetryPolicy | Problem | undefined {
  const r = rule.retry;
  if (!r) return undefined;
  const out: RetryPolicy = { attempts: r.attempts ?? 1, codes: r.codes?.length ? [...r.codes] : [...DEFAULT_RETRY_CODES] };
  if (r.backoff !== undefined) {
    const ms = parseDuration(r.backoff);
    if (ms === undefined) return { reason: 'UnsupportedValue', message: `retry.backoff ${r.backoff} is not a valid duration` };
    out.backoffMs = ms;
  }
  return out;
}
