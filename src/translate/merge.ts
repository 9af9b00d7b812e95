import { canonicalize, compareStrings, emptyGraph, refKey } from '../model/index.js';
import type { Condition, ObjectStatus, RouteGraph } from '../model/index.js';
import type { Fragment, HostClaim, TranslateResult } from './types.js';
import { condition, upsertInPlace, warning } from './common/status.js';

/**
 * mergeFragments joins the fragments of every translator into one canonical graph. A hostname
 * claimed by fragments of different groups (an Ingress and a Tunnel, say) goes to the group holding
 * the oldest claim (ties: the owner's `group/kind/namespace/name`); the losers lose that hostname,
 * host bindings left without one are dropped with everything under them, and each losing owner gets
 * a `Published=False` condition with reason `HostnameConflict` and a Warning event.
 */
export function mergeFragments(fragments: Fragment[], statuses: ObjectStatus[]): TranslateResult {
  const winners = pickWinners(fragments);
  const book = new Map(statuses.map((s) => [refKey(s.ref), s]));
  // the statuses given are not changed: an incremental translation hands the same ones again
  const copies = new WeakSet<ObjectStatus>();
  const graph = emptyGraph();
  for (const fragment of fragments) {
    const lost = new Set<string>();
    for (const claim of fragment.claims) {
      const winner = winners.get(claim.hostname);
      if (winner && winner.group !== fragment.group) {
        lost.add(`${claim.bindingId}\n${claim.hostname}`);
        reportConflict(book, copies, claim, winner.claim);
      }
    }
    append(graph, lost.size === 0 ? fragment.graph : dropLost(fragment.graph, lost));
  }
  // the book's keys are the refKeys: sorting by them spares two refKey strings per comparison
  const merged = [...book].sort((a, b) => compareStrings(a[0], b[0])).map(([, s]) => s);
  return { graph: canonicalize(graph), statuses: merged };
}

interface Winner {
  group: string;
  claim: HostClaim;
}

function pickWinners(fragments: Fragment[]): Map<string, Winner> {
  const winners = new Map<string, Winner>();
  for (const fragment of fragments) {
    for (const claim of fragment.claims) {
      const prior = winners.get(claim.hostname);
      if (!prior || isOlder(claim, prior.claim)) winners.set(claim.hostname, { group: fragment.group, claim });
    }
  }
  return winners;
}

function isOlder(a: HostClaim, b: HostClaim): boolean {
  if (a.created !== b.created) {
    if (a.created === '') return false;
    if (b.created === '') return true;
    return a.created < b.created;
  }
  return refKey(a.owner) < refKey(b.owner);
}

function reportConflict(book: Map<string, ObjectStatus>, copies: WeakSet<ObjectStatus>, loser: HostClaim, winner: HostClaim): void {
  const key = refKey(loser.owner);
  let status = book.get(key);
  if (!status || !copies.has(status)) {
    status = status ? copyStatus(status) : { ref: loser.owner, conditions: [], events: [] };
    copies.add(status);
    book.set(key, status);
  }
  const w = winner.owner;
  const message = `hostname ${loser.hostname} is already published by ${w.kind} ${w.namespace ? `${w.namespace}/` : ''}${w.name}, which claimed it first`;
  if (status.events.some((e) => e.message === message)) return;
  status.events.push(warning('HostnameConflict', message));
  // One condition per type (metav1.Condition semantics): the conflict replaces a translator's
  // `Published` condition, or joins an earlier conflict's message.
  const earlier = status.conditions.find((c) => c.type === 'Published' && c.reason === 'HostnameConflict');
  const text = earlier ? `${earlier.message}; ${message}` : message;
  const published = condition('Published', false, 'HostnameConflict', text, status.observedGeneration);
  upsertInPlace(status.conditions, published);
  // Kinds whose status body carries conditions (the tuna.dev CRDs) show the loss there too, and an
  // object that was waiting to become Ready will not: it has nothing left to serve that name with.
  const body = status.status?.conditions as Condition[] | undefined;
  if (Array.isArray(body)) upsertInPlace(body, { ...published });
  for (const list of Array.isArray(body) ? [status.conditions, body] : [status.conditions]) {
    if (list.some((c) => c.type === 'Ready')) upsertInPlace(list, { ...published, type: 'Ready' });
  }
  dropLostHostname(status, loser.hostname);
}

/** copyStatus copies what reportConflict changes in a status: its conditions, events and body. */
function copyStatus(s: ObjectStatus): ObjectStatus {
  return { ...s, conditions: s.conditions.map((c) => ({ ...c })), events: [...s.events], ...(s.status !== undefined ? { status: structuredClone(s.status) } : {}) };
}

/**
 * dropLostHostname removes a lost hostname from what the status body says is served:
 * `status.loadBalancer.ingress` entries and a `url` on that host.
 */
function dropLostHostname(status: ObjectStatus, hostname: string): void {
  const lb = status.status?.loadBalancer as { ingress?: { hostname?: string }[] } | undefined;
  if (lb?.ingress) lb.ingress = lb.ingress.filter((entry) => entry.hostname !== hostname);
  const url = status.status?.url;
  if (typeof url === 'string' && URL.canParse(url) && new URL(url).hostname === hostname) delete status.status?.url;
}

/** dropLost removes lost hostnames and the host bindings (with their subtree) left without any. */
function dropLost(graph: RouteGraph, lost: Set<string>): RouteGraph {
  const dropped = new Set<string>();
  const bindings = [];
  for (const b of graph.bindings) {
    const hostnames = b.hostnames.filter((h) => !lost.has(`${b.id}\n${h}`));
    if (b.kind === 'host' && hostnames.length === 0) dropped.add(b.id);
    else bindings.push({ ...b, hostnames });
  }
  const listeners = graph.listeners.filter((l) => !dropped.has(l.bindingId));
  const live = new Set(listeners.map((l) => l.id));
  return {
    bindings,
    listeners,
    virtualHosts: graph.virtualHosts.filter((v) => live.has(v.listenerId)),
    streamRoutes: graph.streamRoutes.filter((s) => live.has(s.listenerId)),
    reservations: graph.reservations,
  };
}

function append(into: RouteGraph, from: RouteGraph): void {
  into.bindings.push(...from.bindings);
  into.listeners.push(...from.listeners);
  into.virtualHosts.push(...from.virtualHosts);
  into.streamRoutes.push(...from.streamRoutes);
  into.reservations.push(...from.reservations);
}
