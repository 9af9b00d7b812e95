import type { IHTTPRouteMatch } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRouteMatch';
import type { HttpMatch, PathMatch, StringMatch } from '../../model/index.js';
import type { Problem } from './context.js';
import { checkRegex } from './regex-safety.js';

/** NamedMatch is a header or query parameter match as written in a route. */
export interface NamedMatch {
  name: string;
  type?: string;
  value: string;
}

/**
 * convertHttpMatch maps one HTTPRouteMatch to the graph. Path defaults to PathPrefix `/`; Exact and
 * PathPrefix values must be absolute paths; RegularExpression patterns (paths, headers, query
 * parameters) must pass checkRegex. Any failure is UnsupportedValue and the rule is not published.
 */
export function convertHttpMatch(m: IHTTPRouteMatch): HttpMatch | Problem {
  const path = convertPath(m.path?.type ?? 'PathPrefix', m.path?.value ?? '/');
  if ('reason' in path) return path;
  const headers = convertNamed('header', m.headers ?? [], true);
  if (!Array.isArray(headers)) return headers;
  const query = convertNamed('query parameter', m.queryParams ?? [], false);
  if (!Array.isArray(query)) return query;
  return { path, ...(m.method !== undefined ? { method: m.method } : {}), headers, query };
}

function convertPath(type: string, value: string): PathMatch | Problem {
  switch (type) {
    case 'Exact':
    case 'PathPrefix':
      if (!value.startsWith('/')) return unsupported(`path ${value} must start with /`);
      return { type: type === 'Exact' ? 'Exact' : 'Prefix', value };
    case 'RegularExpression': {
      const v = checkRegex(value);
      return v.ok ? { type: 'RegularExpression', value } : unsupported(`path ${v.message}: ${value}`);
    }
    default:
      return unsupported(`path match type ${type} is not supported`);
  }
}

/**
 * convertNamed maps header (names case-insensitive) or query parameter (case-sensitive) matches;
 * per the spec only the first of several entries with an equivalent name counts.
 */
export function convertNamed(what: string, list: NamedMatch[], foldCase: boolean): StringMatch[] | Problem {
  const seen = new Set<string>();
  const out: StringMatch[] = [];
  for (const h of list) {
    const key = foldCase ? h.name.toLowerCase() : h.name;
    if (seen.has(key)) continue;
    seen.add(key);
    const type = h.type ?? 'Exact';
    if (type === 'RegularExpression') {
      const v = checkRegex(h.value);
      if (!v.ok) return unsupported(`${what} ${h.name} ${v.message}: ${h.value}`);
    } else if (type !== 'Exact') return unsupported(`${what} match type ${type} is not supported`);
    out.push({ name: h.name, type, value: h.value });
  }
  return out;
}

function unsupported(message: string): Problem {
  return { reason: 'UnsupportedValue', message };
}
