import type { Binding, HttpRoute, Listener, Reservation, RouteGraph, StreamRoute, VirtualHost } from './types.js';

/** EntityDiff lists nodes of one kind that were added, removed, or changed (same id, new content). */
export interface EntityDiff<T> {
  added: T[];
  removed: T[];
  changed: { before: T; after: T }[];
}

/** RouteChange is an HTTP route together with the virtual host that holds it. */
export interface PlacedRoute {
  virtualHostId: string;
  /** position in the virtual host's precedence order */
  index: number;
  route: HttpRoute;
}

/**
 * GraphDiff says exactly what changed between two graphs. Consumers act on the smallest part:
 * the tunnel manager only on `bindings`, the data plane on the rest, so a route change never
 * reconnects a tunnel.
 */
export interface GraphDiff {
  bindings: EntityDiff<Binding>;
  listeners: EntityDiff<Listener>;
  /** a virtual host is `changed` when its listener, hostname or route order changed */
  virtualHosts: EntityDiff<VirtualHost>;
  routes: EntityDiff<PlacedRoute>;
  streamRoutes: EntityDiff<StreamRoute>;
  reservations: EntityDiff<Reservation>;
  /** true when nothing at all changed */
  isEmpty: boolean;
  /** true when the set of tunnels to hold changed (bindings added, removed or changed) */
  isTunnelChange: boolean;
}

/** diff compares two graphs node by node, by id. Both should be canonical. */
export function diff(before: RouteGraph, after: RouteGraph): GraphDiff {
  const bindings = diffById(before.bindings, after.bindings);
  const listeners = diffById(before.listeners, after.listeners);
  const virtualHosts = diffById(before.virtualHosts, after.virtualHosts, virtualHostShape);
  const routes = diffById(placeRoutes(before), placeRoutes(after), (p) => p.route, (p) => p.route.id);
  const streamRoutes = diffById(before.streamRoutes, after.streamRoutes);
  const reservations = diffById(before.reservations, after.reservations);
  const parts = [bindings, listeners, virtualHosts, routes, streamRoutes, reservations];
  return {
    bindings,
    listeners,
    virtualHosts,
    routes,
    streamRoutes,
    reservations,
    isEmpty: parts.every(isEmptyDiff),
    // A binding's policies are applied by the data plane: changing them reconnects no tunnel.
    isTunnelChange: !isEmptyDiff(diffById(before.bindings, after.bindings, bindingWithoutPolicies)),
  };
}

function bindingWithoutPolicies(b: Binding): unknown {
  const { policies: _policies, ...rest } = b;
  return rest;
}

function isEmptyDiff(d: EntityDiff<unknown>): boolean {
  return d.added.length === 0 && d.removed.length === 0 && d.changed.length === 0;
}

/** A virtual host compared without its routes' content: only their order matters here. */
function virtualHostShape(v: VirtualHost): unknown {
  return { listenerId: v.listenerId, hostname: v.hostname, order: v.routes.map((r) => r.id) };
}

function placeRoutes(graph: RouteGraph): PlacedRoute[] {
  return graph.virtualHosts.flatMap((v) => v.routes.map((route, index) => ({ virtualHostId: v.id, index, route })));
}

function diffById<T>(
  before: T[],
  after: T[],
  shape: (x: T) => unknown = (x) => x,
  idOf: (x: T) => string = (x) => (x as { id: string }).id,
): EntityDiff<T> {
  const old = new Map(before.map((x) => [idOf(x), x]));
  const result: EntityDiff<T> = { added: [], removed: [], changed: [] };
  const kept = new Set<string>();
  for (const x of after) {
    const id = idOf(x);
    const prior = old.get(id);
    if (prior === undefined) result.added.push(x);
    else {
      kept.add(id);
      if (stableStringify(shape(prior)) !== stableStringify(shape(x))) result.changed.push({ before: prior, after: x });
    }
  }
  for (const [id, x] of old) if (!kept.has(id)) result.removed.push(x);
  return result;
}

/**
 * tunnelsDiffer tells whether two graphs hold different tunnels: a binding added, removed or
 * changed, its policies aside (the data plane applies those). It is what the agent asks on every
 * sync, so it compares the bindings alone and stops at the first difference: the whole `diff`
 * serialised every route of 10,000 hosts twice per sync (docs/benchmarks.md, "scale").
 */
export function tunnelsDiffer(before: RouteGraph, after: RouteGraph): boolean {
  if (before.bindings.length !== after.bindings.length) return true;
  const old = new Map(before.bindings.map((b) => [b.id, b]));
  for (const b of after.bindings) {
    const prior = old.get(b.id);
    if (prior === undefined) return true;
    if (prior !== b && stableStringify(bindingWithoutPolicies(prior)) !== stableStringify(bindingWithoutPolicies(b))) return true;
  }
  return false;
}

/** stableStringify serialises plain data with object keys sorted, so equal data gives equal text (JSON.stringify's rules otherwise). */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  return writeStable(value);
}

/** writeStable is stableStringify of an object or array, written directly rather than through a replacer's sorted copies. */
function writeStable(value: object): string {
  const json = (value as { toJSON?: () => unknown }).toJSON;
  if (typeof json === 'function') return stableStringify(json.call(value)) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (i > 0) out += ',';
      out += v === undefined || typeof v === 'function' || typeof v === 'symbol' ? 'null' : v === null || typeof v !== 'object' ? JSON.stringify(v) : writeStable(v);
    }
    return `${out}]`;
  }
  let out = '{';
  let first = true;
  for (const k of sortedKeys(value)) {
    const v: unknown = (value as Record<string, unknown>)[k];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${v === null || typeof v !== 'object' ? JSON.stringify(v) : writeStable(v)}`;
    first = false;
  }
  return `${out}}`;
}

const ARRAY_INDEX = /^(0|[1-9]\d{0,9})$/;

/**
 * sortedKeys orders keys as the object built from sorted keys enumerates them, which is what the
 * serialiser wrote before: integer-like keys first, in numeric order (the language puts them
 * there), then the others sorted.
 */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value).sort();
  const indices = keys.filter((k) => ARRAY_INDEX.test(k) && Number(k) < 4294967295);
  if (indices.length === 0) return keys;
  const isIndex = new Set(indices);
  return [...indices.sort((a, b) => Number(a) - Number(b)), ...keys.filter((k) => !isIndex.has(k))];
}
