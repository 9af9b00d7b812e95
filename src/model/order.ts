import type { HttpRoute, PathMatch, RouteGraph } from './types.js';

/**
 * Canonical ordering. The graph must come out byte-identical for the same objects in any order, so
 * every list is sorted by id and routes by the Gateway API matching precedence, whose last
 * tie-breakers (source key, rule and match index) make the order total.
 */

const pathKindRank: Record<PathMatch['type'], number> = { Exact: 0, RegularExpression: 1, Prefix: 2 };

/** compareStrings orders by UTF-16 code units, independent of locale. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * compareRoutes orders two HTTP routes of one virtual host, most specific first, per the Gateway
 * API HTTPRoute "Matching precedence": Exact path, then the longest Prefix, then method match,
 * most header matches, most query matches; ties go to the oldest route, then `namespace/name`
 * alphabetically, then rule and match order. RegularExpression paths, whose precedence the spec
 * leaves to implementations, rank between Exact and Prefix (longest pattern first), as in Envoy
 * Gateway: after every prefix, a regex on a host that also has `/` could never match.
 */
export function compareRoutes(a: HttpRoute, b: HttpRoute): number {
  const pa = a.match.path;
  const pb = b.match.path;
  return (
    pathKindRank[pa.type] - pathKindRank[pb.type] ||
    pb.value.length - pa.value.length ||
    Number(b.match.method !== undefined) - Number(a.match.method !== undefined) ||
    b.match.headers.length - a.match.headers.length ||
    b.match.query.length - a.match.query.length ||
    compareCreated(a.origin.created, b.origin.created) ||
    compareStrings(a.origin.key, b.origin.key) ||
    a.origin.rule - b.origin.rule ||
    a.origin.match - b.origin.match ||
    compareStrings(a.id, b.id)
  );
}

/** compareCreated puts older timestamps first and unknown ('') ones last. */
function compareCreated(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return 1;
  if (b === '') return -1;
  return compareStrings(a, b);
}

/** byId compares two nodes by their id. */
export function byId(a: { id: string }, b: { id: string }): number {
  return compareStrings(a.id, b.id);
}

/**
 * canonicalize returns the graph with every list in canonical order (the input is not changed).
 * A binding, virtual host or stream route it has put in order before comes out as the same object
 * as then: an incremental translation hands the nodes of what did not change again, and their
 * consumers (tunnelsDiffer, validate, the data plane's route table) skip a node they have seen.
 * Graph nodes are never changed once built, so a node's canonical form stays what it was.
 */
export function canonicalize(graph: RouteGraph): RouteGraph {
  return {
    bindings: graph.bindings.map((b) => canonical(b, () => ({ ...b, hostnames: [...new Set(b.hostnames)].sort(compareStrings) }))).sort(byId),
    listeners: [...graph.listeners].sort(byId),
    virtualHosts: graph.virtualHosts.map((v) => canonical(v, () => ({ ...v, routes: [...v.routes].sort(compareRoutes) }))).sort(byId),
    streamRoutes: graph.streamRoutes.map((r) => canonical(r, () => ({ ...r, hostnames: [...new Set(r.hostnames)].sort(compareStrings) }))).sort(byId),
    reservations: [...graph.reservations].sort(byId),
  };
}

/** canonicalForms maps each node canonicalize was given to what it made of it (and each made node to itself). */
const canonicalForms = new WeakMap<object, object>();

function canonical<T extends object>(node: T, make: () => T): T {
  const known = canonicalForms.get(node) as T | undefined;
  if (known !== undefined) return known;
  const made = make();
  canonicalForms.set(node, made);
  canonicalForms.set(made, made);
  return made;
}
