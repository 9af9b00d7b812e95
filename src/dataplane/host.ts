/** Host names as the router compares them. */
import type { Listener } from '../model/index.js';
import { matchesWildcard } from '../wire/index.js';
import type { WildcardDepth } from '../wire/index.js';

// One normal form and one wildcard rule for the edge and the data plane (src/wire/host-name.ts).
export { matchesWildcard, normalizeHost } from '../wire/index.js';

/** portOfAuthority returns the explicit port of an authority (`a:8080` → 8080), or undefined. */
export function portOfAuthority(authority: string): number | undefined {
  const m = /:(\d{1,5})$/.exec(authority.trim());
  if (!m || (authority.includes('[') && !authority.includes(']:'))) return undefined;
  return Number(m[1]);
}

/**
 * wildcardDepthOf says how deep a wildcard of this listener's virtual hosts reaches: one label for
 * a listener an Ingress made (the Ingress spec), one or more for the Gateway API and the rest.
 */
export function wildcardDepthOf(listener: Pick<Listener, 'source'>): WildcardDepth {
  return listener.source.kind === 'Ingress' ? 'one-label' : 'any-labels';
}

/**
 * selectByHost picks the entry whose hostname best fits `host`: the exact name, then the longest
 * wildcard suffix that covers it at its depth, then `*` (Gateway API: "the most specific match wins").
 */
export function selectByHost<T>(
  entries: readonly T[],
  hostOf: (e: T) => string,
  host: string,
  depthOf: (e: T) => WildcardDepth = () => 'any-labels',
): T | undefined {
  let best: T | undefined;
  let bestLength = -1;
  let any: T | undefined;
  for (const e of entries) {
    const pattern = hostOf(e);
    if (pattern === host) return e;
    if (pattern === '*') any ??= e;
    else if (pattern.length > bestLength && matchesWildcard(pattern, host, depthOf(e))) {
      best = e;
      bestLength = pattern.length;
    }
  }
  return best ?? any;
}
