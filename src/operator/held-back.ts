/**
 * Held-back bindings and the statuses that must not claim them (docs/operator.md, "Every status is earned"). The translators vouch for
 * what they can see in the cluster; only the edge reconciler knows what the edge serves. A binding
 * it holds back (a custom domain not verified yet, a kind of binding it does not reserve yet, an
 * address the edge refused) is served by nothing, so before statuses are written
 * `correctHeldBack` takes it back out of them and says why:
 *
 * - Gateway (its dedicated address): `Programmed=False` reason `AddressNotAssigned` (or
 *   `AddressNotUsable` for an address `spec.addresses` asks for that the edge cannot give), and its
 *   listeners `Programmed=False` reason `Pending` (Gateway API v1 GatewayConditionProgrammed), and
 *   each ListenerSet served on that address `Programmed=False ParentNotProgrammed`, its listeners `Pending`;
 * - Service: no `status.loadBalancer` port for it, and a `Published` condition in
 *   `status.conditions` (written on every tuna Service, so it never goes stale);
 * - Ingress: no `status.loadBalancer` entry (its status has no conditions: the Warning event and
 *   tuna's own condition say why);
 * - Tunnel: no `url`, `Ready=False`; a Domain with the hostname: `Ready=False`, and for an
 *   unverified custom domain `Reserved=Unknown` and `status.verification`, the TXT record to create.
 *
 * - one port of a Gateway's address (`port` set: the edge cannot open it, refused it, or reports it
 *   failed to listen): the listeners on that port `Accepted=False` reason `PortUnavailable` and
 *   `Programmed=False` (Gateway API v1 ListenerConditionReason PortUnavailable: "the Listener
 *   requested a port that is not available"), its other listeners served; a port the edge is still
 *   opening leaves its listeners `Programmed=False` reason `Pending`, without an event, so that
 *   `Programmed=True` means the edge listens.
 *
 * Every object concerned gets one Warning event per held-back binding (the recorder dedupes).
 * A Gateway whose address the edge assigned gets it in `status.addresses` (`IPAddress`), and a
 * served TCP port is listed where the edge serves it: the port it assigned, under its tcp-port host
 * (`ip`) when the edge names one (a Service), or as `port` and `address` (a Tunnel).
 */
import type { Binding, Condition, ObjectStatus, RouteGraph } from '../model/index.js';
import { refKey } from '../model/index.js';
import { addEvent, condition, isGroupKind, upsert, warning } from '../translate/index.js';
import type { ConditionReason, GatewayReason } from '../translate/index.js';
import type { PendingBinding, TcpPortAddress } from './edge-reconciler.js';


type Json = Record<string, unknown>;

/** LbEntry is a `status.loadBalancer.ingress` entry (Service entries carry ports, Ingress ones do not). */
interface LbEntry {
  hostname?: string;
  ip?: string;
  ports?: { port: number; protocol?: string }[];
}

/**
 * correctHeldBack returns the statuses with what `pending` holds back taken out, each with the
 * condition and the Warning event that say why. `statuses` is not modified. Every tuna Service
 * gets its `Published` condition in `status.conditions`, held back or not. `addresses` are the IPs
 * the edge assigned to address bindings (graph binding id → IP): a Gateway served on one lists it.
 */
export function correctHeldBack(
  statuses: readonly ObjectStatus[],
  graph: RouteGraph,
  pending: readonly PendingBinding[],
  addresses: ReadonlyMap<string, string> = new Map(),
  ports: ReadonlyMap<string, TcpPortAddress> = new Map(),
): ObjectStatus[] {
  // Copy on write: a status is cloned the first time it is changed, so a sync at 10,000 hosts no
  // longer clones every status to correct the few that hold something back (the clones
  // were about a quarter of a sync). The statuses returned unchanged are the ones given.
  const out = [...statuses];
  const at = new Map(out.map((s, i) => [refKey(s.ref), i]));
  const cloned = new Set<number>();
  const own = (i: number): ObjectStatus => {
    if (!cloned.has(i)) {
      out[i] = structuredClone(out[i]!);
      cloned.add(i);
    }
    return out[i]!;
  };
  const ownerOf = (b: Binding): ObjectStatus | undefined => {
    const i = at.get(refKey(b.source));
    return i === undefined ? undefined : own(i);
  };
  const bindings = new Map(graph.bindings.map((b) => [b.id, b]));
  // a pending port holds back only the listeners on it: its binding is served
  const heldIds = new Set(pending.filter((p) => p.port === undefined).map((p) => p.bindingId));
  const served = graph.bindings.filter((b) => !heldIds.has(b.id));
  const notes = new Map<ObjectStatus, PendingBinding[]>();
  const note = (s: ObjectStatus, p: PendingBinding): void => {
    const list = notes.get(s) ?? [];
    if (!list.includes(p)) notes.set(s, [...list, p]);
  };

  for (const p of pending) {
    const b = bindings.get(p.bindingId);
    if (b === undefined) continue;
    const owner = ownerOf(b);
    if (p.port !== undefined) {
      if (b.kind === 'address' && owner && isGroupKind(b.source, 'Gateway')) {
        holdBackListeners(owner, listenersOnPort(graph, b, p, refKey(b.source)), p, 'gateway');
        // a ListenerSet's listeners on that port are held back in its own status, as the Gateway's are in the Gateway's
        for (const key of listenerSetsOn(graph, b.id)) {
          const names = listenersOnPort(graph, b, p, key);
          const i = at.get(key);
          if (i === undefined || names.size === 0) continue;
          holdBackListeners(own(i), names, p, 'listener-set');
          if (p.reason !== 'ListenerPending') note(out[i]!, p);
        }
      }
      if (owner && p.reason !== 'ListenerPending') note(owner, p);
      continue;
    }
    if (owner) note(owner, p);
    if (b.kind === 'address' && owner && isGroupKind(b.source, 'Gateway')) {
      holdBackGateway(owner, p);
      for (const key of listenerSetsOn(graph, b.id)) {
        const i = at.get(key);
        if (i !== undefined) holdBackListenerSet(own(i), p);
      }
    }
    if (b.kind === 'tcp-port' && owner && b.port !== undefined) dropPort(owner, b.port, servedPairs(served, graph, refKey(b.source)), statusProtocolOf(b));
    if (b.kind === 'host') {
      const ports = new Set(graph.listeners.filter((l) => l.bindingId === b.id).map((l) => l.port));
      const names = new Set(b.hostnames);
      for (let i = 0; i < out.length; i++) {
        if (mentionsHostname(out[i]!, names) && dropHostnames(own(i), names, ports)) note(out[i]!, p);
        if (!isDomainFor(out[i]!, b.hostnames)) continue;
        holdBackDomain(own(i), p);
        note(out[i]!, p);
      }
    }
  }
  for (const b of served) {
    const address = addresses.get(b.id);
    if (b.kind !== 'address' || address === undefined) continue;
    const i = at.get(refKey(b.source));
    if (i !== undefined && out[i]!.status !== undefined) own(i).status!.addresses = [{ type: 'IPAddress', value: address }];
  }
  serveTcpPorts(served, graph, (key) => {
    const i = at.get(key);
    return i === undefined ? undefined : { current: out[i]!, own: () => own(i) };
  }, ports);
  for (const [s, held] of notes) markHeldBack(s, held);
  for (let i = 0; i < out.length; i++) if (isTunaService(out[i]!)) writeServiceCondition(own(i));
  return out;
}

/** mentionsHostname tells whether a status lists one of the hostnames (a loadBalancer entry or its url). */
function mentionsHostname(s: ObjectStatus, names: ReadonlySet<string>): boolean {
  const lb = s.status?.loadBalancer as { ingress?: LbEntry[] } | undefined;
  if (lb?.ingress?.some((e) => e.hostname !== undefined && names.has(e.hostname)) === true) return true;
  const url = s.status?.url;
  return typeof url === 'string' && URL.canParse(url) && names.has(new URL(url).hostname);
}

/** StatusSlot is one status as it is now, and the way to get it cloned for a change (copy on write). */
interface StatusSlot {
  current: ObjectStatus;
  own: () => ObjectStatus;
}

/**
 * serveTcpPorts lists each served TCP port where the edge serves it. A Service's entries first lose
 * every asked port (all of them before any is added: one binding's assigned port may be another's
 * asked one), then gain the assigned ports under the edge's host, or under the hostname that listed
 * the asked port when the edge names no host. A Tunnel gets `port` and `address`.
 */
function serveTcpPorts(served: readonly Binding[], graph: RouteGraph, slotOf: (key: string) => StatusSlot | undefined, ports: ReadonlyMap<string, TcpPortAddress>): void {
  const adds: { s: ObjectStatus; entry: LbEntry; port: number; protocol: 'TCP' | 'UDP' }[] = [];
  for (const b of served) {
    const at = ports.get(b.id);
    if (b.kind !== 'tcp-port' || at === undefined) continue;
    const slot = slotOf(refKey(b.source));
    if (slot?.current.status === undefined) continue;
    const s = slot.own();
    if (s.status === undefined) continue;
    if (isGroupKind(s.ref, 'Tunnel')) {
      s.status.port = at.port;
      if (at.ip !== undefined || at.hostname !== undefined) s.status.address = at.ip ?? at.hostname;
      continue;
    }
    const asked = b.port ?? 0;
    const protocol = statusProtocolOf(b);
    const keep = servedPairs(served, graph, refKey(b.source));
    const lb = s.status.loadBalancer as { ingress?: LbEntry[] } | undefined;
    // the entry that lists the asked port (an HTTP port of that number on its hostname stays listed)
    const from = lb?.ingress?.find((e) => e.ports?.some((q) => q.port === asked && (q.protocol ?? 'TCP') === protocol) === true);
    if (from === undefined) continue;
    dropPort(s, asked, keep, protocol);
    const entry: LbEntry = at.ip !== undefined ? { ip: at.ip } : { hostname: at.hostname ?? from.hostname ?? '' };
    adds.push({ s, entry, port: at.port, protocol });
  }
  for (const { s, entry, port, protocol } of adds) addPort(s, entry, port, protocol);
}

/** statusProtocolOf is the `status.loadBalancer` protocol of a tcp-port binding's port. */
function statusProtocolOf(b: Binding): 'TCP' | 'UDP' {
  return b.transport === 'udp' ? 'UDP' : 'TCP';
}

/** addPort lists a TCP or UDP port in the Service's entry of that ip or hostname (made when absent); entries and ports stay sorted. */
function addPort(s: ObjectStatus, where: LbEntry, port: number, protocol: 'TCP' | 'UDP'): void {
  if (s.status === undefined) return;
  const lb = (s.status.loadBalancer ?? {}) as { ingress?: LbEntry[] };
  const ingress = [...(lb.ingress ?? [])];
  const at = ingress.findIndex((e) => e.ip === where.ip && e.hostname === where.hostname);
  const entry = at >= 0 ? ingress[at]! : { ...where, ports: [] };
  const isThat = (q: { port: number; protocol?: string }): boolean => q.port === port && (q.protocol ?? 'TCP') === protocol;
  const byPort = (a: { port: number; protocol?: string }, b: { port: number; protocol?: string }): number => a.port - b.port || ((a.protocol ?? '') < (b.protocol ?? '') ? -1 : 1);
  const next = { ...entry, ports: [...(entry.ports ?? []).filter((q) => !isThat(q)), { port, protocol }].sort(byPort) };
  if (at >= 0) ingress[at] = next;
  else ingress.push(next);
  const name = (e: LbEntry): string => e.hostname ?? e.ip ?? '';
  s.status.loadBalancer = { ...lb, ingress: ingress.sort((a, b) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0)) };
}

/** holdBackGateway: Programmed=False AddressNotAssigned, and every programmed listener Pending. */
function holdBackGateway(s: ObjectStatus, p: PendingBinding): void {
  const body = s.status;
  if (body === undefined) return;
  const gen = s.observedGeneration;
  body.conditions = upsert(listOf<Condition>(body.conditions), condition('Programmed', 'False', gatewayReason(p), p.message, gen));
  body.listeners = pendingListeners(body.listeners, gen);
  // An empty list, not an absent field: the merge patch then clears an address written before.
  body.addresses = [];
}

/** pendingListeners turns each programmed listener status Programmed=False Pending: the address they are served on is not there yet. */
function pendingListeners(listeners: unknown, gen: number | undefined): Json[] {
  return listOf<Json>(listeners).map((l) => {
    const conditions = listOf<Condition>(l.conditions);
    if (!conditions.some((c) => c.type === 'Programmed' && c.status === 'True')) return l;
    return { ...l, conditions: upsert(conditions, condition('Programmed', 'False', 'Pending', 'the Gateway has no address at the edge yet', gen)) };
  });
}

/** listenerSetsOn lists the refKeys of the ListenerSets (GEP-1713) whose listeners are served on an address binding. */
function listenerSetsOn(graph: RouteGraph, bindingId: string): Set<string> {
  const keys = new Set<string>();
  for (const l of graph.listeners) {
    if (l.bindingId !== bindingId || !isGroupKind(l.source, 'ListenerSet')) continue;
    keys.add(refKey(l.source));
  }
  return keys;
}

/**
 * holdBackListenerSet: a ListenerSet's listeners are served on its Gateway's address, so while that
 * is held back the set is `Programmed=False` reason `ParentNotProgrammed` (ListenerSetConditionProgrammed)
 * and its listeners `Programmed=False Pending`, as the Gateway's are.
 */
function holdBackListenerSet(s: ObjectStatus, p: PendingBinding): void {
  const body = s.status;
  if (body === undefined) return;
  const gen = s.observedGeneration;
  const message = `its Gateway is not programmed: ${p.message}`;
  body.conditions = upsert(listOf<Condition>(body.conditions), condition('Programmed', 'False', 'ParentNotProgrammed', message, gen));
  body.listeners = pendingListeners(body.listeners, gen);
  if (!s.events.some((e) => e.reason === 'ParentNotProgrammed')) s.events.push(warning('ParentNotProgrammed', message));
}

/**
 * listenersOnPort names the listeners of one object (the Gateway, or one of its ListenerSets: `ownerKey`)
 * that are on the port a pending binding is about. Names are unique only within their object, so
 * a ListenerSet listener never holds back a Gateway listener of the same name.
 */
function listenersOnPort(graph: RouteGraph, b: Binding, p: PendingBinding, ownerKey: string): Set<string> {
  // 53/udp and 53/tcp are two sockets: a problem of one holds back only the listeners on it
  const isOnIt = (l: RouteGraph['listeners'][number]): boolean => l.port === p.port && (l.protocol === 'udp') === (p.transport === 'udp');
  return new Set(graph.listeners.filter((l) => l.bindingId === b.id && isOnIt(l) && refKey(l.source) === ownerKey).map((l) => l.name));
}

/**
 * holdBackListeners takes the listeners on one port of a Gateway's address out of what is served,
 * in the status of the object that declares them (the Gateway, or a ListenerSet):
 * `Accepted=False PortUnavailable` and `Programmed=False` for a port the edge does not serve, and
 * `Programmed=False Pending` while it opens it. The object's own conditions then say so: some
 * listener still served keeps it `Programmed` (Accepted reason `ListenersNotValid` when one is not
 * accepted, as the translator writes it), none left makes it `Programmed=False` (a ListenerSet's
 * reason `PortUnavailable`, which ListenerSetConditionProgrammed lists among those its listeners raise).
 */
function holdBackListeners(s: ObjectStatus, names: ReadonlySet<string>, p: PendingBinding, kind: 'gateway' | 'listener-set'): void {
  const body = s.status;
  if (body === undefined || names.size === 0) return;
  const gen = s.observedGeneration;
  const isPending = p.reason === 'ListenerPending';
  body.listeners = listOf<Json>(body.listeners).map((l) => {
    if (typeof l.name !== 'string' || !names.has(l.name)) return l;
    let conditions = listOf<Condition>(l.conditions);
    if (!isPending) conditions = upsert(conditions, condition('Accepted', 'False', reason('PortUnavailable'), p.message, gen));
    conditions = upsert(conditions, condition('Programmed', 'False', reason(isPending ? 'Pending' : 'Invalid'), p.message, gen));
    return { ...l, conditions };
  });
  const listeners = listOf<Json>(body.listeners);
  const isProgrammed = (l: Json): boolean => listOf<Condition>(l.conditions).some((c) => c.type === 'Programmed' && c.status === 'True');
  const notAccepted = listeners.filter((l) => listOf<Condition>(l.conditions).some((c) => c.type === 'Accepted' && c.status === 'False')).map((l) => String(l.name));
  const conditions = listOf<Condition>(body.conditions);
  const accepted = conditions.find((c) => c.type === 'Accepted');
  if (accepted?.status === 'True' && notAccepted.length > 0) {
    const serving = listeners.filter(isProgrammed).map((l) => String(l.name));
    const message = `listener(s) ${notAccepted.join(', ')} are not valid; serving ${serving.join(', ') || 'none'}`;
    body.conditions = upsert(conditions, condition('Accepted', 'True', reason('ListenersNotValid'), message, gen));
  }
  const programmed = listOf<Condition>(body.conditions).find((c) => c.type === 'Programmed');
  if (programmed?.status !== 'True' || listeners.some(isProgrammed)) return;
  const why: GatewayReason = isPending ? 'Pending' : kind === 'listener-set' ? 'PortUnavailable' : 'Invalid';
  body.conditions = upsert(listOf<Condition>(body.conditions), condition('Programmed', 'False', reason(why), `no listener is served at the edge: ${p.message}`, gen));
}

/** reason types a Gateway API reason by the translators' table. */
function reason(r: GatewayReason): GatewayReason {
  return r;
}

/** gatewayReason is the Gateway API reason of a held-back address (AddressNotUsable for one spec.addresses asked for, else AddressNotAssigned) or port (PortUnavailable). */
function gatewayReason(p: PendingBinding): GatewayReason {
  if (p.port !== undefined) return 'PortUnavailable';
  return p.reason === 'AddressNotUsable' ? 'AddressNotUsable' : 'AddressNotAssigned';
}

/**
 * servedPairs lists the `hostname:port` pairs that served host bindings of one object still
 * publish, so that dropping a held-back TCP port never takes a served HTTP port of the same number.
 */
function servedPairs(served: readonly Binding[], graph: RouteGraph, ownerKey: string): Set<string> {
  const pairs = new Set<string>();
  for (const b of served) {
    if (b.kind !== 'host' || refKey(b.source) !== ownerKey) continue;
    for (const l of graph.listeners) if (l.bindingId === b.id) for (const h of b.hostnames) pairs.add(`${h}:${l.port}`);
  }
  return pairs;
}

/** dropPort removes one public port of a protocol from a Service's `status.loadBalancer` entries (`keep`: served HTTP ports, TCP only). */
function dropPort(s: ObjectStatus, port: number, keep: Set<string>, protocol: 'TCP' | 'UDP' = 'TCP'): void {
  const isThat = (q: { port: number; protocol?: string }): boolean => q.port === port && (q.protocol ?? 'TCP') === protocol;
  editEntries(s, (e) => (e.ports === undefined || (protocol === 'TCP' && keep.has(`${e.hostname ?? ''}:${port}`)) ? e : { ...e, ports: e.ports.filter((q) => !isThat(q)) }));
}

/**
 * dropHostnames removes held-back hostnames from what a status says is served: Ingress entries
 * on them, the binding's ports from Service entries on them, a `url` on them. True if it changed something.
 */
function dropHostnames(s: ObjectStatus, names: ReadonlySet<string>, ports: ReadonlySet<number>): boolean {
  let changed = editEntries(s, (e) => {
    if (e.hostname === undefined || !names.has(e.hostname)) return e;
    return e.ports === undefined ? undefined : { ...e, ports: e.ports.filter((q) => !ports.has(q.port)) };
  });
  const url = s.status?.url;
  if (typeof url === 'string' && URL.canParse(url) && names.has(new URL(url).hostname)) {
    delete s.status?.url;
    changed = true;
  }
  return changed;
}

/** editEntries rewrites `status.loadBalancer.ingress` (undefined drops an entry, as does one left without ports). */
function editEntries(s: ObjectStatus, edit: (e: LbEntry) => LbEntry | undefined): boolean {
  const lb = s.status?.loadBalancer as { ingress?: LbEntry[] } | undefined;
  if (lb?.ingress === undefined || s.status === undefined) return false;
  const before = JSON.stringify(lb.ingress);
  const ingress = lb.ingress.map(edit).filter((e): e is LbEntry => e !== undefined && (e.ports === undefined || e.ports.length > 0));
  s.status.loadBalancer = ingress.length > 0 ? { ...lb, ingress } : {};
  return JSON.stringify(ingress) !== before;
}

/** isDomainFor tells a tuna.dev Domain whose hostname is one of `hostnames`. */
function isDomainFor(s: ObjectStatus, hostnames: readonly string[]): boolean {
  return isGroupKind(s.ref, 'Domain') && typeof s.status?.hostname === 'string' && hostnames.includes(s.status.hostname);
}

/** holdBackDomain: Reserved says why (Unknown while unverified), and `verification` is the record to create. */
function holdBackDomain(s: ObjectStatus, p: PendingBinding): void {
  if (s.status === undefined) return;
  const isUnverified = p.reason === 'DomainNotVerified';
  s.status.conditions = upsert(listOf<Condition>(s.status.conditions), condition('Reserved', isUnverified ? 'Unknown' : 'False', p.reason, p.message, s.observedGeneration));
  if (isUnverified && p.txtRecord) s.status.verification = { type: 'TXT', name: p.txtRecord.name, value: p.txtRecord.value };
}

/**
 * markHeldBack adds what every object concerned gets: tuna's `Published` condition (True
 * `PartiallyPublished` while its status still advertises something, else False with the first
 * reason; the message joins every held-back binding's), `Ready=False` where its status body has a
 * Ready condition (tuna.dev kinds), and one Warning event per held-back binding.
 */
function markHeldBack(s: ObjectStatus, held: readonly PendingBinding[]): void {
  const first = held[0];
  if (first === undefined) return;
  const gen = s.observedGeneration;
  const reasonOf = (p: PendingBinding): ConditionReason => (isGroupKind(s.ref, 'Gateway') ? gatewayReason(p) : p.reason);
  const message = [...new Set(held.map((p) => p.message))].join('; ');
  // a Gateway with only some ports held back still serves the others on its address
  const partly = advertisesSomething(s) || held.every((p) => p.port !== undefined);
  s.conditions = upsert(s.conditions, condition('Published', partly ? 'True' : 'False', partly ? 'PartiallyPublished' : reasonOf(first), message, gen));
  const body = s.status?.conditions;
  if (s.status && Array.isArray(body) && (body as Condition[]).some((c) => c.type === 'Ready'))
    s.status.conditions = upsert(body as Condition[], condition('Ready', 'False', reasonOf(first), message, gen));
  for (const p of held) addEvent(s.events, warning(reasonOf(p), p.message));
}

/** advertisesSomething tells whether a status still lists an address (a loadBalancer entry or a url). */
function advertisesSomething(s: ObjectStatus): boolean {
  const lb = s.status?.loadBalancer as { ingress?: unknown[] } | undefined;
  return (lb?.ingress?.length ?? 0) > 0 || typeof s.status?.url === 'string';
}

/** isTunaService tells a Service tuna is the load balancer of (its status carries `loadBalancer`). */
function isTunaService(s: ObjectStatus): boolean {
  return isGroupKind(s.ref, 'Service') && s.status?.loadBalancer !== undefined;
}

/** writeServiceCondition puts tuna's `Published` condition into the Service's own `status.conditions`. */
function writeServiceCondition(s: ObjectStatus): void {
  const published = s.conditions.find((c) => c.type === 'Published');
  if (published === undefined || s.status === undefined) return;
  s.status.conditions = upsert(listOf<Condition>(s.status.conditions), { ...published });
}

function listOf<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}
