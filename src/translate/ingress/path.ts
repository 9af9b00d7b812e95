import type { PathMatch } from '../../model/index.js';

/** PathCheck is the graph match for an Ingress path, or why it cannot be served. */
export type PathCheck = { ok: true; match: PathMatch } | { ok: false; message: string };

// A path travels as the path part of a URL (RFC 3986 §3.3): no query, no fragment, no whitespace or control characters.
const forbidden = /[\s\p{Cc}?#]/u;

/**
 * toPathMatch turns an Ingress path and pathType (networking.k8s.io/v1 HTTPIngressPath) into a graph
 * match. `Prefix` is element-wise in the graph, and a trailing `/` is ignored (the API's examples:
 * `/aaa/bbb/` matches `/aaa/bbb`), so it is stripped here and `/foo` and `/foo/` are the same match.
 * `ImplementationSpecific` (and a missing pathType, the networking/v1beta1 default) is served as
 * `Prefix`; an empty path is then `/`. `Exact` is kept byte for byte: `/foo` does not match `/foo/`.
 */
export function toPathMatch(pathType: string | undefined, path: string | undefined): PathCheck {
  const type = pathType ?? 'ImplementationSpecific';
  if (type !== 'Exact' && type !== 'Prefix' && type !== 'ImplementationSpecific')
    return { ok: false, message: `pathType ${type} is not one of Exact, Prefix, ImplementationSpecific` };
  const value = path === undefined || path === '' ? (type === 'ImplementationSpecific' ? '/' : '') : path;
  if (!value.startsWith('/')) return { ok: false, message: `path "${value}" (${type}) must start with "/"` };
  if (forbidden.test(value)) return { ok: false, message: `path "${value}" contains whitespace, "?" or "#"` };
  if (type === 'Exact') return { ok: true, match: { type: 'Exact', value } };
  const trimmed = value.replace(/\/+$/, '');
  return { ok: true, match: { type: 'Prefix', value: trimmed === '' ? '/' : trimmed } };
}

/** describePath names a path for messages: `Prefix /foo` or `ImplementationSpecific /foo (served as Prefix)`. */
export function describePath(pathType: string | undefined, path: string | undefined): string {
  const type = pathType ?? 'ImplementationSpecific';
  const shown = path === undefined || path === '' ? '(empty)' : path;
  return type === 'ImplementationSpecific' ? `ImplementationSpecific ${shown} (served as Prefix)` : `${type} ${shown}`;
}
