import { edgeBindingId } from '../control-api/index.js';
import type { PortPool, Reservation, TunnelProtocol } from '../control-api/index.js';
import type { Binding, Listener, RouteGraph } from '../model/index.js';
import type { TunaReason } from '../translate/index.js';
import { AddressBindings } from './address-bindings.js';
import type { AddressPortLimits } from './address-ports.js';
import { runBounded } from './bounded.js';
import { CrdReservations, emptyCrdReport } from './crd-reservations.js';
import type { CrdReport, ReleasingObject } from './crd-reservations.js';
import { EdgeHoldings } from './edge-holdings.js';
import type { EdgeControl } from './edge-holdings.js';
import { holdTcpPort } from './tcp-port-bindings.js';
import type { TcpPortAddress, TcpPortDeps } from './tcp-port-bindings.js';
import type { TunnelKeys } from './tunnel-keys.js';

export { TunnelKeys } from './tunnel-keys.js';
export type { HeldKey } from './tunnel-keys.js';
export type { EdgeControl } from './edge-holdings.js';
export type { TcpPortAddress } from './tcp-port-bindings.js';
export type { AddressPortLimits } from './address-ports.js';

/** TxtRecord is the DNS record that proves a custom domain is the account's. */
export interface TxtRecord {
  name: string;
  value: string;
}

/**
 * PENDING_REASONS are the reasons a binding is held back, each of TUNA_REASONS (held-back.ts writes
 * a Gateway's as Gateway API reasons): AddressPending's and TcpPortPending's among them.
 */
export const PENDING_REASONS = ['DomainNotVerified', 'UnsupportedBinding', 'EdgeRefused', 'PortNotAssigned', 'AddressNotAssigned', 'AddressNotUsable', 'PortUnavailable', 'ListenerFailed', 'ListenerPending'] as const satisfies readonly TunaReason[];

/** PendingReason is one of PENDING_REASONS. */
export type PendingReason = (typeof PENDING_REASONS)[number];

/** PendingBinding is a binding the reconciler could not make ready, and why. */
export interface PendingBinding {
  bindingId: string;
  reason: PendingReason;
  /** a sentence for the user: what is not served and what to do */
  message: string;
  /** DomainNotVerified: the record to create */
  txtRecord?: TxtRecord;
  /**
   * address bindings: one port of a served address (PortUnavailable, ListenerFailed,
   * ListenerPending): only the listeners on it are held back, the binding is served
   */
  port?: number;
  /** with `port`: `udp` for the port's UDP socket (only UDP listeners are held back), absent for its TCP one */
  transport?: 'udp';
}

/**
 * challengeRecordName is the TXT record the edge checks for a custom domain: the edge's
 * `challengeName` (src/edge/control/dns-verifier.ts, the shape of ACME's `_acme-challenge`).
 */
export function challengeRecordName(hostname: string): string {
  return `_tuna-challenge.${hostname}`;
}

/** ReconcileReport is what one reconcile found and did. */
export interface ReconcileReport {
  /** bindings with a reservation and a live key: their tunnels can open */
  ready: Set<string>;
  /** the address the edge assigned to each ready address binding (graph binding id → IP) */
  addresses: Map<string, string>;
  /** where the edge serves each ready tcp-port binding (graph binding id → host and assigned port) */
  ports?: Map<string, TcpPortAddress>;
  pending: PendingBinding[];
  reserved: number;
  minted: number;
  released: number;
  revoked: number;
  /** reservations and keys no binding wants that were kept: their owner's absence is not known */
  kept: number;
  /** whether this reconcile listed what the edge holds (false: its cache was fresh) */
  listed?: boolean;
  /**
   * bindings not looked at: `shouldYield` ended the reconcile early (a change waits). Nothing was
   * let go, and the statuses of such a reconcile are not to be written.
   */
  deferred?: string[];
  /** the keys could not all be persisted: they are held and served all the same, and written on the next reconcile */
  persistError?: Error;
  /** with `persistLater`, the write of the keys, settling (never rejecting) once persistError is known */
  persisting?: Promise<void>;
  /** what the edge holds for the graph's reservations (Domains, TCPPorts) and what was let go (crd-reservations.ts) */
  crd?: CrdReport;
  /** a port of an address was just asked for and the edge has not reported it listening yet: reconcile again soon */
  confirming?: boolean;
  /** the edge refused a port change of an address, asked again after REFUSED_RETRY_MS: reconcile again then */
  refusedPorts?: boolean;
}

/** ReconcileOptions are the per-call knobs of `reconcile`. */
export interface ReconcileOptions {
  /** list what the edge holds even when the cache is fresh (a new leader: the last one may have changed it) */
  refresh?: boolean;
  /**
   * asked before each binding is started (after the first `concurrency`): true ends the reconcile
   * there, so a change waiting behind a long reconcile (a batch of thousands) is taken up at once.
   * The next reconcile with `shouldYield` takes the bindings it had not seen before first, and
   * defers the rest again, so they are served without waiting for the batch
   */
  shouldYield?: () => boolean;
  /** tuna.dev objects being deleted: their reservations are released or retained before their finalizers go */
  releasing?: readonly ReleasingObject[];
  /**
   * return before the keys are persisted, with the write in flight as the report's `persisting`
   * (its failure in `persistError` once it settles): the operator attaches new bindings while
   * the key Secret is written, since a key is served whether or not it is persisted yet
   */
  persistLater?: boolean;
}

/** OwnerKind names the kind of object a reservation or key was made for (group '' is core). */
export interface OwnerKind {
  group: string;
  kind: string;
}

/**
 * KnowsOwnerGone tells whether the absence of objects of a kind can be trusted: true once the
 * object cache has listed that kind. `undefined` is an owner of unknown kind (made before owner
 * labels existed), for which every kind must be listed.
 */
export type KnowsOwnerGone = (owner: OwnerKind | undefined) => boolean;

/** EdgeReconcilerOptions name this cluster at the edge. */
export interface EdgeReconcilerOptions {
  /** the value of the `tuna.dev/cluster` label on everything this operator reserves and mints */
  clusterId: string;
  /** connections each tunnel key allows (the operator's replicas × connections per binding) */
  maxConnections?: number;
  /**
   * the connections per edge a binding holds by default (OperatorTunnels; default 2): a binding
   * with `connections` of its own (GatewayParameters tunnelConnections) gets a key allowing
   * maxConnections scaled by its connections over this, so the same replicas fit
   */
  connectionsPerBinding?: number;
  /**
   * the edge's address pool (`GET /v1/edge`): a requested address outside it is not asked for
   * (`AddressNotUsable`); null: the edge has none; absent: not known, the edge decides
   */
  addressPool?: string | null;
  /**
   * the ports an address may serve (`GET /v1/edge` `addressPortRange` and `addressPool.ports`):
   * absent: not known, no ports are asked for and none is checked (the edge's fixed list serves)
   */
  addressPorts?: AddressPortLimits;
  /** the edge's TCP port pool (`GET /v1/edge`): null: none; absent: not known, the edge decides */
  portPool?: PortPool | null;
  /** the host the edge's tcp-port listeners bind (`GET /v1/edge` `tcpHost`): the address a Service's status names */
  tcpHost?: string;
  /** control-API calls in flight at once (default 8) */
  concurrency?: number;
  /**
   * how long what the edge holds is trusted without listing it again (default 10 minutes): a key
   * revoked or a domain released by someone else is seen within this long, or at the next failure
   */
  resyncMs?: number;
  /** the clock of the resync period (tests) */
  now?: () => number;
}

const CLUSTER_LABEL = 'tuna.dev/cluster';
/** the kind of the binding's source object, `Kind` (core) or `Kind.group`, as kubectl names resources */
const OWNER_KIND_LABEL = 'tuna.dev/owner-kind';
/** the graph's binding id on an address reservation: the edge assigns the value, so the id finds it again */
export const BINDING_LABEL = 'tuna.dev/binding';

/** ownerLabel is the value of the owner-kind label. */
function ownerLabel(owner: OwnerKind): string {
  return owner.group === '' ? owner.kind : `${owner.kind}.${owner.group}`;
}

/** ownerOf reads the owner-kind label back (undefined when absent). */
export function ownerOf(labels: Readonly<Record<string, string>>): OwnerKind | undefined {
  const value = labels[OWNER_KIND_LABEL];
  if (value === undefined || value === '') return undefined;
  const dot = value.indexOf('.');
  return dot < 0 ? { group: '', kind: value } : { group: value.slice(dot + 1), kind: value.slice(0, dot) };
}

/** Work is one binding a reconcile looks at, with what it wants. */
type Work = { kind: 'host'; binding: Binding; hostname: string } | { kind: 'address'; binding: Binding; listeners: readonly Listener[] } | { kind: 'tcp-port'; binding: Binding };

/**
 * EdgeReconciler makes the edge hold what the route graph needs, with the operator's
 * `reservations`-scoped API key (which cannot start a tunnel itself: DESIGN.md "Keys and trust"):
 * a reservation per host binding and a tunnel key per reservation, minted once and handed to the
 * tunnel manager. What it reserved or minted for bindings the graph no longer has, it releases
 * and revokes. Everything carries the label `tuna.dev/cluster=<clusterId>`, so several clusters
 * can share an account without touching each other's reservations.
 *
 * Releasing and revoking need positive knowledge that nothing wants the address any more:
 * everything carries the kind of the object it was made for (`tuna.dev/owner-kind`), and what no
 * binding of the graph wants is let go only when `knowsOwnerGone` says that kind was listed. A
 * graph built while an optional kind is absent (its CRDs missing, or not listed yet) lacks that
 * kind's bindings; their reservations are kept (`kept`) instead of handed to whoever asks next.
 *
 * It handles host bindings (Ingress, HTTPRoute and GRPCRoute hostnames, Service hostnames) and
 * dedicated addresses (a Gateway's): an address reservation from the edge's pool, labelled with
 * the graph's binding id (`tuna.dev/binding`), and a key of its own that records the edge's binding
 * id (`binding/address/<ip>`), which the tunnel and the data plane use; and TCP ports the same way
 * (tcp-port-bindings.ts: `binding/tcp-port/<port>`, a `tcp` key). Wildcard hosts are reported pending.
 *
 * At scale (docs/benchmarks.md, "scale"): what the edge holds is cached (EdgeHoldings) and listed again only after
 * `resyncMs`, on `refresh`, after a failed call, or while a custom domain waits for verification;
 * bindings are looked up in maps; reservations, keys, revocations and releases run `concurrency`
 * at a time; and a failure to persist the keys is reported, never thrown, so the keys minted are
 * served all the same.
 */
export class EdgeReconciler {
  readonly #client: EdgeControl;
  readonly #keys: TunnelKeys;
  readonly #labels: Record<string, string>;
  readonly #maxConnections: number;
  readonly #connectionsPerBinding: number;
  /** the key cap of each binding with connections of its own (the others get #maxConnections) */
  #keyCaps = new Map<string, number>();
  readonly #addresses: AddressBindings;
  readonly #tcpPorts: Omit<TcpPortDeps, 'holdKey'>;
  readonly #concurrency: number;
  readonly #resyncMs: number;
  readonly #now: () => number;
  #edge: EdgeHoldings | undefined;
  readonly #crd: CrdReservations;
  /** the binding ids of the last reconcile's graph: a new one goes first */
  #seen = new Set<string>();
  /** the last reconcile yielded before it looked at every binding */
  #wasDeferred = false;

  constructor(client: EdgeControl, keys: TunnelKeys, options: EdgeReconcilerOptions) {
    this.#client = client;
    this.#keys = keys;
    this.#labels = { [CLUSTER_LABEL]: options.clusterId };
    this.#maxConnections = options.maxConnections ?? 4;
    this.#connectionsPerBinding = options.connectionsPerBinding ?? 2;
    this.#addresses = new AddressBindings({
      client,
      addressPool: options.addressPool,
      ports: options.addressPorts,
      bindingLabel: BINDING_LABEL,
      ownerLabels: (b) => this.#ownerLabels(b),
      forgetKey: (id) => this.#keys.delete(id),
      now: () => this.#now(),
    });
    this.#tcpPorts = { client, portPool: options.portPool, bindingLabel: BINDING_LABEL, tcpHost: options.tcpHost, asking: new Set(), ownerLabels: (b) => this.#ownerLabels(b), forgetKey: (id) => this.#keys.delete(id) };
    this.#concurrency = options.concurrency ?? 8;
    this.#resyncMs = options.resyncMs ?? 600_000;
    this.#now = options.now ?? Date.now;
    this.#crd = new CrdReservations(client, this.#labels, options.clusterId, this.#concurrency);
  }

  /**
   * reconcile makes the edge hold what `graph` needs and lets go of what it no longer does, where
   * `knowsOwnerGone` (default: always) vouches that the graph is complete for the owner's kind.
   */
  async reconcile(graph: RouteGraph, knowsOwnerGone: KnowsOwnerGone = () => true, options: ReconcileOptions = {}): Promise<ReconcileReport> {
    const report: ReconcileReport = { ready: new Set(), addresses: new Map(), ports: new Map(), pending: [], reserved: 0, minted: 0, released: 0, revoked: 0, kept: 0 };
    const wanted = new Set<string>();
    const listenersOf = new Map<string, Listener[]>();
    for (const l of graph.listeners) {
      const list = listenersOf.get(l.bindingId);
      if (list === undefined) listenersOf.set(l.bindingId, [l]);
      else list.push(l);
    }
    const fresh: Work[] = [];
    const known: Work[] = [];
    for (const b of graph.bindings) {
      const host = b.kind === 'host' && b.hostnames.length === 1 ? b.hostnames[0] : undefined;
      if (b.kind === 'host' && (host === undefined || host.startsWith('*.'))) {
        const message = `${b.hostnames.join(', ') || 'a host binding without hostname'} is not served: the operator does not reserve wildcard or multi-host bindings at the edge yet`;
        report.pending.push({ bindingId: b.id, reason: 'UnsupportedBinding', message });
        continue;
      }
      wanted.add(b.id);
      const w: Work = b.kind === 'host' ? { kind: 'host', binding: b, hostname: host as string } : b.kind === 'address' ? { kind: 'address', binding: b, listeners: listenersOf.get(b.id) ?? [] } : { kind: 'tcp-port', binding: b };
      (this.#seen.has(b.id) ? known : fresh).push(w);
    }
    this.#seen = new Set<string>();
    this.#keyCaps = new Map<string, number>();
    for (const b of graph.bindings) {
      this.#seen.add(b.id);
      const cap = this.#keyCapOf(b);
      if (cap !== undefined) this.#keyCaps.set(b.id, cap);
    }
    try {
      const edge = await this.#holdings(options.refresh === true, report);
      this.#addresses.begin(report.listed === true, wanted);
      const wantedReservations = new Set<string>();
      // the CRDs' reservations first: a Tunnel on a Domain then finds the Domain's reservation
      const crd = (report.crd = emptyCrdReport());
      await this.#crd.hold(edge, graph.reservations, wantedReservations, crd);
      let started = 0;
      const work = (w: Work): Promise<void> => {
        started++;
        if (w.kind === 'tcp-port') return this.#holdTcpPort(edge, w.binding, wantedReservations, report);
        if (w.kind === 'host') return this.#holdHost(edge, w.binding, w.hostname, wantedReservations, report);
        return this.#addresses.hold(edge, w.binding, w.listeners, wantedReservations, report, (id, r, labels) => this.#holdKey(edge, id, r, labels, report));
      };
      // one round always runs, so a reconcile yielding to a stream of changes still makes progress
      const shouldYield = options.shouldYield;
      const stop = shouldYield === undefined ? undefined : () => started >= this.#concurrency && shouldYield();
      // after a reconcile that yielded, the bindings new since then are done first and served at
      // once: the rest waits for the next reconcile, which the caller starts straight away
      const isCatchingUp = stop !== undefined && this.#wasDeferred && fresh.length > 0;
      let left = await runBounded(fresh, this.#concurrency, work, stop);
      left = left.length > 0 || isCatchingUp ? [...left, ...known] : await runBounded(known, this.#concurrency, work, stop);
      this.#wasDeferred = left.length > 0;
      this.#addresses.end(left.length === 0);
      if (this.#addresses.isConfirming()) report.confirming = true;
      if (this.#addresses.hasRefused()) report.refusedPorts = true;
      if (left.length > 0) report.deferred = left.map((w) => w.binding.id);
      if (left.length === 0) {
        await this.#crd.letGo(edge, options.releasing ?? [], wantedReservations, (kind) => knowsOwnerGone({ group: 'tuna.dev', kind }), crd);
        await this.#letGo(edge, wanted, wantedReservations, knowsOwnerGone, report);
      }
    } catch (err) {
      // what the edge holds is no longer known for sure: list it again next time
      this.#edge = undefined;
      await this.#persist(report);
      throw err;
    }
    if (options.persistLater === true) report.persisting = this.#persist(report);
    else await this.#persist(report);
    return report;
  }

  /** holdings is what the edge holds, listed when the cache is missing, stale, or asked to be refreshed. */
  async #holdings(refresh: boolean, report: ReconcileReport): Promise<EdgeHoldings> {
    const now = this.#now();
    const cached = this.#edge;
    // a custom domain waiting for verification, or a port of an address not listening yet: only a new list says when it is
    if (!refresh && cached !== undefined && now - cached.listedAt < this.#resyncMs && !cached.hasUnverifiedDomain() && !this.#addresses.isWatching()) return cached;
    this.#edge = undefined;
    const listed = await EdgeHoldings.list(this.#client, this.#labels, now, BINDING_LABEL);
    this.#edge = listed;
    report.listed = true;
    return listed;
  }

  /** persist saves the keys; a failure is reported (and the keys stay held, to be written next time), never thrown. */
  async #persist(report: ReconcileReport): Promise<void> {
    try {
      await this.#keys.persist();
    } catch (err) {
      report.persistError = err instanceof Error ? err : new Error(String(err));
    }
  }

  /** holdHost makes a host binding hold its domain reservation and, once the domain is verified, a key. */
  async #holdHost(edge: EdgeHoldings, b: Binding, hostname: string, wantedReservations: Set<string>, report: ReconcileReport): Promise<void> {
    const labels = this.#ownerLabels(b);
    let reservation = edge.domain(hostname);
    if (reservation === undefined) {
      try {
        reservation = (await this.#client.reserve({ kind: 'domain', hostname, labels })).reservation;
      } catch (err) {
        report.pending.push({ bindingId: b.id, reason: 'EdgeRefused', message: `${hostname} is not served: the edge refused to reserve it: ${(err as Error).message}` });
        return;
      }
      edge.addReservation(reservation);
      report.reserved++;
    }
    wantedReservations.add(reservation.id);
    if (reservation.domainType === 'custom' && !reservation.verified) {
      const txtRecord = { name: challengeRecordName(hostname), value: reservation.verificationToken ?? '' };
      report.pending.push({
        bindingId: b.id,
        reason: 'DomainNotVerified',
        message: `${hostname} is not served yet: the edge serves a custom domain once it is verified. Create the DNS TXT record ${txtRecord.name} with the value ${txtRecord.value}, then run tuna reserve verify ${hostname}`,
        txtRecord,
      });
      return;
    }
    await this.#holdKey(edge, b.id, reservation, labels, report);
  }

  /** holdTcpPort makes a tcp-port binding hold a port of the edge and a `tcp` key (tcp-port-bindings.ts). */
  #holdTcpPort(edge: EdgeHoldings, b: Binding, wantedReservations: Set<string>, report: ReconcileReport): Promise<void> {
    const holdKey = (id: string, r: Reservation, labels: Record<string, string>, protocol: TunnelProtocol) => this.#holdKey(edge, id, r, labels, report, protocol);
    return holdTcpPort({ ...this.#tcpPorts, holdKey }, edge, b, wantedReservations, report);
  }

  /** ownerLabels are the labels of what a binding gets at the edge: this cluster's and its owner's kind. */
  #ownerLabels(b: Binding): Record<string, string> {
    return { ...this.#labels, [OWNER_KIND_LABEL]: ownerLabel(b.source) };
  }

  /**
   * keyCapOf is the key cap of a binding unlike the others (undefined: maxConnections): a
   * dedicated data plane's pods hold `connections` each, its replicas and one surge pod of a
   * rollout; a binding with connections of its own gets keyCapFor them.
   */
  #keyCapOf(b: Binding): number | undefined {
    if (b.dedicated !== undefined) return ((b.dedicated.replicas ?? 1) + 1) * (b.connections ?? this.#connectionsPerBinding);
    return b.connections === undefined ? undefined : this.#keyCapFor(b.connections);
  }

  /** keyCapFor is the key cap of a binding holding `connections` per edge: maxConnections in proportion, rounded up. */
  #keyCapFor(connections: number): number {
    return Math.max(1, Math.ceil((this.#maxConnections * connections) / this.#connectionsPerBinding));
  }

  /**
   * holdKey makes sure the binding holds a live key of its reservation (minting one when not) that
   * records the edge's binding id where it differs from the graph's, and marks the binding ready.
   * A live key whose cap is below what the binding's connections need is replaced by a new one (the
   * old one is revoked by letGo once no binding holds it); a larger cap is kept.
   */
  async #holdKey(edge: EdgeHoldings, bindingId: string, reservation: Reservation, labels: Record<string, string>, report: ReconcileReport, protocol: TunnelProtocol = 'http'): Promise<void> {
    const edgeId = edgeBindingId(reservation);
    const recorded = edgeId === bindingId ? {} : { edgeBindingId: edgeId };
    const held = this.#keys.get(bindingId);
    const cap = this.#keyCaps.get(bindingId) ?? this.#maxConnections;
    const live = held === undefined ? undefined : edge.liveKeys.get(held.keyId);
    const isLive = live?.reservationId === reservation.id && live.maxConnections >= cap;
    if (!isLive || held === undefined) {
      const minted = await this.#client.mintTunnelKey({ reservationId: reservation.id, protocol, maxConnections: cap, labels });
      edge.addKey(minted.tunnelKey);
      this.#keys.set(bindingId, { keyId: minted.tunnelKey.id, token: minted.token, ...recorded });
      report.minted++;
    } else if (held.edgeBindingId !== recorded.edgeBindingId) {
      this.#keys.set(bindingId, { keyId: held.keyId, token: held.token, ...recorded });
    }
    report.ready.add(bindingId);
  }

  /**
   * letGo revokes and releases what this cluster holds at the edge and no binding wants, keys
   * first, where the owner's absence is known. A live key no one holds (the Secret lost it, or a
   * restart without one) is revoked when its reservation is still wanted: a newer key replaced it.
   */
  async #letGo(edge: EdgeHoldings, wanted: ReadonlySet<string>, wantedReservations: ReadonlySet<string>, knowsOwnerGone: KnowsOwnerGone, report: ReconcileReport): Promise<void> {
    const isGone = (labels: Readonly<Record<string, string>>): boolean => knowsOwnerGone(ownerOf(labels));
    for (const bindingId of this.#keys.bindings()) {
      if (wanted.has(bindingId)) continue;
      const held = this.#keys.get(bindingId);
      const live = held === undefined ? undefined : edge.liveKeys.get(held.keyId);
      if (live === undefined || isGone(live.labels)) this.#keys.delete(bindingId);
    }
    const revoke: string[] = [];
    for (const k of edge.liveKeys.values()) {
      if (this.#keys.isHeld(k.id)) continue;
      if (!wantedReservations.has(k.reservationId) && !isGone(k.labels)) report.kept++;
      else revoke.push(k.id);
    }
    await runBounded(revoke, this.#concurrency, async (id) => {
      await this.#client.revokeTunnelKey(id);
      edge.revoked(id);
      report.revoked++;
    });
    const release: string[] = [];
    for (const r of edge.reservations.values()) {
      // a tcp-port reservation made for no binding is a TCPPort's, not let go here
      if ((r.kind === 'tcp-port' && r.labels[BINDING_LABEL] === undefined) || wantedReservations.has(r.id)) continue;
      if (!isGone(r.labels)) report.kept++;
      else release.push(r.id);
    }
    await runBounded(release, this.#concurrency, async (id) => {
      await this.#client.release(id);
      edge.released(id);
      report.released++;
    });
  }
}
