/** Host names as the router compares them. */

/**
 * normalizeHost lowercases an `:authority`/Host value and strips its port and a trailing dot
 * (RFC 9110 §4.2.3: host names are case-insensitive; an FQDN's final dot names the same host).
 * Returns undefined when the value is not a syntactically valid host.
 */
export function normalizeHost(authority: string): string | undefined {
  let host = authority.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end < 0) return undefined;
    const rest = host.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
    return host.slice(0, end + 1);
  }
  const colon = host.indexOf(':');
  if (colon >= 0) {
    const port = host.slice(colon + 1);
    if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) return undefined;
    host = host.slice(0, colon);
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '' || !/^[a-z0-9_.*-]+$/.test(host)) return undefined;
  return host;
}

/** portOfAuthority returns the explicit port of an authority (`a:8080` → 8080), or undefined. */
export function portOfAuthority(authority: string): number | undefined {
  const m = /:(\d{1,5})$/.exec(authority.trim());
  if (!m || (authority.includes('[') && !authority.includes(']:'))) return undefined;
  return Number(m[1]);
}

/**
 * matchesWildcard says whether `host` falls under `*.suffix`. Following the Gateway API listener
 * hostname rules, the wildcard covers one or more labels (`*.example.com` matches `a.example.com`
 * and `a.b.example.com`, never `example.com` itself).
 */
export function matchesWildcard(pattern: string, host: string): boolean {
  if (!pattern.startsWith('*.')) return false;
  const suffix = pattern.slice(1);
  return host.length > suffix.length && host.endsWith(suffix);
}

/**
 * selectByHost picks the entry whose hostname best fits `host`: the exact name, then the longest
 * wildcard suffix, then `*` (Gateway API: "the most specific match wins").
 */
export function selectByHost<T>(entries: readonly T[], hostOf: (e: T) => string, host: string): T | undefined {
  let best: T | undefined;
  let bestLength = -1;
  let any: T | undefined;
  for (const e of entries) {
    const pattern = hostOf(e);
    if (pattern === host) return e;
    if (pattern === '*') any ??= e;
    else if (pattern.length > bestLength && matchesWildcard(pattern, host)) {
      best = e;
      bestLength = pattern.length;
    }
  }
  return best ?? any;
}
