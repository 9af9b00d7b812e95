import type { SecretRef, ServiceBackend } from '../../model/index.js';
import type { IngressEntry, PathCandidate } from './entry.js';
import { whyFirst } from './entry.js';

/** Fallback is the defaultBackend that serves one host. */
export interface Fallback {
  owner: IngressEntry;
  backend: ServiceBackend;
}

/** Certificate is the TLS Secret one host is served with, and the Ingress `spec.tls` entry naming it. */
export interface Certificate {
  owner: IngressEntry;
  tlsIndex: number;
  secret: SecretRef;
}

/** HostRoutes is everything the tuna Ingresses serve on one host, conflicts already resolved. */
export interface HostRoutes {
  host: string;
  /** by match key (`Prefix /api`): the winning path */
  paths: Map<string, PathCandidate>;
  fallback?: Fallback;
  certificate?: Certificate;
}

/** RouteTable maps each host to what it serves. */
export type RouteTable = Map<string, HostRoutes>;

/** hostRoutes returns the record of a host, creating it on first use. */
export function hostRoutes(table: RouteTable, host: string): HostRoutes {
  let h = table.get(host);
  if (!h) {
    h = { host, paths: new Map() };
    table.set(host, h);
  }
  return h;
}

const catchAll = 'Prefix /';

/**
 * placePaths puts every candidate path into the table; entries must be in precedence order. Two
 * paths with the same host and the same match (after normalisation: `Prefix /a/` is `Prefix /a`,
 * ImplementationSpecific is Prefix) conflict: the first placed wins (the oldest Ingress, then
 * `namespace/name`, then rule and path order) and the other is reported `PathConflict`.
 */
export function placePaths(table: RouteTable, entries: IngressEntry[]): void {
  for (const entry of entries) {
    for (const candidate of entry.paths) {
      const routes = hostRoutes(table, candidate.host);
      const key = `${candidate.match.type} ${candidate.match.value}`;
      const winner = routes.paths.get(key);
      if (!winner) {
        routes.paths.set(key, candidate);
        continue;
      }
      const by = `spec.rules[${winner.rule}].http.paths[${winner.path}] of ${winner.owner === entry ? 'this Ingress' : `Ingress ${winner.owner.key}`}`;
      entry.problems.push({
        condition: 'Conflicted',
        reason: 'PathConflict',
        message: `${candidate.label}: ${candidate.host} ${key} is already served by ${by}, which takes precedence because ${whyFirst(winner.owner, entry)}; this path is not published`,
      });
    }
  }
}

/**
 * placeFallbacks gives each host at most one defaultBackend, after all paths are placed (entries in
 * precedence order). A defaultBackend catches what no rule path on the host matches, from any tuna
 * Ingress: it is served as `Prefix /` and only where no Ingress has a `Prefix /` path of its own on
 * that host (such a path is more specific by definition, so the defaultBackend is not used there
 * and nothing is reported). Two defaultBackends on one host conflict: the older Ingress wins and the
 * other is reported `DefaultBackendConflict`.
 */
export function placeFallbacks(table: RouteTable, entries: IngressEntry[]): void {
  for (const entry of entries) {
    const backend = entry.fallback;
    if (!backend) continue;
    for (const host of entry.hosts) {
      const routes = hostRoutes(table, host);
      if (routes.paths.has(catchAll)) continue;
      const winner = routes.fallback;
      if (!winner) {
        routes.fallback = { owner: entry, backend };
        continue;
      }
      entry.problems.push({
        condition: 'Conflicted',
        reason: 'DefaultBackendConflict',
        message: `spec.defaultBackend: ${host} already falls back to the defaultBackend of Ingress ${winner.owner.key}, which takes precedence because ${whyFirst(winner.owner, entry)}; this defaultBackend is not used for ${host}`,
      });
    }
  }
}
