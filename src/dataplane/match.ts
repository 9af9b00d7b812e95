import type { HttpMatch, PathMatch, StringMatch } from '../model/index.js';

/**
 * Request matching (Gateway API HTTPRouteMatch semantics). Matchers are compiled once per graph so
 * that a request only runs precompiled regular expressions.
 */

/** RequestFacts are the parts of a request that routes match on. */
export interface RequestFacts {
  method: string;
  /** path without the query string */
  path: string;
  /** lowercase header names; repeated headers joined with `, ` */
  headers: Record<string, string | string[] | undefined>;
  query: URLSearchParams;
}

/** CompiledMatch is an HttpMatch turned into one predicate. */
export type CompiledMatch = (req: RequestFacts) => boolean;

/** compileMatch builds the predicate of one match; an invalid regular expression never matches. */
export function compileMatch(match: HttpMatch): CompiledMatch {
  const path = compilePath(match.path);
  const headers = match.headers.map((h) => compileString(h, true));
  const query = match.query.map((q) => compileString(q, false));
  const method = match.method?.toUpperCase();
  // Most matches test neither headers nor query: no closure for every() per request then.
  return (req) =>
    (method === undefined || req.method === method) &&
    path(req.path) &&
    (headers.length === 0 || headers.every((h) => h.test(headerValue(req.headers, h.name)))) &&
    (query.length === 0 || query.every((q) => q.test(req.query.get(q.name) ?? undefined)));
}

/**
 * compilePath builds a path predicate. Prefix matching is element-wise (Gateway API PathPrefix:
 * `/abc` matches `/abc`, `/abc/` and `/abc/def`, never `/abcd`); a trailing slash on the prefix is
 * not significant. RegularExpression must match the whole path.
 */
export function compilePath(match: PathMatch): (path: string) => boolean {
  switch (match.type) {
    case 'Exact':
      return (p) => p === match.value;
    case 'Prefix': {
      const prefix = trimTrailingSlash(match.value);
      if (prefix === '') return (p) => p.startsWith('/');
      return (p) => p === prefix || (p.startsWith(prefix) && p.charCodeAt(prefix.length) === 0x2f);
    }
    case 'RegularExpression': {
      const re = compileFullRegExp(match.value);
      return (p) => re !== undefined && re.test(p);
    }
  }
}

/** trimTrailingSlash removes the slashes that end a prefix (`/a/` → `/a`, `/` → ``). */
export function trimTrailingSlash(prefix: string): string {
  let end = prefix.length;
  while (end > 0 && prefix.charCodeAt(end - 1) === 0x2f) end--;
  return prefix.slice(0, end);
}

interface StringTest {
  name: string;
  test: (value: string | undefined) => boolean;
}

function compileString(m: StringMatch, isHeader: boolean): StringTest {
  const name = isHeader ? m.name.toLowerCase() : m.name;
  if (m.type === 'Exact') return { name, test: (v) => v === m.value };
  const re = compileFullRegExp(m.value);
  return { name, test: (v) => v !== undefined && re !== undefined && re.test(v) };
}

function compileFullRegExp(source: string): RegExp | undefined {
  try {
    return new RegExp(`^(?:${source})$`, 'u');
  } catch {
    return undefined;
  }
}

/** headerValue returns one header as a string (repeated values joined by `, `, RFC 9110 §5.3). */
export function headerValue(headers: RequestFacts['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}
