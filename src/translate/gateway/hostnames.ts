import { isValidHostPattern } from '../../model/index.js';

/**
 * Hostname rules of Gateway API v1.6 (Listener.hostname, HTTPRoute/GRPCRoute/TLSRoute .hostnames):
 * a DNS name with an optional leading `*.` label; IP literals are not hostnames.
 */

/** ANY_HOST is the virtual host name used when neither the listener nor the route names a host. */
export const ANY_HOST = '*';

/** isWildcard says whether a hostname is a `*.suffix` pattern. */
export function isWildcard(host: string): boolean {
  return host.startsWith('*.');
}

/** isAcceptableHostname accepts a lower-case DNS name or `*.` pattern and refuses IP literals. */
export function isAcceptableHostname(host: string): boolean {
  if (host !== host.toLowerCase()) return false;
  if (/^[0-9.]+$/.test(host) || host.includes(':')) return false;
  return isValidHostPattern(host);
}

/**
 * wildcardCovers says whether wildcard `*.suffix` matches `host`: the wildcard stands for one or
 * more labels, so `*.example.com` covers `a.example.com` and `a.b.example.com` but not
 * `example.com`; a wildcard covers a narrower wildcard (`*.a.example.com`).
 */
export function wildcardCovers(wildcard: string, host: string): boolean {
  const suffix = wildcard.slice(1); // ".example.com"
  const name = isWildcard(host) ? host.slice(1) : host;
  return name !== suffix && name.endsWith(suffix);
}

/**
 * intersectHostnames computes the effective hostnames of a route on a listener (Gateway API
 * HTTPRoute.spec.hostnames: "intersection"): with neither set it is any host; a listener without a
 * hostname takes the route's; a route without hostnames takes the listener's; otherwise each route
 * hostname that equals, is covered by, or covers the listener hostname contributes the narrower of
 * the two. An empty result means the route does not attach to that listener.
 */
export function intersectHostnames(listener: string | undefined, route: string[]): string[] {
  if (listener === undefined) return route.length === 0 ? [ANY_HOST] : [...new Set(route)];
  if (route.length === 0) return [listener];
  const out = new Set<string>();
  for (const r of route) {
    if (r === listener) out.add(r);
    else if (isWildcard(listener) && wildcardCovers(listener, r)) out.add(r);
    else if (isWildcard(r) && wildcardCovers(r, listener)) out.add(listener);
  }
  return [...out];
}
