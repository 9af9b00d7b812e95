import { KubernetesObjectApi, makeInformer } from '@kubernetes/client-node';
import type { Informer, KubeConfig, KubernetesListObject, KubernetesObject, ObjectCache } from '@kubernetes/client-node';
import { KINDS } from '../translate/index.js';
import type { KindEntry, KindName } from '../translate/index.js';
import { SpecChanges } from './spec-changes.js';
import { isConfigMapKind, isNamedByPolicy, keepOnlyCaBundle } from './ca-bundle-configmaps.js';

/**
 * WatchedKind is one resource the operator lists and watches: a watched row of the table of kinds
 * (src/translate/kinds.ts). `optional` kinds come from CRDs that a cluster may not have installed
 * (Gateway API, tuna.dev); their absence is not an error, and they are looked for again later, so
 * installing the CRDs after the operator started works. A kind with several `versions` is watched at
 * the first one the API serves (API discovery), and moved to a more preferred one once it is served.
 */
export interface WatchedKind {
  kind: string;
  group: string;
  plural: string;
  /** versions in order of preference */
  versions: readonly [string, ...string[]];
  /** the most preferred apiVersion (`group/version`, or `v1` for the core group) */
  apiVersion: string;
  /** the cluster-wide collection path at the most preferred version, e.g. `/api/v1/services` */
  path: string;
  optional: boolean;
}

/** apiVersionAt is the apiVersion of a kind at one of its versions. */
export function apiVersionAt(kind: Pick<WatchedKind, 'group'>, version: string): string {
  return kind.group === '' ? version : `${kind.group}/${version}`;
}

/** collectionPath is the cluster-wide collection path of a kind at one of its versions. */
export function collectionPath(kind: Pick<WatchedKind, 'group' | 'plural'>, version: string): string {
  return `${kind.group === '' ? '/api' : '/apis'}/${apiVersionAt(kind, version)}/${kind.plural}`;
}

/** watchedKind makes the WatchedKind of a table row. */
function watchedKind(row: KindEntry): WatchedKind {
  const preferred = row.versions[0];
  return { kind: row.kind, group: row.group, plural: row.plural, versions: row.versions, apiVersion: apiVersionAt(row, preferred), path: collectionPath(row, preferred), optional: row.optional };
}

/** WATCHED_KINDS: every row of the table of kinds the operator watches (not Secrets: see KINDS). */
export const WATCHED_KINDS: readonly WatchedKind[] = KINDS.filter((k) => k.watched).map(watchedKind);

/**
 * ApiDiscovery answers whether the API serves a kind at an apiVersion, from the apiserver's
 * discovery document of that group version (`/apis/<group>/<version>`), which lists the resources
 * served there. A group version the API does not serve at all answers false, not an error.
 */
export interface ApiDiscovery {
  isServed(apiVersion: string, kind: string): Promise<boolean>;
}

/**
 * ObjectApiDiscovery asks the apiserver with the client's own discovery request, fresh each time:
 * the answer changes when CRDs are installed, upgraded or removed.
 */
class ObjectApiDiscovery extends KubernetesObjectApi implements ApiDiscovery {
  async isServed(apiVersion: string, kind: string): Promise<boolean> {
    this.apiVersionResourceCache = {};
    try {
      return (await this.resource(apiVersion, kind)) !== undefined;
    } catch (err) {
      if (isNotServed(err)) return false;
      throw err;
    }
  }
}

/**
 * chooseVersion returns the first of a kind's versions (in order of preference) that the API
 * serves, or undefined when it serves none. A kind with one version is not asked about: listing it
 * tells (as before there were several versions).
 */
export async function chooseVersion(kind: WatchedKind, discovery: ApiDiscovery): Promise<string | undefined> {
  if (kind.versions.length === 1) return kind.versions[0];
  for (const version of kind.versions) if (await discovery.isServed(apiVersionAt(kind, version), kind.kind)) return version;
  return undefined;
}

/** KubeObjectsOptions tune the cache. */
export interface KubeObjectsOptions {
  kinds?: readonly WatchedKind[];
  /**
   * quiet time after the last change before `onChange` runs (default 100 ms); the first change
   * after such a quiet spell is reported at once
   */
  debounceMs?: number;
  /** longest a change waits for quiet: under a steady stream of changes `onChange` still runs this often (default 1 s) */
  maxWaitMs?: number;
  /** wait before a failed watch, an absent optional kind or a less preferred version is tried again (default 5 s) */
  retryMs?: number;
  /**
   * an optional kind found absent again and again is looked for after `retryMs`, doubled per absence
   * in a row up to this (default `retryMs`: no backoff). `tuna operator` passes 60 s: a cluster
   * without the Gateway API or tuna.dev CRDs then costs 11 discovery calls a minute, not 132, and
   * a CRD installed later is picked up within a minute (the retries were the idle operator's CPU).
   */
  absentRetryMaxMs?: number;
  /** called for failures worth a log line */
  onError?: (kind: WatchedKind, err: unknown) => void;
  /** which versions the API serves (default: the apiserver's discovery; tests pass a fake) */
  discovery?: ApiDiscovery;
}

type CachedInformer = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

/** KindState is what the cache knows of one kind: watched at one version, or absent. */
type KindState = { version: string; informer: CachedInformer } | { absent: true };

/**
 * KubeObjects keeps every object the translators read, from one informer (list + watch) per
 * kind, and calls `onChange` (debounced) whenever any of them changed. `objects()` returns them
 * as plain objects with their `apiVersion` (the version watched) and `kind`, ready for
 * `snapshotFromObjects`, the same path `tuna run` takes from YAML files.
 */
export class KubeObjects {
  readonly #config: KubeConfig;
  readonly #api: KubernetesObjectApi;
  readonly #discovery: ApiDiscovery;
  readonly #kinds: readonly WatchedKind[];
  readonly #debounceMs: number;
  readonly #retryMs: number;
  readonly #absentRetryMaxMs: number;
  /** how many times in a row each optional kind was found absent */
  readonly #absences = new Map<WatchedKind, number>();
  readonly #onError: (kind: WatchedKind, err: unknown) => void;
  readonly #state = new Map<WatchedKind, KindState>();
  readonly #listeners = new Set<() => void>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #wakers = new Set<() => void>();
  /** kinds with a recheck scheduled, and those whose recheck must restart a stopped informer */
  readonly #rechecks = new Set<WatchedKind>();
  readonly #restartOnRecheck = new Set<WatchedKind>();
  /** informers replaced by one at another version: their late errors are not acted on */
  readonly #retired = new WeakSet<CachedInformer>();
  #debounce: NodeJS.Timeout | undefined;
  /** when the first change not yet reported arrived (performance.now()) */
  #pendingSince: number | undefined;
  /** when changes were last reported (performance.now()); a change after `debounceMs` of quiet is reported at once */
  #lastReport = -Infinity;
  /** the pending report is a leading one (a change after quiet, reported on the next turn) */
  #isLeading = false;
  readonly #maxWaitMs: number;
  /** status-only updates (tuna's own status writes coming back) are not changes */
  readonly #specChanges = new SpecChanges();
  #isStopped = false;

  constructor(config: KubeConfig, options: KubeObjectsOptions = {}) {
    this.#config = config;
    this.#api = KubernetesObjectApi.makeApiClient(config);
    this.#discovery = options.discovery ?? config.makeApiClient(ObjectApiDiscovery);
    this.#kinds = options.kinds ?? WATCHED_KINDS;
    this.#debounceMs = options.debounceMs ?? 100;
    this.#maxWaitMs = options.maxWaitMs ?? 1000;
    this.#retryMs = options.retryMs ?? 5000;
    this.#absentRetryMaxMs = Math.max(this.#retryMs, options.absentRetryMaxMs ?? this.#retryMs);
    this.#onError = options.onError ?? (() => undefined);
  }

  /** onChange registers a callback for "some object changed" (after the debounce). */
  onChange(callback: () => void): void {
    this.#listeners.add(callback);
  }

  /**
   * start lists every kind and starts watching; it resolves once each required kind has been
   * listed and each optional kind listed or found absent, so the first `objects()` is complete.
   */
  async start(): Promise<void> {
    await Promise.all(this.#kinds.map((kind) => this.#startKind(kind)));
  }

  /** listOf returns the cached objects of one watched kind by name (none while it is absent). */
  #listOf(kindName: KindName): readonly KubernetesObject[] {
    for (const [kind, state] of this.#state) if (kind.kind === kindName && !('absent' in state)) return state.informer.list();
    return [];
  }

  /** objects returns every cached object, stamped with the apiVersion it is watched at and its kind. */
  objects(): KubernetesObject[] {
    const out: KubernetesObject[] = [];
    for (const [kind, state] of this.#state) {
      if ('absent' in state) continue;
      const apiVersion = apiVersionAt(kind, state.version);
      for (const o of state.informer.list()) out.push({ ...o, apiVersion, kind: kind.kind });
    }
    return out;
  }

  /** watchedVersions maps each watched kind's name to the apiVersion it is watched at. */
  watchedVersions(): Map<string, string> {
    const out = new Map<string, string>();
    for (const [kind, state] of this.#state) if (!('absent' in state)) out.set(kind.kind, apiVersionAt(kind, state.version));
    return out;
  }

  /**
   * hasSynced tells whether every kind has been listed or found absent: before that, what the
   * cache lacks says nothing (controller-runtime's WaitForCacheSync).
   */
  hasSynced(): boolean {
    return this.#kinds.every((k) => this.#state.has(k));
  }

  /**
   * hasListed tells whether one kind (by API group, '' for core) has been listed and is watched,
   * so that an object of it the cache lacks does not exist. An absent optional kind is not listed.
   */
  hasListed(group: string, kind: string): boolean {
    return [...this.#state].some(([k, s]) => k.kind === kind && k.group === group && !('absent' in s));
  }

  /** absentKinds names the optional kinds the API does not serve (their CRDs are not installed). */
  absentKinds(): string[] {
    return [...this.#state].filter(([, s]) => 'absent' in s).map(([k]) => `${k.kind}.${apiVersionAt(k, k.versions.join(','))}`);
  }

  /** stop ends every watch and timer. */
  async stop(): Promise<void> {
    this.#isStopped = true;
    if (this.#debounce) clearTimeout(this.#debounce);
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    for (const wake of this.#wakers) wake();
    this.#wakers.clear();
    await Promise.all([...this.#state.values()].map((s) => ('absent' in s ? undefined : s.informer.stop())));
  }

  /**
   * startKind lists and watches one kind at the first of its versions the API serves. Until the
   * first list succeeds it keeps trying every `retryMs`: an apiserver that is starting, or whose
   * storage is re-initialising after a CRD change, answers 429 or 5xx for a while, and an operator
   * must ride that out (as client-go's WaitForCacheSync does), not exit. An optional kind the API
   * does not serve is noted as absent and looked for again later.
   */
  async #startKind(kind: WatchedKind): Promise<void> {
    for (;;) {
      if (this.#isStopped) return;
      try {
        const version = await chooseVersion(kind, this.#discovery);
        if (version === undefined) throw new NotServedError(kind);
        const informer = await this.#openInformer(kind, version);
        if (this.#isStopped) {
          await informer.stop();
          return;
        }
        this.#state.set(kind, { version, informer });
        this.#absences.delete(kind);
        if (version !== kind.versions[0]) this.#scheduleRecheck(kind);
        return;
      } catch (err) {
        if (kind.optional && isNotServed(err)) {
          this.#state.set(kind, { absent: true });
          const absences = this.#absences.get(kind) ?? 0;
          this.#absences.set(kind, absences + 1);
          // looked for again later, less often while it stays absent; only its arrival is a change:
          // a kind that stays absent changed nothing, and reporting it every `retryMs` re-synced
          // everything
          const wait = Math.min(this.#absentRetryMaxMs, this.#retryMs * 2 ** Math.min(absences, 20));
          this.#later(() => void this.#startKind(kind).then(() => (this.#isAbsent(kind) ? undefined : this.#changed()), (e: unknown) => this.#onError(kind, e)), wait);
          return;
        }
        this.#onError(kind, err);
        await this.#sleep();
      }
    }
  }

  /** openInformer lists one kind at one version and starts its watch. */
  async #openInformer(kind: WatchedKind, version: string): Promise<CachedInformer> {
    const apiVersion = apiVersionAt(kind, version);
    const list = (): Promise<KubernetesListObject<KubernetesObject>> => this.#api.list(apiVersion, kind.kind);
    // The first list is made here, where a failure throws: the informer would only report it
    // and resolve start() with an empty cache, which a leader would take for "nothing exists".
    let first: Promise<KubernetesListObject<KubernetesObject>> | undefined = Promise.resolve(await list());
    const informer = makeInformer(this.#config, collectionPath(kind, version), () => {
      const listed = first ?? list();
      first = undefined;
      return listed;
    });
    for (const verb of ['add', 'update', 'delete'] as const)
      informer.on(verb, (obj: KubernetesObject) => {
        // nothing of tuna reads managedFields, which are often larger than the rest of the object:
        // the cached object (the informer hands its own) drops them, as controller-runtime's
        // TransformStripManagedFields does (they were much of the memory per host)
        if (obj.metadata?.managedFields !== undefined) delete obj.metadata.managedFields;
        if (isConfigMapKind(kind)) {
          keepOnlyCaBundle(obj);
          if (!isNamedByPolicy(obj, this.#listOf('BackendTLSPolicy'), this.#listOf('RoutePolicy'))) return;
        }
        if (this.#specChanges.isChange(kind, verb, obj)) this.#changed();
      });
    informer.on('error', (err: unknown) => {
      if (this.#isStopped) return; // our own stop aborts the watch: not an error
      if (this.#retired.has(informer)) return;
      this.#onError(kind, err);
      // the informer stops on an error; it is started again (a new list brings it up to date), or,
      // for a kind with several versions, moved to the version the API serves now
      if (kind.versions.length > 1) this.#scheduleRecheck(kind, true);
      else this.#later(() => void informer.start().catch((e: unknown) => this.#onError(kind, e)));
    });
    await informer.start();
    return informer;
  }

  /** scheduleRecheck runs `recheck` after `retryMs`, once per kind however often it is asked for. */
  #scheduleRecheck(kind: WatchedKind, afterError = false): void {
    if (afterError) this.#restartOnRecheck.add(kind);
    if (this.#rechecks.has(kind)) return;
    this.#rechecks.add(kind);
    this.#later(() => {
      this.#rechecks.delete(kind);
      const restart = this.#restartOnRecheck.delete(kind);
      this.#recheck(kind, restart).catch((err: unknown) => {
        this.#onError(kind, err);
        this.#scheduleRecheck(kind, restart);
      });
    });
  }

  /**
   * recheck asks discovery again for a kind with several versions: watched at a less preferred
   * version, it moves once a more preferred one is served (a CRD upgrade); after a watch error
   * (`restart`) it moves to whatever is served now (a version no longer served), restarts the same
   * version, or marks the kind absent. The new informer is listed before the old one stops, so no
   * sync sees the kind empty meanwhile.
   */
  async #recheck(kind: WatchedKind, restart: boolean): Promise<void> {
    const state = this.#state.get(kind);
    if (this.#isStopped || state === undefined || 'absent' in state) return;
    const version = await chooseVersion(kind, this.#discovery);
    if (this.#isStopped || this.#state.get(kind) !== state) return;
    if (version === state.version) {
      if (restart) await state.informer.start();
      if (version !== kind.versions[0]) this.#scheduleRecheck(kind);
      return;
    }
    if (version === undefined) {
      this.#retired.add(state.informer);
      await state.informer.stop();
      this.#state.delete(kind);
      await this.#startKind(kind);
      this.#changed();
      return;
    }
    const informer = await this.#openInformer(kind, version);
    if (this.#isStopped || this.#state.get(kind) !== state) {
      this.#retired.add(informer);
      await informer.stop();
      return;
    }
    this.#state.set(kind, { version, informer });
    this.#retired.add(state.informer);
    await state.informer.stop();
    if (version !== kind.versions[0]) this.#scheduleRecheck(kind);
    this.#changed();
  }

  /** isAbsent tells whether a kind is noted as not served. */
  #isAbsent(kind: WatchedKind): boolean {
    const state = this.#state.get(kind);
    return state !== undefined && 'absent' in state;
  }

  /** sleep waits `retryMs`, or until stop(). */
  #sleep(): Promise<void> {
    return new Promise((resolve) => {
      this.#wakers.add(resolve);
      this.#later(() => {
        this.#wakers.delete(resolve);
        resolve();
      });
    });
  }

  #later(fn: () => void, ms = this.#retryMs): void {
    if (this.#isStopped) return;
    const t = setTimeout(() => {
      this.#timers.delete(t);
      if (!this.#isStopped) fn();
    }, ms);
    this.#timers.add(t);
  }

  #changed(): void {
    if (this.#isStopped) return;
    const now = performance.now();
    // After a quiet spell the first change is reported at once, on the next turn (so the events
    // of one read still make one report): a lone new Ingress does not wait out the debounce. What
    // follows it within `debounceMs` is debounced as before.
    if (this.#debounce === undefined && now - this.#lastReport >= this.#debounceMs) {
      this.#isLeading = true;
      this.#debounce = setTimeout(() => this.#report(), 0);
      return;
    }
    // the leading report has not run yet: it will see this change too
    if (this.#isLeading) return;
    this.#pendingSince ??= now;
    // a steady stream of changes never leaves `debounceMs` of quiet: after `maxWaitMs` the timer runs out as set
    const left = this.#pendingSince + this.#maxWaitMs - now;
    if (this.#debounce) {
      if (left <= 0) return;
      clearTimeout(this.#debounce);
    }
    this.#debounce = setTimeout(() => this.#report(), Math.max(0, Math.min(this.#debounceMs, left)));
  }

  #report(): void {
    this.#debounce = undefined;
    this.#isLeading = false;
    this.#pendingSince = undefined;
    this.#lastReport = performance.now();
    for (const l of this.#listeners) l();
  }
}

/** NotServedError says that the API serves a kind at none of its versions. */
class NotServedError extends Error {
  readonly code = 404;
  constructor(kind: WatchedKind) {
    super(`${kind.kind} is not served at ${kind.versions.map((v) => apiVersionAt(kind, v)).join(' or ')}`);
    this.name = 'NotServedError';
  }
}

/** isNotServed tells "this API group/version/kind is not installed" from other failures. */
function isNotServed(err: unknown): boolean {
  const e = err as { code?: number; statusCode?: number; message?: string };
  if (e.code === 404 || e.statusCode === 404) return true;
  // KubernetesObjectApi resolves the resource through discovery and throws this when it is absent
  return /Unrecognized API version and kind|not found|could not find/i.test(e.message ?? '');
}
