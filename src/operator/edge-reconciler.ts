import { edgeBindingId } from '../control-api/index.js';
import type { ControlClient, Reservation, TunnelKey } from '../control-api/index.js';
import type { Binding, RouteGraph } from '../model/index.js';
import type { TunnelKeySource } from '../tunnel/index.js';
import { inAddressPool } from './address-pool.js';

/**
 * HeldKey is a tunnel key the operator minted: its record id at the edge and its secret token, and
 * for a binding whose value the edge assigns (a dedicated address), the edge's binding id that the
 * tunnel names (`binding/address/<ip>`; absent: the graph's id is the edge's, as for hosts).
 */
export interface HeldKey {
  keyId: string;
  token: string;
  edgeBindingId?: string;
}

/**
 * TunnelKeys holds the tunnel keys the reconciler minted, by binding id, and hands them to the
 * tunnel manager (a TunnelKeySource whose reference is the key id, so a new key reconnects).
 * This one keeps them in memory: after a restart the reconciler mints new keys and revokes the
 * old ones, which it finds by the cluster label. SecretTunnelKeys keeps them in a Secret.
 */
export class TunnelKeys implements TunnelKeySource {
  readonly #byBinding = new Map<string, HeldKey>();
  /** true when keys were set or deleted since the last persist (or load) */
  protected isDirty = false;

  get(bindingId: string): HeldKey | undefined {
    return this.#byBinding.get(bindingId);
  }

  /**
   * set records the key of a binding. An edge binding id (a Gateway address) belongs to one binding
   * at a time: an address released by a Gateway that went and reserved again by a new one must not
   * lead the new one's tunnels to the old, revoked key, so any other entry naming it is dropped.
   */
  set(bindingId: string, key: HeldKey): void {
    if (key.edgeBindingId !== undefined)
      for (const [other, held] of this.#byBinding) if (other !== bindingId && held.edgeBindingId === key.edgeBindingId) this.#byBinding.delete(other);
    this.#byBinding.set(bindingId, key);
    this.isDirty = true;
  }

  delete(bindingId: string): void {
    this.isDirty ||= this.#byBinding.delete(bindingId);
  }

  /**
   * forTunnel is the key a tunnel of `bindingId` uses: the graph's binding id, or the edge's binding
   * id recorded with the key (the tunnel and the data plane name a dedicated address by the edge's id).
   */
  forTunnel(bindingId: string): HeldKey | undefined {
    const direct = this.#byBinding.get(bindingId);
    if (direct !== undefined) return direct;
    for (const held of this.#byBinding.values()) if (held.edgeBindingId === bindingId) return held;
    return undefined;
  }

  /** edgeIdOf is the edge's binding id of a graph binding (the graph's own id when the key records none). */
  edgeIdOf(bindingId: string): string {
    return this.#byBinding.get(bindingId)?.edgeBindingId ?? bindingId;
  }

  /** bindings are the binding ids that hold a key. */
  bindings(): string[] {
    return [...this.#byBinding.keys()];
  }

  /** heldKeyIds are the ids of every key held. */
  heldKeyIds(): Set<string> {
    return new Set([...this.#byBinding.values()].map((k) => k.keyId));
  }

  /** persist saves the keys, when they changed, where a restarted operator finds them again (memory: nowhere). */
  persist(): Promise<void> {
    this.isDirty = false;
    return Promise.resolve();
  }

  resolveKey(bindingId: string, keyRef: string): Promise<string> {
    const held = this.forTunnel(bindingId);
    if (held === undefined || held.keyId !== keyRef) return Promise.reject(new Error(`no tunnel key for ${bindingId}`));
    return Promise.resolve(held.token);
  }
}

/** TxtRecord is the DNS record that proves a custom domain is the account's. */
export interface TxtRecord {
  name: string;
  value: string;
}

/** PendingBinding is a binding the reconciler could not make ready, and why. */
export interface PendingBinding {
  bindingId: string;
  reason: 'DomainNotVerified' | 'UnsupportedBinding' | 'EdgeRefused' | 'AddressNotAssigned' | 'AddressNotUsable';
  /** a sentence for the user: what is not served and what to do */
  message: string;
  /** DomainNotVerified: the record to create */
  txtRecord?: TxtRecord;
}

/**
 * challengeRecordName is the TXT record the edge checks for a custom domain: the edge's
 * `challengeName` (src/edge/control/dns-verifier.ts, the shape of ACME's `_acme-challenge`).
 */
export function challengeRecordName(hostname: string): string {
  return `_tuna-challenge.${hostname}`;
}

/** unsupportedMessage says what is not served, and that the reconciler does not reserve such bindings yet. */
function unsupportedMessage(b: RouteGraph['bindings'][number]): string {
  if (b.kind === 'tcp-port') return `TCP port ${b.port ?? 0} is not served: the operator does not reserve TCP ports at the edge yet`;
  return `${b.hostnames.join(', ') || 'a host binding without hostname'} is not served: the operator does not reserve wildcard or multi-host bindings at the edge yet`;
}

/** ReconcileReport is what one reconcile found and did. */
export interface ReconcileReport {
  /** bindings with a reservation and a live key: their tunnels can open */
  ready: Set<string>;
  /** the address the edge assigned to each ready address binding (graph binding id → IP) */
  addresses: Map<string, string>;
  pending: PendingBinding[];
  reserved: number;
  minted: number;
  released: number;
  revoked: number;
  /** reservations and keys no binding wants that were kept: their owner's absence is not known */
  kept: number;
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
   * the edge's address pool (`GET /v1/edge`): a requested address outside it is not asked for
   * (`AddressNotUsable`); null: the edge has none; absent: not known, the edge decides
   */
  addressPool?: string | null;
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

/**
 * EdgeReconciler makes the edge hold what the route graph needs, with the operator's
 * `reservations`-scoped API key (which cannot start a tunnel itself: DESIGN.md "Keys and trust"):
 * a reservation per host binding and a tunnel key per reservation, minted once and handed to the
 * tunnel manager. What it reserved or minted for bindings the graph no longer has, it releases
 * and revokes. Everything carries the label `tuna.dev/cluster=<clusterId>`, so several clusters
 * can share an account without touching each other's reservations.
 *
 * Releasing and revoking need positive knowledge that nothing wants the address any more (issue 9):
 * everything carries the kind of the object it was made for (`tuna.dev/owner-kind`), and what no
 * binding of the graph wants is let go only when `knowsOwnerGone` says that kind was listed. A
 * graph built while an optional kind is absent (its CRDs missing, or not listed yet) lacks that
 * kind's bindings; their reservations are kept (`kept`) instead of handed to whoever asks next.
 *
 * It handles host bindings (Ingress, HTTPRoute and GRPCRoute hostnames, Service hostnames) and
 * dedicated addresses (a Gateway's): an address reservation from the edge's pool, labelled with
 * the graph's binding id (`tuna.dev/binding`), and a key of its own that records the edge's binding
 * id (`binding/address/<ip>`), which the tunnel and the data plane use. TCP ports and wildcard
 * hosts are reported pending.
 */
export class EdgeReconciler {
  readonly #client: ControlClient;
  readonly #keys: TunnelKeys;
  readonly #labels: Record<string, string>;
  readonly #maxConnections: number;
  readonly #addressPool: string | null | undefined;

  constructor(client: ControlClient, keys: TunnelKeys, options: EdgeReconcilerOptions) {
    this.#client = client;
    this.#keys = keys;
    this.#labels = { [CLUSTER_LABEL]: options.clusterId };
    this.#maxConnections = options.maxConnections ?? 4;
    this.#addressPool = options.addressPool;
  }

  /**
   * reconcile makes the edge hold what `graph` needs and lets go of what it no longer does, where
   * `knowsOwnerGone` (default: always) vouches that the graph is complete for the owner's kind.
   */
  async reconcile(graph: RouteGraph, knowsOwnerGone: KnowsOwnerGone = () => true): Promise<ReconcileReport> {
    const report: ReconcileReport = { ready: new Set(), addresses: new Map(), pending: [], reserved: 0, minted: 0, released: 0, revoked: 0, kept: 0 };
    const wanted = new Map<string, string>();
    const addressBindings: Binding[] = [];
    for (const b of graph.bindings) {
      if (b.kind === 'address') {
        addressBindings.push(b);
        continue;
      }
      const host = b.kind === 'host' && b.hostnames.length === 1 ? b.hostnames[0] : undefined;
      if (host === undefined || host.startsWith('*.')) {
        report.pending.push({ bindingId: b.id, reason: 'UnsupportedBinding', message: unsupportedMessage(b) });
        continue;
      }
      wanted.set(b.id, host);
    }
    let reservations = (await this.#client.listReservations(this.#labels)).reservations;
    const liveKeys = (await this.#client.listTunnelKeys(this.#labels)).tunnelKeys.filter((k) => k.revokedAt === null);
    const wantedReservations = new Set<string>();

    for (const [bindingId, hostname] of wanted) {
      const b = graph.bindings.find((x) => x.id === bindingId);
      const labels = b === undefined ? this.#labels : this.#ownerLabels(b);
      let reservation: Reservation | undefined = reservations.find((r) => r.kind === 'domain' && r.value === hostname);
      if (reservation === undefined) {
        try {
          reservation = (await this.#client.reserve({ kind: 'domain', hostname, labels })).reservation;
        } catch (err) {
          report.pending.push({ bindingId, reason: 'EdgeRefused', message: `${hostname} is not served: the edge refused to reserve it: ${(err as Error).message}` });
          continue;
        }
        reservations = [...reservations, reservation];
        report.reserved++;
      }
      wantedReservations.add(reservation.id);
      if (reservation.domainType === 'custom' && !reservation.verified) {
        const txtRecord = { name: challengeRecordName(hostname), value: reservation.verificationToken ?? '' };
        report.pending.push({
          bindingId,
          reason: 'DomainNotVerified',
          message: `${hostname} is not served yet: the edge serves a custom domain once it is verified. Create the DNS TXT record ${txtRecord.name} with the value ${txtRecord.value}, then run tuna reserve verify ${hostname}`,
          txtRecord,
        });
        continue;
      }
      await this.#holdKey(bindingId, reservation, liveKeys, labels, report);
    }

    for (const b of addressBindings) {
      const requested = b.addresses?.[0];
      const unusable = this.#unusable(b.addresses ?? []);
      if (unusable !== undefined) {
        report.pending.push({ bindingId: b.id, reason: 'AddressNotUsable', message: unusable });
        // a key of the address it held before goes with that address (letGo revokes it)
        this.#keys.delete(b.id);
        continue;
      }
      let reservation: Reservation | undefined = reservations.find((r) => r.kind === 'address' && r.labels[BINDING_LABEL] === b.id && (requested === undefined || r.value === requested));
      if (reservation === undefined) {
        try {
          const labels = { ...this.#ownerLabels(b), [BINDING_LABEL]: b.id };
          reservation = (await this.#client.reserve({ kind: 'address', ...(requested !== undefined ? { address: requested } : {}), labels })).reservation;
        } catch (err) {
          const why = (err as Error).message;
          this.#keys.delete(b.id);
          report.pending.push(
            requested === undefined
              ? { bindingId: b.id, reason: 'AddressNotAssigned', message: `the edge has assigned no address: it refused to reserve one from its pool: ${why}` }
              : { bindingId: b.id, reason: 'AddressNotUsable', message: `spec.addresses ${requested} is not usable: the edge refused to reserve it: ${why}` },
          );
          continue;
        }
        reservations = [...reservations, reservation];
        report.reserved++;
      }
      wantedReservations.add(reservation.id);
      await this.#holdKey(b.id, reservation, liveKeys, this.#ownerLabels(b), report);
      report.addresses.set(b.id, reservation.value);
    }

    await this.#letGo(new Set([...wanted.keys(), ...addressBindings.map((b) => b.id)]), wantedReservations, reservations, liveKeys, knowsOwnerGone, report);
    await this.#keys.persist();
    return report;
  }

  /** unusable says why the addresses a binding asks for cannot be asked of the edge (undefined: they can). */
  #unusable(requested: readonly string[]): string | undefined {
    if (requested.length > 1) return `spec.addresses asks for ${requested.length} addresses (${requested.join(', ')}): the edge gives a Gateway one address`;
    const ip = requested[0];
    if (ip === undefined || this.#addressPool === undefined) return undefined;
    if (this.#addressPool === null) return `spec.addresses ${ip} is not usable: the edge has no address pool`;
    if (!inAddressPool(this.#addressPool, ip)) return `spec.addresses ${ip} is not usable: it is not in the edge's address pool ${this.#addressPool}`;
    return undefined;
  }

  /** ownerLabels are the labels of what a binding gets at the edge: this cluster's and its owner's kind. */
  #ownerLabels(b: Binding): Record<string, string> {
    return { ...this.#labels, [OWNER_KIND_LABEL]: ownerLabel(b.source) };
  }

  /**
   * holdKey makes sure the binding holds a live key of its reservation (minting one when not) that
   * records the edge's binding id where it differs from the graph's, and marks the binding ready.
   */
  async #holdKey(bindingId: string, reservation: Reservation, liveKeys: readonly TunnelKey[], labels: Record<string, string>, report: ReconcileReport): Promise<void> {
    const edgeId = edgeBindingId(reservation);
    const recorded = edgeId === bindingId ? {} : { edgeBindingId: edgeId };
    const held = this.#keys.get(bindingId);
    const isLive = held !== undefined && liveKeys.some((k) => k.id === held.keyId && k.reservationId === reservation.id);
    if (!isLive) {
      const minted = await this.#client.mintTunnelKey({ reservationId: reservation.id, protocol: 'http', maxConnections: this.#maxConnections, labels });
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
  async #letGo(
    wanted: ReadonlySet<string>,
    wantedReservations: ReadonlySet<string>,
    reservations: readonly Reservation[],
    liveKeys: readonly TunnelKey[],
    knowsOwnerGone: KnowsOwnerGone,
    report: ReconcileReport,
  ): Promise<void> {
    const isGone = (labels: Readonly<Record<string, string>>): boolean => knowsOwnerGone(ownerOf(labels));
    for (const bindingId of this.#keys.bindings()) {
      if (wanted.has(bindingId)) continue;
      const live = liveKeys.find((k) => k.id === this.#keys.get(bindingId)?.keyId);
      if (live === undefined || isGone(live.labels)) this.#keys.delete(bindingId);
    }
    const held = this.#keys.heldKeyIds();
    for (const k of liveKeys) {
      if (held.has(k.id)) continue;
      if (!wantedReservations.has(k.reservationId) && !isGone(k.labels)) {
        report.kept++;
        continue;
      }
      await this.#client.revokeTunnelKey(k.id);
      report.revoked++;
    }
    for (const r of reservations) {
      if (r.kind === 'tcp-port' || wantedReservations.has(r.id)) continue;
      if (!isGone(r.labels)) {
        report.kept++;
        continue;
      }
      await this.#client.release(r.id);
      report.released++;
    }
  }
}
