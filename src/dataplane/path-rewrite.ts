import type { PathModifier } from '../model/index.js';
import { trimTrailingSlash } from './match.js';

/**
 * rewritePath applies a Gateway API path modifier to a path (no query). ReplacePrefixMatch
 * replaces the matched prefix element-wise: with prefix `/foo`, `/foo/bar` becomes `<value>/bar`
 * and `/foo` becomes `<value>` (HTTPPathModifier table in the Gateway API spec).
 */
export function rewritePath(path: string, mod: PathModifier): string {
  if (mod.type === 'ReplaceFullPath') return mod.value === '' ? '/' : mod.value;
  const prefix = trimTrailingSlash(mod.matchedPrefix);
  const isUnder = prefix === '' || path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 0x2f);
  if (!isUnder) return path;
  const rest = path.slice(prefix.length);
  if (rest === '' || rest === '/') {
    const value = mod.value === '' ? '/' : mod.value;
    return rest === '/' && !value.endsWith('/') ? `${value}/` : value;
  }
  const result = trimTrailingSlash(mod.value) + rest;
  return result === '' ? '/' : result;
}

/** splitPathAndQuery splits a request target into its path and `?query` (kept verbatim). */
export function splitPathAndQuery(target: string): { path: string; search: string } {
  const q = target.indexOf('?');
  return q < 0 ? { path: target, search: '' } : { path: target.slice(0, q), search: target.slice(q) };
}
