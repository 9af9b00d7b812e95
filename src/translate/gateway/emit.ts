import type { HttpRoute, ObjectRef } from '../../model/index.js';
import { sourceOf } from '../common/meta.js';
import type { ParentAttachment } from './attachment.js';
import type { GatewayContext, ListenerContext } from './context.js';
import { ANY_HOST, isWildcard, wildcardCovers } from './hostnames.js';
import { withMatchedPrefix } from './http-filters.js';
import { bindingListeners } from './listener-sets.js';
import type { CompiledRule } from './rules.js';
import type { RouteVerdict } from './route-status.js';
import { isAttached } from './route-status.js';

/** RouteOwner identifies the route whose rules are placed. */
export interface RouteOwner {
  ref: ObjectRef;
  /** creation timestamp (RFC 3339), '' if unknown */
  created: string;
  /** id prefix: `httproute/<ns>/<name>` */
  idPrefix: string;
}

/**
 * placeHttpRules puts a route's rules on one virtual host per (listener, effective hostname) it
 * attached to, one graph HttpRoute per rule × match. Ids carry the virtual host, so one route on
 * several listeners or hostnames stays unique in the graph. Precise hostnames on the edge's shared
 * ports (HTTP 80, HTTPS 443) are also claimed for the Gateway's binding, so merge.ts can settle a
 * host wanted by an Ingress or a Tunnel too.
 */
export function placeHttpRules(
  owner: RouteOwner,
  parents: ParentAttachment[],
  verdict: RouteVerdict,
  rules: CompiledRule[],
): void {
  const placed = new Set<string>();
  for (const p of parents) {
    if (!isAttached(p, verdict)) continue;
    for (const { listener, hostnames } of p.listeners) {
      if (!listener.graph) continue; // attached, but the listener is not served (unresolved references)
      for (const hostname of hostnames) {
        const vhostId = `${listener.graph.id}/vhost/${hostname}`;
        if (placed.has(vhostId) || !ownsHostname(p.gateway, listener, hostname)) continue;
        placed.add(vhostId);
        const vhost = virtualHost(p.gateway, listener, vhostId, hostname);
        for (const rule of rules) vhost.routes.push(...routesOf(owner, rule, vhostId));
        claim(p.gateway, listener, hostname, owner);
      }
    }
  }
}

/**
 * ownsHostname implements listener isolation (Gateway API v1.6 Listeners, "General Listener
 * behavior"): requests (or TLS SNI names) for a hostname go only to the most specific listener on
 * the port whose hostname matches, so a route's hostname is not placed on a broader listener when a
 * narrower listener of the same port covers it (`foo.example.com` beats `*.example.com` beats none).
 */
export function ownsHostname(gw: GatewayContext, listener: ListenerContext, hostname: string): boolean {
  if (hostname === ANY_HOST) return true;
  // Every listener of the binding counts: a ListenerSet's listeners share the Gateway's ports (GEP-1713).
  for (const other of bindingListeners(gw)) {
    // Listeners sharing a port are of one family (HTTP, or TLS by SNI), conflicts saw to that.
    if (other === listener || !other.graph || other.port !== listener.port || other.hostname === undefined) continue;
    const covers = other.hostname === hostname || (isWildcard(other.hostname) && wildcardCovers(other.hostname, hostname));
    if (covers && isMoreSpecific(other.hostname, listener.hostname)) return false;
  }
  return true;
}

/** isMoreSpecific orders listener hostnames: exact, then wildcards by label count, then none. */
function isMoreSpecific(a: string, b: string | undefined): boolean {
  if (b === undefined) return true;
  if (!isWildcard(a)) return isWildcard(b);
  return isWildcard(b) && a.split('.').length > b.split('.').length;
}

function virtualHost(gw: GatewayContext, listener: ListenerContext, id: string, hostname: string) {
  let vhost = gw.virtualHosts.get(id);
  if (!vhost) {
    vhost = { id, listenerId: listener.graph?.id ?? '', hostname, routes: [] };
    gw.virtualHosts.set(id, vhost);
  }
  return vhost;
}

function routesOf(owner: RouteOwner, rule: CompiledRule, vhostId: string): HttpRoute[] {
  return rule.matches.map((match, j) => ({
    id: `${owner.idPrefix}/rule/${rule.index}/match/${j}/on/${vhostId}`,
    source: sourceOf(owner.ref, `rule/${rule.index}/match/${j}`),
    origin: { created: owner.created, key: `${owner.ref.namespace ?? ''}/${owner.ref.name}`, rule: rule.index, match: j },
    match,
    filters: match.path.type === 'Prefix' ? withMatchedPrefix(rule.filters, match.path.value) : rule.filters,
    backends: rule.backends,
    ...(rule.timeouts ? { timeouts: rule.timeouts } : {}),
    ...(rule.retry ? { retry: rule.retry } : {}),
  }));
}

/** claim records a precise hostname served on a port the edge also shares (HTTP 80, HTTPS 443). */
function claim(gw: GatewayContext, listener: ListenerContext, hostname: string, owner: RouteOwner): void {
  if (hostname === ANY_HOST || isWildcard(hostname)) return;
  const shared = (listener.protocol === 'HTTP' && listener.port === 80) || (listener.protocol === 'HTTPS' && listener.port === 443);
  if (!shared) return;
  const key = `${hostname} ${owner.ref.kind}/${owner.ref.namespace ?? ''}/${owner.ref.name}`;
  if (gw.claimKeys.has(key)) return;
  gw.claimKeys.add(key);
  gw.claims.push({ hostname, bindingId: gw.bindingId, owner: owner.ref, created: owner.created });
}
