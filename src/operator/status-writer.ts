import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { refKey } from '../model/index.js';
import type { ObjectRef, ObjectStatus } from '../model/index.js';
import { apiGroupOf, isKind } from '../translate/index.js';
import { runBounded } from './bounded.js';
import { WATCHED_KINDS } from './kube-objects.js';
import type { WatchedKind } from './kube-objects.js';
import { mergePatchOf, mergeStatus, rfc3339Seconds, statusDiffers } from './status-merge.js';

/** StatusWriterOptions tune the writer. */
export interface StatusWriterOptions {
  /** tuna's Gateway API controllerName (default `tuna.dev/gateway-controller`) */
  controllerName?: string;
  /** the field manager named in managedFields (default `tuna`) */
  fieldManager?: string;
  /** the clock for lastTransitionTime (tests) */
  now?: () => Date;
  /** called for each write that failed; the next write tries again */
  onError?: (ref: ObjectRef, err: unknown) => void;
  /** status PATCHes in flight at once (default 8) */
  concurrency?: number;
}

/** WriteReport counts what one `write` did. */
export interface WriteReport {
  written: number;
  unchanged: number;
  /** objects the cache no longer holds (deleted meanwhile): nothing to write */
  gone: number;
  failed: number;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const TUNA_GROUP = 'tuna.dev';

/**
 * StatusWriter writes the status subresource bodies the translators computed, merged with what
 * each object has (status-merge.ts): only when something would change, with a JSON merge patch
 * of the fields tuna owns, so other writers' fields survive. Written today: Gateway API kinds
 * (conditions, listeners, route parents, supportedFeatures), tuna.dev CRDs, and
 * `status.loadBalancer` of Ingress and Service.
 *
 * The patch also deletes what tuna no longer says (`mergePatchOf`): a key gone from a nested
 * object, and on tuna.dev kinds, whose status tuna alone writes, a top-level field.
 *
 * Events are the EventRecorder's. An Ingress's status has no place for conditions: its problems
 * reach the user as Warning events (docs/operator.md).
 */
export class StatusWriter {
  readonly #core: CoreV1Api;
  readonly #custom: CustomObjectsApi;
  readonly #controllerName: string;
  readonly #fieldManager: string;
  readonly #now: () => Date;
  readonly #onError: (ref: ObjectRef, err: unknown) => void;
  readonly #concurrency: number;

  constructor(config: KubeConfig, options: StatusWriterOptions = {}) {
    this.#core = config.makeApiClient(CoreV1Api);
    this.#custom = config.makeApiClient(CustomObjectsApi);
    this.#controllerName = options.controllerName ?? 'tuna.dev/gateway-controller';
    this.#fieldManager = options.fieldManager ?? 'tuna';
    this.#now = options.now ?? (() => new Date());
    this.#onError = options.onError ?? (() => undefined);
    this.#concurrency = options.concurrency ?? 8;
  }

  /**
   * write brings every object's status up to date. `current` returns the object as the cache
   * holds it (undefined once deleted). Writes run `concurrency` at a time: one after another made
   * the first sync of 5,000 objects 5,000 round trips long, and all at once would open
   * thousands of requests against the apiserver. `shouldStop` (asked before each PATCH) ends it
   * early: a newer set of statuses is waiting (status-lane.ts).
   */
  async write(statuses: readonly ObjectStatus[], current: (ref: ObjectRef) => KubernetesObject | undefined, shouldStop: () => boolean = () => false): Promise<WriteReport> {
    const report: WriteReport = { written: 0, unchanged: 0, gone: 0, failed: 0 };
    const now = rfc3339Seconds(this.#now());
    const patches: { target: WatchedKind; apiVersion: string; ref: ObjectRef; body: object }[] = [];
    for (const s of statuses) {
      if (s.status === undefined) continue;
      const target = kindOf(s.ref);
      const obj = current(s.ref);
      if (target === undefined || obj === undefined) {
        report.gone++;
        continue;
      }
      const before = (obj as { status?: Record<string, unknown> }).status;
      const merged = mergeStatus(before, s.status, { controllerName: this.#controllerName, now });
      // tuna's own kinds have no other writer: a field tuna no longer sets (a url taken back) goes
      if (s.ref.group === TUNA_GROUP) for (const key of Object.keys(before ?? {})) if (!(key in merged)) merged[key] = null;
      if (!statusDiffers(before, merged)) {
        report.unchanged++;
        continue;
      }
      patches.push({ target, apiVersion: obj.apiVersion ?? target.apiVersion, ref: s.ref, body: { status: mergePatchOf(before, merged) } });
    }
    await runBounded(patches, this.#concurrency, async (p) => {
      try {
        await this.#patch(p.target, p.apiVersion, p.ref, p.body);
        report.written++;
      } catch (err) {
        report.failed++;
        this.#onError(p.ref, err);
      }
    }, shouldStop);
    return report;
  }

  /** patch writes at `apiVersion`, the version the cache watches the object at (a kind may fall back to an older one). */
  async #patch(kind: WatchedKind, apiVersion: string, ref: ObjectRef, body: object): Promise<void> {
    if (apiVersion === 'v1') {
      if (!isKind(kind, 'Service')) throw new Error(`no status to write on ${kind.kind}`);
      await this.#core.patchNamespacedServiceStatus({ name: ref.name, namespace: ref.namespace ?? 'default', body, fieldManager: this.#fieldManager }, mergePatch);
      return;
    }
    const [group, version] = apiVersion.split('/') as [string, string];
    const plural = kind.plural;
    if (ref.namespace === undefined) await this.#custom.patchClusterCustomObjectStatus({ group, version, plural, name: ref.name, body, fieldManager: this.#fieldManager }, mergePatch);
    else await this.#custom.patchNamespacedCustomObjectStatus({ group, version, namespace: ref.namespace, plural, name: ref.name, body, fieldManager: this.#fieldManager }, mergePatch);
  }
}

/** kindOf finds the watched kind (its plural and preferred version) of an object reference. */
function kindOf(ref: ObjectRef): WatchedKind | undefined {
  return WATCHED_KINDS.find((k) => k.kind === ref.kind && apiGroupOf(k.apiVersion) === (ref.group ?? ''));
}

/** objectLookup finds cached objects by the reference a status names (refKey on both sides). */
export function objectLookup(objects: readonly KubernetesObject[]): (ref: ObjectRef) => KubernetesObject | undefined {
  const byKey = new Map(
    objects.map((o) => [refKey({ group: apiGroupOf(o.apiVersion), kind: o.kind ?? '', name: o.metadata?.name ?? '', ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}) }), o]),
  );
  return (ref) => byKey.get(refKey(ref));
}
