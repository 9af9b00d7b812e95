import { KubernetesObjectApi, makeInformer } from '@kubernetes/client-node';
import type { Informer, KubeConfig, KubernetesListObject, KubernetesObject, ObjectCache } from '@kubernetes/client-node';
import { apiGroupOf } from '../translate/index.js';

/**
 * WatchedKind is one resource the operator lists and watches: what the translators read
 * (src/translate/snapshot.ts). `optional` kinds come from CRDs that a cluster may not have
 * installed (Gateway API, tuna.dev); their absence is not an error, and they are looked for again
 * later, so installing the CRDs after the operator started works.
 */
export interface WatchedKind {
  apiVersion: string;
  kind: string;
  /** the cluster-wide collection path, e.g. `/api/v1/services` */
  path: string;
  optional: boolean;
}

const core = (kind: string, plural: string): WatchedKind => ({ apiVersion: 'v1', kind, path: `/api/v1/${plural}`, optional: false });
const group = (apiVersion: string, kind: string, plural: string, optional: boolean): WatchedKind => ({ apiVersion, kind, path: `/apis/${apiVersion}/${plural}`, optional });

/**
 * WATCHED_KINDS: everything the translators read, at the versions the API serves them. Secrets are
 * not watched yet: in-cluster TLS termination needs them, and watching every Secret of a cluster
 * needs RBAC tuna should not ask for; the operator will read the Secrets that listeners name.
 */
export const WATCHED_KINDS: readonly WatchedKind[] = [
  core('Namespace', 'namespaces'),
  core('Service', 'services'),
  group('discovery.k8s.io/v1', 'EndpointSlice', 'endpointslices', false),
  group('networking.k8s.io/v1', 'IngressClass', 'ingressclasses', false),
  group('networking.k8s.io/v1', 'Ingress', 'ingresses', false),
  group('gateway.networking.k8s.io/v1', 'GatewayClass', 'gatewayclasses', true),
  group('gateway.networking.k8s.io/v1', 'Gateway', 'gateways', true),
  group('gateway.networking.k8s.io/v1', 'HTTPRoute', 'httproutes', true),
  group('gateway.networking.k8s.io/v1', 'GRPCRoute', 'grpcroutes', true),
  group('gateway.networking.k8s.io/v1alpha2', 'TLSRoute', 'tlsroutes', true),
  group('gateway.networking.k8s.io/v1alpha2', 'TCPRoute', 'tcproutes', true),
  group('gateway.networking.k8s.io/v1beta1', 'ReferenceGrant', 'referencegrants', true),
  group('tuna.dev/v1alpha1', 'Domain', 'domains', true),
  group('tuna.dev/v1alpha1', 'TCPPort', 'tcpports', true),
  group('tuna.dev/v1alpha1', 'Tunnel', 'tunnels', true),
];

/** KubeObjectsOptions tune the cache. */
export interface KubeObjectsOptions {
  kinds?: readonly WatchedKind[];
  /** quiet time after the last change before `onChange` runs (default 100 ms) */
  debounceMs?: number;
  /** wait before a failed watch (or an absent optional kind) is tried again (default 5 s) */
  retryMs?: number;
  /** called for failures worth a log line */
  onError?: (kind: WatchedKind, err: unknown) => void;
}

/** KindState is what the cache knows of one kind. */
type KindState = { informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject> } | { absent: true };


/**
 * KubeObjects keeps every object the translators read, from one informer (list + watch) per
 * kind, and calls `onChange` (debounced) whenever any of them changed. `objects()` returns them
 * as plain objects with their `apiVersion` and `kind`, ready for `snapshotFromObjects`, the same
 * path `tuna run` takes from YAML files.
 */
export class KubeObjects {
  readonly #config: KubeConfig;
  readonly #api: KubernetesObjectApi;
  readonly #kinds: readonly WatchedKind[];
  readonly #debounceMs: number;
  readonly #retryMs: number;
  readonly #onError: (kind: WatchedKind, err: unknown) => void;
  readonly #state = new Map<WatchedKind, KindState>();
  readonly #listeners = new Set<() => void>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #wakers = new Set<() => void>();
  #debounce: NodeJS.Timeout | undefined;
  #isStopped = false;

  constructor(config: KubeConfig, options: KubeObjectsOptions = {}) {
    this.#config = config;
    this.#api = KubernetesObjectApi.makeApiClient(config);
    this.#kinds = options.kinds ?? WATCHED_KINDS;
    this.#debounceMs = options.debounceMs ?? 100;
    this.#retryMs = options.retryMs ?? 5000;
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

  /** objects returns every cached object, stamped with its apiVersion and kind. */
  objects(): KubernetesObject[] {
    const out: KubernetesObject[] = [];
    for (const [kind, state] of this.#state) {
      if ('absent' in state) continue;
      for (const o of state.informer.list()) out.push({ ...o, apiVersion: kind.apiVersion, kind: kind.kind });
    }
    return out;
  }

  /**
   * hasSynced tells whether every kind has been listed or found absent: before that, what the
   * cache lacks says nothing (controller-runtime's WaitForCacheSync; issue 9).
   */
  hasSynced(): boolean {
    return this.#kinds.every((k) => this.#state.has(k));
  }

  /**
   * hasListed tells whether one kind (by API group, '' for core) has been listed and is watched,
   * so that an object of it the cache lacks does not exist. An absent optional kind is not listed.
   */
  hasListed(group: string, kind: string): boolean {
    return [...this.#state].some(([k, s]) => k.kind === kind && apiGroupOf(k.apiVersion) === group && !('absent' in s));
  }

  /** absentKinds names the optional kinds the API does not serve (their CRDs are not installed). */
  absentKinds(): string[] {
    return [...this.#state].filter(([, s]) => 'absent' in s).map(([k]) => `${k.kind}.${k.apiVersion}`);
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
   * startKind lists and watches one kind. Until the first list succeeds it keeps trying every
   * `retryMs`: an apiserver that is starting, or whose storage is re-initialising after a CRD
   * change, answers 429 or 5xx for a while, and an operator must ride that out (as client-go's
   * WaitForCacheSync does), not exit. An optional kind the API does not serve is noted as absent
   * and looked for again later.
   */
  async #startKind(kind: WatchedKind): Promise<void> {
    const list = (): Promise<KubernetesListObject<KubernetesObject>> => this.#api.list(kind.apiVersion, kind.kind);
    for (;;) {
      if (this.#isStopped) return;
      try {
        // The first list is made here, where a failure throws: the informer would only report it
        // and resolve start() with an empty cache, which a leader would take for "nothing exists".
        let first: Promise<KubernetesListObject<KubernetesObject>> | undefined = Promise.resolve(await list());
        const informer = makeInformer(this.#config, kind.path, () => {
          const listed = first ?? list();
          first = undefined;
          return listed;
        });
        for (const verb of ['add', 'update', 'delete'] as const) informer.on(verb, () => this.#changed());
        informer.on('error', (err: unknown) => {
          if (this.#isStopped) return; // our own stop aborts the watch: not an error
          this.#onError(kind, err);
          // the informer stops on an error; it is started again, and a new list brings it up to date
          this.#later(() => void informer.start().catch((e: unknown) => this.#onError(kind, e)));
        });
        await informer.start();
        this.#state.set(kind, { informer });
        return;
      } catch (err) {
        if (kind.optional && isNotServed(err)) {
          this.#state.set(kind, { absent: true });
          this.#later(() => void this.#startKind(kind).then(() => this.#changed(), (e: unknown) => this.#onError(kind, e)));
          return;
        }
        this.#onError(kind, err);
        await this.#sleep();
      }
    }
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

  #later(fn: () => void): void {
    if (this.#isStopped) return;
    const t = setTimeout(() => {
      this.#timers.delete(t);
      if (!this.#isStopped) fn();
    }, this.#retryMs);
    this.#timers.add(t);
  }

  #changed(): void {
    if (this.#isStopped) return;
    if (this.#debounce) clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => {
      this.#debounce = undefined;
      for (const l of this.#listeners) l();
    }, this.#debounceMs);
  }
}

/** isNotServed tells "this API group/version/kind is not installed" from other failures. */
function isNotServed(err: unknown): boolean {
  const e = err as { code?: number; statusCode?: number; message?: string };
  if (e.code === 404 || e.statusCode === 404) return true;
  // KubernetesObjectApi resolves the resource through discovery and throws this when it is absent
  return /Unrecognized API version and kind|not found|could not find/i.test(e.message ?? '');
}
