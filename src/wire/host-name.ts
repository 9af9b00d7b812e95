/**
 * Host names as both ends compare them (docs/edge.md "Host names"): the edge picks a binding and the data
 * plane a virtual host with the same normal form, so a Host the edge routes to a tenant is the Host
 * that tenant's routes are matched against.
 */

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

/**
 * WildcardDepth is how many labels a `*.suffix` host name covers, which depends on the API the
 * name came from: an Ingress wildcard covers exactly one label (Ingress spec, `rules[].host`:
 * "`*.foo.com` matches `bar.foo.com` but not `baz.bar.foo.com`"); a Gateway API wildcard covers
 * one or more (Gateway API `Hostname`: "`*.example.com` matches `foo.example.com` and
 * `foo.bar.example.com`").
 */
export type WildcardDepth = 'one-label' | 'any-labels';

/** matchesWildcard says whether the normalised `host` falls under `*.suffix` at that depth (never the suffix itself). */
export function matchesWildcard(pattern: string, host: string, depth: WildcardDepth = 'any-labels'): boolean {
  if (!pattern.startsWith('*.')) return false;
  const suffix = pattern.slice(1);
  if (host.length <= suffix.length || !host.endsWith(suffix)) return false;
  return depth === 'any-labels' || !host.slice(0, host.length - suffix.length).includes('.');
}

/**
 * wildcardSuffixes lists the `.suffix` keys a wildcard table is looked up with for `host`, longest
 * first (`a.b.example.com` → `.b.example.com`, `.example.com`, `.com`): the most specific
 * wildcard wins.
 */
export function wildcardSuffixes(host: string): string[] {
  const out: string[] = [];
  for (let dot = host.indexOf('.'); dot > 0 && dot < host.length - 1; dot = host.indexOf('.', dot + 1)) out.push(host.slice(dot));
  return out;
}
