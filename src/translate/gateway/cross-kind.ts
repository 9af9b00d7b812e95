import { compareStrings } from '../../model/index.js';
import type { ParentAttachment } from './attachment.js';
import type { ListenerContext } from './context.js';
import { ANY_HOST, isWildcard, wildcardCovers } from './hostnames.js';
import type { RouteVerdict } from './route-status.js';
import { isAttached } from './route-status.js';
import type { HttpRouteKind } from '../kinds.js';

/** PendingHttpRoute is an HTTPRoute or GRPCRoute attached but not yet published. */
export interface PendingHttpRoute {
  kind: HttpRouteKind;
  /** `<namespace>/<name>` */
  key: string;
  created: string;
  parents: ParentAttachment[];
  verdict: RouteVerdict;
}

/** HostSet is the hostnames one route kind already holds on one listener. */
interface HostSet {
  exact: Map<string, string>;
  wildcards: Map<string, string>;
}

/**
 * resolveCrossKindConflicts enforces the GRPCRoute rule on cross serving (Gateway API v1.6,
 * GRPCRouteSpec.hostnames): when an HTTPRoute and a GRPCRoute attach to one listener with
 * intersecting hostnames, only the older (then `namespace/name` first) is accepted there. The other
 * loses that listener; a parent left with no listener gets Accepted=False reason HostnameConflict.
 */
export function resolveCrossKindConflicts(routes: PendingHttpRoute[]): void {
  const held = new Map<ListenerContext, Record<HttpRouteKind, HostSet>>();
  const ordered = [...routes].sort((a, b) => compareCreated(a.created, b.created) || compareStrings(a.key, b.key) || compareStrings(a.kind, b.kind));
  for (const route of ordered) {
    const other = route.kind === 'HTTPRoute' ? 'GRPCRoute' : 'HTTPRoute';
    for (const parent of route.parents) {
      if (!isAttached(parent, route.verdict)) continue;
      const kept = [];
      let lost: string | undefined;
      for (const a of parent.listeners) {
        const sets = held.get(a.listener) ?? { HTTPRoute: emptySet(), GRPCRoute: emptySet() };
        held.set(a.listener, sets);
        const clash = a.hostnames.map((h) => clashWith(sets[other], h)).find((c) => c !== undefined);
        if (clash !== undefined) {
          lost = `listener ${a.listener.name} already serves ${other} ${clash} on an intersecting hostname; the older route wins`;
          continue;
        }
        for (const h of a.hostnames) (isWildcard(h) || h === ANY_HOST ? sets[route.kind].wildcards : sets[route.kind].exact).set(h, route.key);
        kept.push(a);
      }
      parent.listeners = kept;
      if (lost === undefined) continue;
      if (kept.length === 0) parent.problem = { reason: 'HostnameConflict', message: lost };
      else parent.lost = [...(parent.lost ?? []), { reason: 'HostnameConflict', message: lost }];
    }
  }
}

function emptySet(): HostSet {
  return { exact: new Map(), wildcards: new Map() };
}

/** clashWith returns the route holding a hostname that intersects `host`, if any. */
function clashWith(set: HostSet, host: string): string | undefined {
  if (host === ANY_HOST) return [...set.exact.values(), ...set.wildcards.values()][0];
  const any = set.wildcards.get(ANY_HOST);
  if (any !== undefined) return any;
  if (!isWildcard(host)) {
    const exact = set.exact.get(host);
    if (exact !== undefined) return exact;
    for (const [w, owner] of set.wildcards) if (wildcardCovers(w, host)) return owner;
    return undefined;
  }
  for (const [w, owner] of set.wildcards) if (w === host || wildcardCovers(w, host) || wildcardCovers(host, w)) return owner;
  for (const [e, owner] of set.exact) if (wildcardCovers(host, e)) return owner;
  return undefined;
}

function compareCreated(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return 1;
  if (b === '') return -1;
  return compareStrings(a, b);
}
