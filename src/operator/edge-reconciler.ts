import type { ControlClient, Reservation, TunnelKey } from '../control-api/index.js';
import type { RouteGraph } from '../model/index.js';
import type { TunnelKeySource } from '../tunnel/index.js';

/** HeldKey is a tunnel key the operator minted: its record id at the edge and its secret token. */
export interface HeldKey {
  keyId: string;
  token: string;
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

  set(bindingId: string, key: HeldKey): void {
    this.#byBinding.set(bindingId, key);
    this.isDirty = true;
  }

  delete(bindingId: string): void {
    this.isDirty ||= this.#byBinding.delete(bindingId);
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
    const held = this.#byBinding.get(bindingId);
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
  reason: 'DomainNotVerified' | 'UnsupportedBinding' | 'EdgeRefused';
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
  if (b.kind === 'address') return 'the edge has assigned no address: the operator does not reserve dedicated addresses at the edge yet, so nothing is served on it';
  if (b.kind === 'tcp-port') return `TCP port ${b.port ?? 0} is not served: the operator does not reserve TCP ports at the edge yet`;
  return `${b.hostnames.join(', ') || 'a host binding without hostname'} is not served: the operator does not reserve wildcard or multi-host bindings at the edge yet`;
}

/** ReconcileReport is what one reconcile found and did. */
export interface ReconcileReport {
  /** bindings with a reservation and a live key: their tunnels can open */
  ready: Set<string>;
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
}

const CLUSTER_LABEL = 'tuna.dev/cluster';
/** the kind of the binding's source object, `Kind` (core) or `Kind.group`, as kubectl names resources */
const OWNER_KIND_LABEL = 'tuna.dev/owner-kind';

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
 * This first version handles host bindings (Ingress, HTTPRoute and GRPCRoute hostnames, Service
 * hostnames): TCP ports and dedicated addresses get edge-assigned values whose binding ids differ
 * from the graph's, which the data plane must learn to map first; they are reported pending.
 */
export class EdgeReconciler {
  readonly #client: ControlClient;
  readonly #keys: TunnelKeys;
  readonly #labels: Record<string, string>;
  readonly #maxConnections: number;

  constructor(client: ControlClient, keys: TunnelKeys, options: EdgeReconcilerOptions) {
    this.#client = client;
    this.#keys = keys;
    this.#labels = { [CLUSTER_LABEL]: options.clusterId };
    this.#maxConnections = options.maxConnections ?? 4;
  }

  /**
   * reconcile makes the edge hold what `graph` needs and lets go of what it no longer does, where
   * `knowsOwnerGone` (default: always) vouches that the graph is complete for the owner's kind.
   */
  async reconcile(graph: RouteGraph, knowsOwnerGone: KnowsOwnerGone = () => true): Promise<ReconcileReport> {
    const report: ReconcileReport = { ready: new Set(), pending: [], reserved: 0, minted: 0, released: 0, revoked: 0, kept: 0 };
    const wanted = new Map<string, string>();
    const owners = new Map<string, Record<string, string>>();
    for (const b of graph.bindings) {
      const host = b.kind === 'host' && b.hostnames.length === 1 ? b.hostnames[0] : undefined;
      if (host === undefined || host.startsWith('*.')) {
        report.pending.push({ bindingId: b.id, reason: 'UnsupportedBinding', message: unsupportedMessage(b) });
        continue;
      }
      wanted.set(b.id, host);
      owners.set(b.id, { ...this.#labels, [OWNER_KIND_LABEL]: ownerLabel(b.source) });
    }
    let reservations = (await this.#client.listReservations(this.#labels)).reservations;
    const liveKeys = (await this.#client.listTunnelKeys(this.#labels)).tunnelKeys.filter((k) => k.revokedAt === null);

    for (const [bindingId, hostname] of wanted) {
      let reservation: Reservation | undefined = reservations.find((r) => r.kind === 'domain' && r.value === hostname);
      if (reservation === undefined) {
        try {
          reservation = (await this.#client.reserve({ kind: 'domain', hostname, labels: owners.get(bindingId) ?? this.#labels })).reservation;
        } catch (err) {
          report.pending.push({ bindingId, reason: 'EdgeRefused', message: `${hostname} is not served: the edge refused to reserve it: ${(err as Error).message}` });
          continue;
        }
        reservations = [...reservations, reservation];
        report.reserved++;
      }
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
      const held = this.#keys.get(bindingId);
      const isLive = held !== undefined && liveKeys.some((k) => k.id === held.keyId && k.reservationId === reservation.id);
      if (!isLive) {
        const minted = await this.#client.mintTunnelKey({ reservationId: reservation.id, protocol: 'http', maxConnections: this.#maxConnections, labels: owners.get(bindingId) ?? this.#labels });
        this.#keys.set(bindingId, { keyId: minted.tunnelKey.id, token: minted.token });
        report.minted++;
      }
      report.ready.add(bindingId);
    }

    await this.#letGo(wanted, reservations, liveKeys, knowsOwnerGone, report);
    await this.#keys.persist();
    return report;
  }

  /**
   * letGo revokes and releases what this cluster holds at the edge and no binding wants, keys
   * first, where the owner's absence is known. A live key no one holds (the Secret lost it, or a
   * restart without one) is revoked when its reservation is still wanted: a newer key replaced it.
   */
  async #letGo(wanted: Map<string, string>, reservations: readonly Reservation[], liveKeys: readonly TunnelKey[], knowsOwnerGone: KnowsOwnerGone, report: ReconcileReport): Promise<void> {
    const isGone = (labels: Readonly<Record<string, string>>): boolean => knowsOwnerGone(ownerOf(labels));
    for (const bindingId of this.#keys.bindings()) {
      if (wanted.has(bindingId)) continue;
      const live = liveKeys.find((k) => k.id === this.#keys.get(bindingId)?.keyId);
      if (live === undefined || isGone(live.labels)) this.#keys.delete(bindingId);
    }
    const hostnames = new Set(wanted.values());
    const wantedReservations = new Set(reservations.filter((r) => r.kind === 'domain' && hostnames.has(r.value)).map((r) => r.id));
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
      if (r.kind !== 'domain' || hostnames.has(r.value)) continue;
      if (!isGone(r.labels)) {
        report.kept++;
        continue;
      }
      await this.#client.release(r.id);
      report.released++;
    }
  }
}
