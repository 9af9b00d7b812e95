/**
 * The finalizer `tuna.dev/reservation` on Domain, TCPPort and Tunnel objects (docs/crds.md): a
 * deleted object stays (Terminating) until the edge has let go of its reservation, released with
 * `reclaimPolicy: Delete` (its keys revoked with it), kept for the account with `Retain` (and a
 * Normal Event says so). Only then is the finalizer removed and the object goes.
 *
 * The operator translates the cluster without the objects being deleted (`splitDeleting`), so
 * their hosts and ports leave the graph, and hands them to the reconciler as `releasing`.
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { ObjectRef } from '../model/index.js';
import { refKey } from '../model/index.js';
import { isFinalizedKind, isKind, normal } from '../translate/index.js';
import { runBounded } from './bounded.js';
import { CRD_RESERVATION_REASONS } from './crd-reservations.js';
import type { CrdReport, ReleasingObject } from './crd-reservations.js';
import { EventRecorder } from './event-recorder.js';
import { WATCHED_KINDS } from './kube-objects.js';

/** RESERVATION_FINALIZER holds a tuna.dev object until its reservation is released or retained. */
export const RESERVATION_FINALIZER = 'tuna.dev/reservation';

const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

/** DeletingObject is a tuna.dev object being deleted, with what the reconciler must do for it. */
export interface DeletingObject extends ReleasingObject {
  object: KubernetesObject;
}

/** isFinalized tells a Domain, TCPPort or Tunnel, the kinds that carry the finalizer. */
function isFinalized(o: KubernetesObject): boolean {
  return (o.apiVersion ?? '').startsWith('tuna.dev/') && isFinalizedKind(o.kind);
}

/** refOf is the ObjectRef of a cached tuna.dev object. */
function refOf(o: KubernetesObject): ObjectRef {
  return { group: 'tuna.dev', kind: o.kind ?? '', namespace: o.metadata?.namespace ?? 'default', name: o.metadata?.name ?? '' };
}

/** releasingOf reads what a deleted object's finalizer must do: its reclaimPolicy and what its status said it held. */
function releasingOf(o: KubernetesObject): DeletingObject {
  const spec = (o as { spec?: { reclaimPolicy?: unknown } }).spec;
  const status = (o as { status?: { hostname?: unknown; port?: unknown } }).status;
  const value = isKind(o, 'Domain') ? status?.hostname : isKind(o, 'TCPPort') ? status?.port : undefined;
  return {
    object: o,
    ref: refOf(o),
    reclaimPolicy: spec?.reclaimPolicy === 'Retain' ? 'Retain' : 'Delete',
    ...(typeof value === 'string' || typeof value === 'number' ? { value: String(value) } : {}),
  };
}

/**
 * splitDeleting separates the Domains, TCPPorts and Tunnels being deleted (a deletionTimestamp)
 * from everything else: those are not translated (what they published goes), and their
 * reservations are let go before their finalizers are removed.
 */
export function splitDeleting(objects: readonly KubernetesObject[]): { live: KubernetesObject[]; deleting: DeletingObject[] } {
  const live: KubernetesObject[] = [];
  const deleting: DeletingObject[] = [];
  for (const o of objects) {
    if (isFinalized(o) && o.metadata?.deletionTimestamp !== undefined) deleting.push(releasingOf(o));
    else live.push(o);
  }
  return { live, deleting };
}

/** addOps appends the finalizer (creating the list when the object has none). */
function addOps(finalizers: readonly string[] | undefined): object[] {
  if (finalizers === undefined || finalizers.length === 0) return [{ op: 'add', path: '/metadata/finalizers', value: [RESERVATION_FINALIZER] }];
  // guarded by the list read: a cache that lags behind our own last patch must not append a second copy
  return [{ op: 'test', path: '/metadata/finalizers', value: finalizers }, { op: 'add', path: '/metadata/finalizers/-', value: RESERVATION_FINALIZER }];
}

/** FinalizerReport counts what one `apply` did. */
export interface FinalizerReport {
  added: number;
  removed: number;
  failed: number;
  /** patches refused because the object changed or went since the cache read it (the next sync reads again) */
  stale: number;
}

/** isStale tells a refusal that only says the cached copy is behind: gone (404), or a `test` op failed (422). */
function isStale(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 404 || code === 422;
}

/** FinalizersOptions tune the finalizer writer. */
export interface FinalizersOptions {
  /** the field manager named in managedFields (default `tuna`) */
  fieldManager?: string;
  /** `source.component` of the Events (default `tuna-operator`) */
  component?: string;
  now?: () => Date;
  /** what records the Events (default: an EventRecorder of `component` and `now`) */
  events?: EventRecorder;
  /** called for each write that failed; the next sync tries again */
  onError?: (ref: ObjectRef, err: unknown) => void;
  /** PATCHes in flight at once (default 8) */
  concurrency?: number;
}

/**
 * Finalizers adds `tuna.dev/reservation` to every live Domain, TCPPort and Tunnel, and removes it
 * from a deleted one once the reconciler reports its reservation released or retained. Each patch
 * is a JSON patch of `metadata.finalizers` alone: an append (`/-`) guarded by a `test` of the list
 * read, or a removal at the index read guarded by a `test` of that entry, so another controller's
 * finalizer added meanwhile is never lost and a status written in the same sync (a new
 * resourceVersion) does not make it conflict. An object is not patched again until the cache holds
 * a newer copy of it; a refusal that only says the copy was behind (404, a failed `test`) is
 * counted `stale` and left to the next sync.
 */
export class Finalizers {
  readonly #custom: CustomObjectsApi;
  readonly #events: EventRecorder;
  readonly #fieldManager: string;
  readonly #onError: (ref: ObjectRef, err: unknown) => void;
  readonly #concurrency: number;
  /** uid → the resourceVersion a patch was made from: until the cache has a newer copy, it is not patched again */
  #patchedAt = new Map<string, string>();

  constructor(config: KubeConfig, options: FinalizersOptions = {}) {
    this.#custom = config.makeApiClient(CustomObjectsApi);
    this.#fieldManager = options.fieldManager ?? 'tuna';
    this.#events = options.events ?? new EventRecorder(config, { ...(options.component !== undefined ? { component: options.component } : {}), ...(options.now !== undefined ? { now: options.now } : {}) });
    this.#onError = options.onError ?? (() => undefined);
    this.#concurrency = options.concurrency ?? 8;
  }

  /** apply adds the finalizer to `live` objects lacking it and removes it from the `deleting` ones `crd` reports finalized. */
  async apply(live: readonly KubernetesObject[], deleting: readonly DeletingObject[], crd: CrdReport): Promise<FinalizerReport> {
    const report: FinalizerReport = { added: 0, removed: 0, failed: 0, stale: 0 };
    const jobs: { o: KubernetesObject; ref: ObjectRef; ops: object[]; retained?: string }[] = [];
    for (const o of live) {
      const finalizers = o.metadata?.finalizers ?? [];
      if (isFinalized(o) && !finalizers.includes(RESERVATION_FINALIZER)) jobs.push({ o, ref: refOf(o), ops: addOps(o.metadata?.finalizers) });
    }
    for (const d of deleting) {
      const finalizers = d.object.metadata?.finalizers ?? [];
      const key = refKey(d.ref);
      if (!finalizers.includes(RESERVATION_FINALIZER) || !crd.finalized.has(key)) continue;
      const retained = crd.retained.get(key);
      const at = finalizers.indexOf(RESERVATION_FINALIZER);
      const ops = [{ op: 'test', path: `/metadata/finalizers/${at}`, value: RESERVATION_FINALIZER }, { op: 'remove', path: `/metadata/finalizers/${at}` }];
      jobs.push({ o: d.object, ref: d.ref, ops, ...(retained !== undefined ? { retained } : {}) });
    }
    const patchedAt = new Map<string, string>();
    const fresh = jobs.filter((job) => {
      const uid = job.o.metadata?.uid ?? '';
      const rv = job.o.metadata?.resourceVersion ?? '';
      const isBehind = this.#patchedAt.get(uid) === rv;
      if (isBehind) patchedAt.set(uid, rv);
      return !isBehind;
    });
    await runBounded(fresh, this.#concurrency, async (job) => {
      const isAdding = job.o.metadata?.deletionTimestamp === undefined;
      try {
        if (job.retained !== undefined) await this.#events.post(job.o, job.ref, normal(CRD_RESERVATION_REASONS.retained, job.retained));
        await this.#patch(job.o, job.ref, job.ops);
        patchedAt.set(job.o.metadata?.uid ?? '', job.o.metadata?.resourceVersion ?? '');
        if (isAdding) report.added++;
        else report.removed++;
      } catch (err) {
        if (isStale(err)) report.stale++;
        else {
          report.failed++;
          this.#onError(job.ref, err);
        }
      }
    });
    this.#patchedAt = patchedAt;
    return report;
  }

  /** patch applies a JSON patch of `metadata.finalizers`. */
  async #patch(o: KubernetesObject, ref: ObjectRef, body: object[]): Promise<void> {
    const kind = WATCHED_KINDS.find((k) => k.group === 'tuna.dev' && k.kind === ref.kind);
    if (kind === undefined) throw new Error(`no watched kind ${ref.kind}.tuna.dev`);
    const [group, version] = (o.apiVersion ?? kind.apiVersion).split('/') as [string, string];
    await this.#custom.patchNamespacedCustomObject(
      { group, version, namespace: ref.namespace ?? 'default', plural: kind.plural, name: ref.name, body, fieldManager: this.#fieldManager },
      jsonPatch,
    );
  }
}
