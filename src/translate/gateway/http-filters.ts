import type { IHTTPHeaderFilter } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPHeaderFilter';
import type { IHTTPPathModifier } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPPathModifier';
import type { IHTTPRequestMirrorFilter } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRequestMirrorFilter';
import type { IHTTPRouteFilter } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRouteFilter';
import type { HeaderModifier, HttpFilter, PathModifier } from '../../model/index.js';
import { resolveServiceRef } from './backend-refs.js';
import type { RouteOf } from './backend-refs.js';
import type { Problem, TranslationContext } from './context.js';
import { isGroupKind } from '../kinds.js';

/** FilterResult is a rule's filters in graph form, with unresolved references and a rule-fatal problem. */
export interface FilterResult {
  filters: HttpFilter[];
  unresolved: Problem[];
  /** set when the rule cannot be published (unknown filter type, bad value, incompatible filters) */
  invalid?: Problem;
}

/** PREFIX_PLACEHOLDER stands for the matched prefix until the rule is expanded per match. */
const PREFIX_PLACEHOLDER = '\u0000prefix';

const redirectCodes = new Set([301, 302, 303, 307, 308]);

/**
 * convertFilters maps HTTPRoute (and GRPCRoute) filters to graph filters, in order. A RequestMirror
 * to a bad backend is dropped with a ResolvedRefs problem; an ExtensionRef (tuna has no custom
 * filters) becomes a 500 DirectResponse, because the spec forbids skipping an unresolved filter; an
 * unknown filter type invalidates the rule (Accepted=False, UnsupportedValue).
 */
export function convertFilters(ctx: TranslationContext, route: RouteOf, filters: IHTTPRouteFilter[]): FilterResult {
  const out: FilterResult = { filters: [], unresolved: [] };
  const types = filters.map((f) => f.type as string);
  if (types.includes('RequestRedirect') && types.includes('URLRewrite')) {
    out.invalid = { reason: 'IncompatibleFilters', message: 'RequestRedirect and URLRewrite cannot be used in the same rule' };
    return out;
  }
  for (const f of filters) {
    const problem = convertOne(ctx, route, f, out);
    if (problem) {
      out.invalid = problem;
      return out;
    }
  }
  return out;
}

function convertOne(ctx: TranslationContext, route: RouteOf, f: IHTTPRouteFilter, out: FilterResult): Problem | undefined {
  const type = f.type as string;
  switch (type) {
    case 'RequestHeaderModifier':
      out.filters.push({ type: 'RequestHeaderModifier', ...headerModifier(f.requestHeaderModifier) });
      return undefined;
    case 'ResponseHeaderModifier':
      out.filters.push({ type: 'ResponseHeaderModifier', ...headerModifier(f.responseHeaderModifier) });
      return undefined;
    case 'RequestRedirect': {
      const r = f.requestRedirect ?? {};
      const statusCode = r.statusCode ?? 302;
      if (!redirectCodes.has(statusCode)) return unsupported(`redirect status code ${statusCode} is not supported`);
      const path = r.path ? pathModifier(r.path) : undefined;
      if (path && 'reason' in path) return path;
      out.filters.push({
        type: 'RequestRedirect',
        statusCode,
        ...(r.scheme !== undefined ? { scheme: r.scheme } : {}),
        ...(r.hostname !== undefined ? { hostname: r.hostname } : {}),
        ...(r.port !== undefined ? { port: r.port } : {}),
        ...(path ? { path } : {}),
      });
      return undefined;
    }
    case 'URLRewrite': {
      const r = f.urlRewrite ?? {};
      const path = r.path ? pathModifier(r.path) : undefined;
      if (path && 'reason' in path) return path;
      out.filters.push({ type: 'URLRewrite', ...(r.hostname !== undefined ? { hostname: r.hostname } : {}), ...(path ? { path } : {}) });
      return undefined;
    }
    case 'RequestMirror':
      return mirror(ctx, route, f.requestMirror, out);
    case 'CORS': {
      const c = f.cors ?? {};
      out.filters.push({
        type: 'CORS',
        allowOrigins: [...(c.allowOrigins ?? [])],
        allowMethods: [...(c.allowMethods ?? [])],
        allowHeaders: [...(c.allowHeaders ?? [])],
        exposeHeaders: [...(c.exposeHeaders ?? [])],
        allowCredentials: c.allowCredentials ?? false,
        // HTTPCORSFilter.maxAge defaults to 5 seconds.
        maxAgeSeconds: c.maxAge ?? 5,
      });
      return undefined;
    }
    case 'ExtensionRef': {
      const e = f.extensionRef;
      // A tuna.dev RoutePolicy of the route's namespace is applied to this rule by src/translate/policy.
      if (route.kind === 'HTTPRoute' && isGroupKind(e, 'RoutePolicy') && ctx.index.snapshot.routePolicies.some((p) => p.metadata?.name === e.name && (p.metadata.namespace || 'default') === route.namespace))
        return undefined;
      out.unresolved.push({
        reason: 'InvalidKind',
        message: `ExtensionRef filter ${e ? `${e.group}/${e.kind} ${e.name}` : ''} is not supported by tuna; matching requests get 500`,
      });
      out.filters.push({ type: 'DirectResponse', statusCode: 500 });
      return undefined;
    }
    case 'ExternalAuth':
      return externalAuth(ctx, route, (f as { externalAuth?: ExternalAuthSpec }).externalAuth, out);
    default:
      return unsupported(`filter type ${type} is not supported`);
  }
}

function unsupported(message: string): Problem {
  return { reason: 'UnsupportedValue', message };
}

/** headerModifier normalises an HTTPHeaderFilter (absent lists become empty). */
export function headerModifier(h: IHTTPHeaderFilter | undefined): HeaderModifier {
  return {
    set: (h?.set ?? []).map((x) => ({ name: x.name, value: x.value })),
    add: (h?.add ?? []).map((x) => ({ name: x.name, value: x.value })),
    remove: [...(h?.remove ?? [])],
  };
}

function pathModifier(p: IHTTPPathModifier): PathModifier | Problem {
  if (p.type === 'ReplaceFullPath' && p.replaceFullPath !== undefined) return { type: 'ReplaceFullPath', value: p.replaceFullPath };
  if (p.type === 'ReplacePrefixMatch' && p.replacePrefixMatch !== undefined)
    return { type: 'ReplacePrefixMatch', value: p.replacePrefixMatch, matchedPrefix: PREFIX_PLACEHOLDER };
  return unsupported(`path modifier ${String(p.type)} is missing its value or is not supported`);
}

/** mirror resolves a RequestMirror's Service and its share (percent, or fraction; default 100%). */
function mirror(ctx: TranslationContext, route: RouteOf, m: IHTTPRequestMirrorFilter | undefined, out: FilterResult): Problem | undefined {
  if (!m) return unsupported('RequestMirror filter without requestMirror');
  let percent = 100;
  if (m.percent !== undefined) percent = m.percent;
  else if (m.fraction) {
    const d = m.fraction.denominator ?? 100;
    if (d <= 0 || m.fraction.numerator < 0 || m.fraction.numerator > d) return unsupported('RequestMirror fraction must be numerator ≤ denominator, denominator > 0');
    percent = (m.fraction.numerator * 100) / d;
  }
  if (percent < 0 || percent > 100) return unsupported(`RequestMirror percent ${percent} is out of range`);
  const r = resolveServiceRef(ctx, route, m.backendRef);
  if (!r.ok) {
    out.unresolved.push({ reason: r.problem.reason, message: `RequestMirror ${r.problem.message}` });
    return undefined;
  }
  out.filters.push({ type: 'RequestMirror', backend: { ...r.backend, weight: 1 }, percent });
  return undefined;
}

/** ExternalAuthSpec is an HTTPExternalAuthFilter as the codec admits it (experimental: not in the typed models). */
interface ExternalAuthSpec {
  protocol: string;
  backendRef: { group?: string; kind?: string; name: string; namespace?: string; port?: number };
  http?: { path?: string; allowedHeaders?: string[]; allowedResponseHeaders?: string[] };
  forwardBody?: { maxSize?: number };
}

/** EXTERNAL_AUTH_TIMEOUT_MS is how long an authorization answer may take (the filter has no field for it). */
export const EXTERNAL_AUTH_TIMEOUT_MS = 10_000;

/** the HTTPAuthConfig path pattern of the CRD (a path's characters and percent escapes) */
const AUTH_PATH = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|%[0-9a-fA-F]{2})+$/;

/**
 * externalAuth resolves an ExternalAuth filter (HTTP mode). A request it cannot ask about is never
 * let through: an authorization Service that does not resolve makes the rule answer 500, with a
 * ResolvedRefs problem, as an unresolved ExtensionRef does.
 */
function externalAuth(ctx: TranslationContext, route: RouteOf, spec: ExternalAuthSpec | undefined, out: FilterResult): Problem | undefined {
  if (!spec) return unsupported('ExternalAuth filter without externalAuth');
  if (spec.protocol !== 'HTTP') return unsupported(`ExternalAuth protocol ${spec.protocol} is not supported; tuna speaks HTTP to authorization Services (protocol: HTTP)`);
  const path = spec.http?.path ?? '';
  if (path !== '' && (!AUTH_PATH.test(path) || path.includes('..'))) return unsupported(`ExternalAuth http.path ${JSON.stringify(path)} is not a clean path`);
  const maxSize = spec.forwardBody?.maxSize ?? 0;
  if (!Number.isInteger(maxSize) || maxSize < 0 || maxSize > 65_535) return unsupported(`ExternalAuth forwardBody.maxSize ${maxSize} is not 0 to 65535`);
  const r = resolveServiceRef(ctx, route, spec.backendRef);
  if (!r.ok || (r.backend.protocol !== 'http' && r.backend.protocol !== 'h2c' && r.backend.protocol !== 'h2')) {
    const problem = r.ok ? { reason: 'UnsupportedProtocol' as const, message: `backendRef ${r.backend.namespace}/${r.backend.service} speaks ${r.backend.protocol}, not HTTP` } : r.problem;
    out.unresolved.push({ reason: problem.reason, message: `ExternalAuth ${problem.message}; matching requests get 500` });
    out.filters.push({ type: 'DirectResponse', statusCode: 500 });
    return undefined;
  }
  const response = spec.http?.allowedResponseHeaders ?? [];
  out.filters.push({
    type: 'ExternalAuth',
    backend: { ...r.backend, weight: 1 },
    pathPrefix: path === '' ? '' : path.startsWith('/') ? path.replace(/\/+$/, '') : `/${path.replace(/\/+$/, '')}`,
    requestHeaders: (spec.http?.allowedHeaders ?? []).map((h) => h.toLowerCase()),
    responseHeaders: response.length === 0 ? 'all' : response.map((h) => h.toLowerCase()),
    forwardBodyBytes: maxSize,
    timeoutMs: EXTERNAL_AUTH_TIMEOUT_MS,
    semantics: 'gateway',
  });
  return undefined;
}

/** usesPrefixRewrite says whether a filter list rewrites or redirects with ReplacePrefixMatch. */
export function usesPrefixRewrite(filters: HttpFilter[]): boolean {
  return filters.some((f) => (f.type === 'URLRewrite' || f.type === 'RequestRedirect') && f.path?.type === 'ReplacePrefixMatch');
}

/** withMatchedPrefix fills the prefix a ReplacePrefixMatch modifier replaces, for one match. */
export function withMatchedPrefix(filters: HttpFilter[], prefix: string): HttpFilter[] {
  return filters.map((f) => {
    if ((f.type === 'URLRewrite' || f.type === 'RequestRedirect') && f.path?.type === 'ReplacePrefixMatch')
      return { ...f, path: { ...f.path, matchedPrefix: prefix } };
    return f;
  });
}
