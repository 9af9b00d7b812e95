/**
 * The reservations of the `tuna.dev` CRDs at the edge (docs/crds.md). A Domain or a TCPPort is a
 * reservation kept in git: the edge holds it for the account whether or not a Tunnel uses it, and
 * it goes only when its object is deleted (`reclaimPolicy: Delete`), or stays at the edge for the
 * account, no longer this cluster's (`Retain`).
 *
 * How a reservation is found again (after a restart, or one the account already held): a domain by
 * its hostname, a TCP port asked for by number by that number, and "any port" by the reservation
 * name `tuna.dev/<cluster>/TCPPort/<ns>/<name>`, which makes the edge's pool allocation idempotent.
 * Each carries, besides the cluster label, `tuna.dev/owner-kind`, `tuna.dev/owner` (`<ns>/<name>`)
 * and `tuna.dev/reclaim-policy`, so a reservation whose object was deleted while the operator was
 * down (no finalizer could hold it) is still released or retained as its object said.
 */
import { ControlAnswerError } from '../control-api/index.js';
import type { Reservation as EdgeReservation } from '../control-api/index.js';
import type { ObjectRef, ReclaimPolicy, Reservation } from '../model/index.js';
import { refKey } from '../model/index.js';
import { isKind } from '../translate/index.js';
import type { TunaReason } from '../translate/index.js';
import { runBounded } from './bounded.js';
import type { EdgeControl, EdgeHoldings } from './edge-holdings.js';

/** the label of the kind of object a reservation was made for (the same one EdgeReconciler writes) */
const OWNER_KIND_LABEL = 'tuna.dev/owner-kind';
/** `<namespace>/<name>` of the Domain or TCPPort a reservation was made for */
export const OWNER_LABEL = 'tuna.dev/owner';
/** the object's reclaimPolicy, so an owner deleted while the operator was down is still honoured */
export const RECLAIM_LABEL = 'tuna.dev/reclaim-policy';
/** on a retained reservation, instead of `tuna.dev/cluster`: the cluster that let it go */
export const RETAINED_LABEL = 'tuna.dev/retained-from';

/** CRD_RESERVATION_REASONS are the condition reasons of what the edge holds for a Domain or TCPPort. */
export const CRD_RESERVATION_REASONS = {
  reserved: 'Reserved',
  ready: 'Ready',
  notVerified: 'DomainNotVerified',
  /** the name or port is held by another account (taken meanwhile, after an out-of-band release) */
  alreadyReserved: 'AlreadyReserved',
  poolExhausted: 'PoolExhausted',
  quotaExceeded: 'QuotaExceeded',
  refused: 'EdgeRefused',
  retained: 'ReservationRetained',
} as const satisfies Record<string, TunaReason>;

/** CrdReservationReason is one of CRD_RESERVATION_REASONS. */
export type CrdReservationReason = (typeof CRD_RESERVATION_REASONS)[keyof typeof CRD_RESERVATION_REASONS];

/** HeldReservation is what the edge holds for one reservation of the graph. */
export interface HeldReservation {
  /** the graph's reservation id */
  id: string;
  source: ObjectRef;
  /** reserved: the edge holds it (and, for a domain, it is verified); unverified: a custom domain waits for DNS; refused: not held */
  state: 'reserved' | 'unverified' | 'refused';
  reason: CrdReservationReason;
  message: string;
  /** the hostname or the port (decimal) the edge holds */
  value?: string;
  /** unverified: the TXT record to create */
  verification?: { name: string; value: string };
}

/** ReleasingObject is a tuna.dev object being deleted, with what its finalizer must do. */
export interface ReleasingObject {
  ref: ObjectRef;
  reclaimPolicy: ReclaimPolicy;
  /** what the object's status said it held (Domain `status.hostname`, TCPPort `status.port`), for a reservation made before owner labels */
  value?: string;
}

/** CrdReport is what one reconcile did with the CRDs' reservations. */
export interface CrdReport {
  held: HeldReservation[];
  /** refKeys of the releasing objects whose reservations are released or retained: their finalizers may go */
  finalized: Set<string>;
  /** refKey → what was retained (a sentence for the Event) */
  retained: Map<string, string>;
  reserved: number;
  adopted: number;
  released: number;
}

/** emptyCrdReport is a report of nothing done. */
export function emptyCrdReport(): CrdReport {
  return { held: [], finalized: new Set(), retained: new Map(), reserved: 0, adopted: 0, released: 0 };
}

/** challengeName is the TXT record the edge checks for a custom domain (src/edge/control/dns-verifier.ts). */
function challengeName(hostname: string): string {
  return `_tuna-challenge.${hostname}`;
}

/** ownerKindOf is the owner-kind label's value of a tuna.dev kind. */
function ownerKindOf(kind: string): string {
  return `${kind}.tuna.dev`;
}

/** ownerKey indexes a reservation by its owner labels. */
function ownerKey(kind: string, namespace: string | undefined, name: string): string {
  return `${ownerKindOf(kind)}|${namespace ?? 'default'}/${name}`;
}

/** refusal turns the edge's answer to a reserve into a reason; transient failures (unreachable, 5xx) are thrown. */
function refusal(err: unknown): { reason: CrdReservationReason; why: string } {
  if (!(err instanceof ControlAnswerError) || err.status >= 500 || err.status === 429) throw err;
  const why = err.message;
  if (err.code === 'TUNA_STORE_POOL_EXHAUSTED') return { reason: CRD_RESERVATION_REASONS.poolExhausted, why };
  if (err.code === 'TUNA_CONTROL_QUOTA_EXCEEDED') return { reason: CRD_RESERVATION_REASONS.quotaExceeded, why };
  if (err.code === 'TUNA_STORE_CONFLICT') return { reason: CRD_RESERVATION_REASONS.alreadyReserved, why };
  return { reason: CRD_RESERVATION_REASONS.refused, why };
}

/** what describes a graph reservation in a sentence. */
function what(r: Reservation): string {
  if (r.kind === 'domain') return `hostname ${r.hostname ?? ''}`;
  return r.port === 0 || r.port === undefined ? 'a TCP port from the edge pool' : `TCP port ${r.port}`;
}

/**
 * CrdReservations makes the edge hold the graph's `reservations` (Domains and TCPPorts) and lets
 * go of those whose object is deleted or gone, as its reclaimPolicy says. EdgeReconciler calls
 * `hold` before its bindings (so a Tunnel on a Domain finds the Domain's reservation) and
 * `letGo` after them (so a name a binding still wants is never released), both on the same
 * EdgeHoldings, which they keep up to date.
 */
export class CrdReservations {
  readonly #client: EdgeControl;
  readonly #clusterId: string;
  readonly #clusterLabels: Record<string, string>;
  readonly #concurrency: number;

  constructor(client: EdgeControl, clusterLabels: Record<string, string>, clusterId: string, concurrency: number) {
    this.#client = client;
    this.#clusterLabels = clusterLabels;
    this.#clusterId = clusterId;
    this.#concurrency = concurrency;
  }

  /** hold reserves (or adopts) every reservation of the graph whose object is not being deleted, and marks it wanted. */
  async hold(edge: EdgeHoldings, reservations: readonly Reservation[], wanted: Set<string>, report: CrdReport): Promise<void> {
    const index = indexHoldings(edge);
    await runBounded(reservations, this.#concurrency, async (r) => {
      const { held, edgeId } = await this.#holdOne(edge, index, r, report);
      report.held.push(held);
      if (edgeId !== undefined) wanted.add(edgeId);
    });
    report.held.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * letGo releases or retains the reservations of `releasing` objects (their finalizers wait for
   * it) and of owners gone where `isOwnerKindListed` vouches for their absence, except what a
   * binding or another reservation still wants.
   */
  async letGo(edge: EdgeHoldings, releasing: readonly ReleasingObject[], wanted: ReadonlySet<string>, isOwnerKindListed: (kind: string) => boolean, report: CrdReport): Promise<void> {
    const index = indexHoldings(edge);
    const done = new Set<string>();
    const jobs: { r: EdgeReservation; policy: ReclaimPolicy; ref?: ObjectRef }[] = [];
    for (const obj of releasing) {
      if (isKind(obj.ref, 'Tunnel')) continue; // a Tunnel's own host is its binding's: EdgeReconciler lets it go
      const found = index.byOwner.get(ownerKey(obj.ref.kind, obj.ref.namespace, obj.ref.name)) ?? [];
      const byValue = obj.value === undefined ? undefined : isKind(obj.ref, 'Domain') ? edge.domain(obj.value) : index.tcpByValue.get(obj.value);
      const own = found.length > 0 ? found : byValue !== undefined ? [byValue] : [];
      for (const r of own) {
        done.add(r.id);
        if (!wanted.has(r.id)) jobs.push({ r, policy: obj.reclaimPolicy, ref: obj.ref });
      }
    }
    for (const [key, list] of index.byOwner) {
      const kind = key.slice(0, key.indexOf('.'));
      if (!isOwnerKindListed(kind)) continue;
      for (const r of list) if (!done.has(r.id) && !wanted.has(r.id)) jobs.push({ r, policy: r.labels[RECLAIM_LABEL] === 'Retain' ? 'Retain' : 'Delete' });
    }
    await runBounded(jobs, this.#concurrency, async (job) => {
      if (job.policy === 'Retain') {
        await this.#retain(edge, job.r);
        if (job.ref) report.retained.set(refKey(job.ref), `reclaimPolicy Retain: the edge keeps ${job.r.kind} ${job.r.value} for the account (labelled ${RETAINED_LABEL}=${this.#clusterId}); this cluster no longer manages it`);
      } else {
        await this.#client.release(job.r.id);
        edge.released(job.r.id);
        report.released++;
      }
    });
    for (const obj of releasing) report.finalized.add(refKey(obj.ref));
  }

  /** holdOne finds the graph reservation at the edge (relabelling one made for something else) or reserves it. */
  async #holdOne(edge: EdgeHoldings, index: HoldingsIndex, r: Reservation, report: CrdReport): Promise<{ held: HeldReservation; edgeId?: string }> {
    const name = this.#nameOf(r);
    const labels = this.#labelsOf(r);
    let existing = r.kind === 'domain' ? edge.domain(r.hostname ?? '') : r.port ? index.tcpByValue.get(String(r.port)) : index.byName.get(name ?? '');
    try {
      if (existing === undefined || (!sameLabels(existing.labels, labels) && !isAnotherBindings(existing))) {
        const answer = await this.#client.reserve(this.#request(r, existing, name, labels));
        if (existing === undefined && answer.created) report.reserved++;
        else report.adopted++;
        existing = answer.reservation;
        edge.addReservation(existing);
      }
    } catch (err) {
      const { reason, why } = refusal(err);
      return { held: { id: r.id, source: r.source, state: 'refused', reason, message: `${what(r)} is not reserved: the edge refused it: ${why}` } };
    }
    const value = existing.value;
    if (existing.kind === 'domain' && existing.domainType === 'custom' && !existing.verified) {
      const verification = { name: challengeName(value), value: existing.verificationToken ?? '' };
      // the sentence EdgeReconciler gives a host binding on it, so the Domain gets one Warning event, not two
      const message = `${value} is not served yet: the edge serves a custom domain once it is verified. Create the DNS TXT record ${verification.name} with the value ${verification.value}, then run tuna reserve verify ${value}`;
      return { held: { id: r.id, source: r.source, state: 'unverified', reason: CRD_RESERVATION_REASONS.notVerified, message, value, verification }, edgeId: existing.id };
    }
    const message = existing.kind === 'domain' ? `the edge holds ${value} for the account` : `the edge holds TCP port ${value} for the account`;
    return { held: { id: r.id, source: r.source, state: 'reserved', reason: CRD_RESERVATION_REASONS.reserved, message, value }, edgeId: existing.id };
  }

  /** request is the reserve body for a graph reservation; an existing one is named by its value, so the edge adopts it. */
  #request(r: Reservation, existing: EdgeReservation | undefined, name: string | undefined, labels: Record<string, string>) {
    const named = name !== undefined ? { name } : existing?.name ? { name: existing.name } : {};
    if (r.kind === 'domain') return { kind: 'domain' as const, hostname: r.hostname ?? '', labels, ...named };
    const port = existing !== undefined ? Number(existing.value) : r.port || undefined;
    return { kind: 'tcp-port' as const, ...(port !== undefined ? { port } : {}), labels, ...named };
  }

  /** retain revokes the reservation's live keys and relabels it away from this cluster: the account keeps it. */
  async #retain(edge: EdgeHoldings, r: EdgeReservation): Promise<void> {
    const keys = [...edge.liveKeys.values()].filter((k) => k.reservationId === r.id).map((k) => k.id);
    await runBounded(keys, this.#concurrency, async (id) => {
      await this.#client.revokeTunnelKey(id);
      edge.revoked(id);
    });
    const labels: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.labels)) if (!(k in this.#clusterLabels)) labels[k] = v;
    labels[RETAINED_LABEL] = this.#clusterId;
    const named = r.name !== null ? { name: r.name } : {};
    await this.#client.reserve(r.kind === 'domain' ? { kind: 'domain', hostname: r.value, labels, ...named } : { kind: 'tcp-port', port: Number(r.value), labels, ...named });
    edge.released(r.id); // not this cluster's any more: it leaves the listing
  }

  /** nameOf is the edge reservation name of "any port" (the pool allocation is idempotent by name). */
  #nameOf(r: Reservation): string | undefined {
    if (r.kind !== 'tcp-port' || (r.port ?? 0) !== 0) return undefined;
    return `tuna.dev/${this.#clusterId}/TCPPort/${r.source.namespace ?? 'default'}/${r.source.name}`;
  }

  #labelsOf(r: Reservation): Record<string, string> {
    return {
      ...this.#clusterLabels,
      [OWNER_KIND_LABEL]: ownerKindOf(r.source.kind),
      [OWNER_LABEL]: `${r.source.namespace ?? 'default'}/${r.source.name}`,
      [RECLAIM_LABEL]: r.reclaimPolicy,
    };
  }
}

/** HoldingsIndex finds this cluster's tcp-port reservations by value and name, and the CRDs' by owner. */
interface HoldingsIndex {
  tcpByValue: Map<string, EdgeReservation>;
  byName: Map<string, EdgeReservation>;
  byOwner: Map<string, EdgeReservation[]>;
}

function indexHoldings(edge: EdgeHoldings): HoldingsIndex {
  const index: HoldingsIndex = { tcpByValue: new Map(), byName: new Map(), byOwner: new Map() };
  for (const r of edge.reservations.values()) {
    if (r.kind === 'tcp-port') index.tcpByValue.set(r.value, r);
    if (r.name !== null) index.byName.set(r.name, r);
    const kind = r.labels[OWNER_KIND_LABEL];
    const owner = r.labels[OWNER_LABEL];
    if ((kind === 'Domain.tuna.dev' || kind === 'TCPPort.tuna.dev') && owner !== undefined) {
      const key = `${kind}|${owner}`;
      index.byOwner.set(key, [...(index.byOwner.get(key) ?? []), r]);
    }
  }
  return index;
}

/**
 * isAnotherBindings tells a TCP port this cluster holds for a binding of another owner (a
 * LoadBalancer Service's port): it serves the TCPPort as it is, never relabelled, so the two never
 * take it from each other sync after sync. A domain is relabelled: host bindings find it by name.
 */
function isAnotherBindings(e: EdgeReservation): boolean {
  const kind = e.labels[OWNER_KIND_LABEL];
  return e.kind === 'tcp-port' && kind !== undefined && kind !== 'TCPPort.tuna.dev';
}

function sameLabels(have: Readonly<Record<string, string>>, want: Readonly<Record<string, string>>): boolean {
  return Object.entries(want).every(([k, v]) => have[k] === v);
}
