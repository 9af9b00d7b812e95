import { Agent, InvalidGraphError } from '../agent/index.js';
import type { TunnelControl } from '../agent/index.js';
import { translateObjects } from '../agent/state.js';
import type { AgentState } from '../agent/state.js';
import type { DataPlane, StaticEndpointResolver } from '../dataplane/index.js';
import type { Binding, RouteGraph } from '../model/index.js';
import { SystemClock, TunnelRefusedError, backoffDelay } from '../tunnel/index.js';
import type { Clock, ClockTimer, EdgeEndpoint, TunnelManager, TunnelSpec } from '../tunnel/index.js';
import { IncrementalTranslation, referencedSecrets, snapshotFromObjects } from '../translate/index.js';
import type { TranslateOptions, TranslationStats } from '../translate/index.js';
import type { AcceptedCertificates } from './accepted-certificates.js';
import { correctReservationStatuses } from './crd-reservation-status.js';
import { emptyCrdReport } from './crd-reservations.js';
import type { KnowsOwnerGone, PendingBinding, ReconcileOptions, ReconcileReport } from './edge-reconciler.js';
import { refusalEvents } from './event-recorder.js';
import type { EventRecorder } from './event-recorder.js';
import { splitDeleting } from './finalizers.js';
import type { FinalizerReport, Finalizers } from './finalizers.js';
import { correctHeldBack } from './held-back.js';
import { CacheNotSyncedError, knowsOwnerGoneFrom } from './object-source.js';
import type { ObjectSource } from './object-source.js';
import type { SecretReader } from './secret-reader.js';
import { correctDataPlanes } from './data-planes.js';
import type { DataPlaneReport, DataPlanes, GatewayObject } from './data-planes.js';
import type { HeldKey } from './tunnel-keys.js';
import { StatusLane } from './status-lane.js';
import type { LaneReport } from './status-lane.js';
import type { StatusWriter, WriteReport } from './status-writer.js';
import { objectLookup } from './status-writer.js';

/** OperatorOptions wire the operator's parts; each is injected so tests can replace it. */
export interface OperatorOptions {
  /** the object cache (KubeObjects); nothing is synced before it has listed every kind */
  objects: ObjectSource;
  dataPlane: DataPlane;
  /** the resolver the data plane reads endpoints from; replaced on every sync */
  endpoints: StaticEndpointResolver;
  tunnels: TunnelControl;
  /**
   * absent: no Secret is read (every terminating listener is InvalidCertificateRef). Present: each
   * sync reads by name the Secrets the cached objects reference (referencedSecrets) and translates
   * them with the cache; a rotated Secret found by its refresh causes a sync.
   */
  secrets?: Pick<SecretReader, 'read' | 'onChange' | 'stop'>;
  /** the data plane's certificate source, given the accepted Secrets' pairs after each sync */
  certificates?: Pick<AcceptedCertificates, 'update'>;
  /** absent: statuses are not written (a replica that is not the leader) */
  writer?: StatusWriter;
  /** absent: the translators' Warning events (and a refused graph's) are not recorded */
  events?: Pick<EventRecorder, 'record' | 'recordRefusal'>;
  /**
   * absent: no finalizer is written. Present (with a reconciler): the leader adds
   * `tuna.dev/reservation` to Domains, TCPPorts and Tunnels, and removes it from deleted ones once
   * the reconciler let go of their reservations (finalizers.ts)
   */
  finalizers?: Pick<Finalizers, 'apply'>;
  /**
   * absent: the tunnel keys come from elsewhere (tests). Present: before the tunnels change, the
   * edge is made to hold a reservation and a key for each binding (EdgeReconciler), and
   * `keyRefOf` tells which key each binding holds, so a new key reconnects its binding.
   */
  reconciler?: { reconcile(graph: AgentState['graph'], knowsOwnerGone?: KnowsOwnerGone, options?: ReconcileOptions): Promise<ReconcileReport> };
  keyRefOf?: (bindingId: string) => string | undefined;
  /**
   * the edge's binding id of a graph binding (default: the same). A dedicated address is named
   * `binding/address/<ns>/<name>` in the graph and `binding/address/<ip>` at the edge, which the
   * reconciler records with its key; the tunnels and the data plane are given the edge's ids.
   */
  edgeIdOf?: (bindingId: string) => string;
  /**
   * absent: this replica writes (one replica). Present: only the leader reconciles the edge and
   * writes statuses and events; the others serve tunnels with the keys the leader stored, which
   * `followKeys` reloads on each of their syncs (and a new leader once, before it reconciles).
   */
  leader?: { isLeader(): boolean; on(event: 'started-leading' | 'stopped-leading', listener: () => void): unknown };
  followKeys?: () => Promise<void>;
  /**
   * absent: no dedicated data plane is run (a Gateway's own pods, a replica that is not the
   * leader). Present: the writer runs the Deployment of every binding marked `dedicated`, with the
   * key `keyOf` names (data-planes.ts), and such a Gateway is `Programmed` only once it is available
   */
  dataPlanes?: Pick<DataPlanes, 'reconcile' | 'forget'>;
  keyOf?: (bindingId: string) => HeldKey | undefined;
  /**
   * while a dedicated data plane is not available, sync again after this long (default 2 s): its
   * Deployment's progress is read at each sync, not watched
   */
  dataPlaneRecheckMs?: number;
  /**
   * the tunnel manager's failed attempts ('tunnel-error'). A key the edge refuses (403 or 401: revoked,
   * its reservation released, unknown there) makes the operator sync again `keyRefusedSyncMs`
   * later, the leader listing what the edge holds (so it reserves and mints again what is gone), a
   * follower reloading the leader's keys; otherwise the refusal would be seen only at the next
   * periodic list of the edge (EdgeReconcilerOptions.resyncMs, ten minutes)
   */
  tunnelErrors?: { on(event: 'tunnel-error', listener: (bindingId: string, err: Error) => void): unknown };
  /**
   * how long after a refused key the operator syncs (default 2 s: refusals of several bindings
   * make one sync); each such sync in a row that changed no binding's key doubles it, up to 60 s
   */
  keyRefusedSyncMs?: number;
  /** absent: the whole graph is served. Present: only what it keeps (a Gateway's own pods keep their Gateway's fragment) */
  select?: (graph: RouteGraph) => RouteGraph;
  translate?: Partial<TranslateOptions>;
  /** called for a failed sync (and for keys that could not be persisted); the next change, or the retry timer, syncs again */
  onError?: (err: unknown) => void;
  /** called after each sync */
  onSynced?: (result: SyncResult) => void;
  /** called after each sync, succeeded or failed, with how long it took on `clock` (the sync duration histogram) */
  onSyncEnded?: (outcome: 'success' | 'failure', durationMs: number) => void;
  /**
   * the first wait before a failed sync is tried again without a change (default 1 s); each
   * failure in a row doubles it up to `retryMaxMs` (default 60 s), with equal jitter (backoffDelay)
   */
  retryMs?: number;
  retryMaxMs?: number;
  /** the clock of the retry and recheck timers (tests pass a fake) */
  clock?: Clock;
  /** random in [0, 1) for the jitter (tests) */
  random?: () => number;
  /**
   * while a custom domain waits for its DNS verification, or a TCP port for a free port of the
   * edge's pool, sync again after this long (default 60 s), so that a domain verified at the edge
   * (`tuna reserve verify`) or a port released there is served without a change in the cluster
   */
  recheckMs?: number;
  /**
   * while a port just asked of a Gateway's address is not reported listening yet, sync again after
   * this long (default 1 s): the edge opens it within milliseconds, and the listener says
   * `Programmed=True` only once it has (the edge's bind failures are retried on `recheckMs`)
   */
  confirmMs?: number;
  /**
   * a sync of the change loop yields to a new change only once its reconcile has run at least this
   * long, and at least as long as the sync's own fixed part took (reading Secrets, translating):
   * otherwise a stream of changes would make every sync pay the whole translation for a few
   * bindings of progress (default 250 ms)
   */
  minSliceMs?: number;
}

/** SyncResult is what one sync did. */
export interface SyncResult {
  /** what was translated, with the statuses as written (held-back bindings taken out) */
  state: AgentState;
  tunnelsChanged: boolean;
  statuses?: WriteReport;
  /** events created by this sync */
  events?: number;
  /** what the dedicated data planes' reconcile did */
  dataPlanes?: DataPlaneReport;
  finalizers?: FinalizerReport;
  edge?: ReconcileReport;
  /** where the sync's time went, in `clock` milliseconds */
  phases: SyncPhases;
  /** how the translation was made (IncrementalTranslation's stats) */
  translation: TranslationStats;
}

/**
 * SyncPhases splits a sync's time: reading the objects and the Secrets they name, translating,
 * validating the graph (both admits), reconciling the edge (reservations and keys), applying the
 * graph (data plane and tunnels, the keys' Secret write it waits for), and the statuses (the
 * corrections, then the lane as long as the sync waits for it).
 */
export interface SyncPhases {
  readMs: number;
  translateMs: number;
  admitMs: number;
  reconcileMs: number;
  applyMs: number;
  statusMs: number;
}

/**
 * Operator is `tuna operator`'s loop: on every change the object cache reports (debounced), it
 * translates the cluster, swaps the data plane's endpoints and graph, asks the tunnels for the
 * graph's bindings (only when they changed: a route change never reconnects), and writes the
 * statuses. Syncs never overlap; changes that arrive during one cause one more after it.
 *
 * Nothing is synced before the cache has listed every watched kind (`hasSynced`): a leader that
 * reconciled an empty cache would release every reservation it holds. Changes and
 * leadership that arrive earlier are dropped; `start` syncs once the cache is complete.
 */
export class Operator {
  readonly #o: OperatorOptions;
  readonly #agent: Agent;
  #running: Promise<void> | undefined;
  #again = false;
  /** the one retry timer (a new one per failure made two failed full syncs a second) */
  #retry: ClockTimer | undefined;
  #recheck: ClockTimer | undefined;
  /** when the recheck timer fires (clock ms) */
  #recheckAt = 0;
  /** failed syncs in a row: the retry's backoff step */
  #failures = 0;
  /** a change arrived since the current sync began: a sync of the change loop yields to it */
  #hasPendingChange = false;
  readonly #clock: Clock;
  #isStopped = false;
  #keySignature = '';
  #wasWriter = false;
  #serial: Promise<unknown> = Promise.resolve();
  /** statuses and events are written here, beside the syncs (status-lane.ts) */
  readonly #lane: StatusLane | undefined;
  /** syncs of the change loop waiting for their statuses, woken by the next change */
  #changeWaiters: (() => void)[] = [];
  /** the last translation, kept so that a sync translates again only what changed (src/translate/incremental.ts) */
  readonly #translation: IncrementalTranslation;
  /** the edge refused a key: the next sync lists the edge again (a leader) */
  #isRefreshDue = false;
  /** the sync after a refused key is waiting (one timer however many refusals) */
  #refusalTimer: ClockTimer | undefined;
  /** that timer fired and its sync has not run yet */
  #isRefusalSync = false;
  /** syncs after refused keys in a row that changed no key: the wait's backoff step */
  #refusalStreak = 0;
  /** when the last sync after a refused key was asked for (clock ms) */
  #lastRefusalAt = -Infinity;

  constructor(options: OperatorOptions) {
    this.#o = options;
    this.#agent = new Agent(options.dataPlane, options.tunnels);
    this.#clock = options.clock ?? new SystemClock();
    this.#translation = new IncrementalTranslation(options.translate);
    if (options.writer || options.events) {
      const lookup = () => objectLookup(splitDeleting(options.objects.objects()).live);
      this.#lane = new StatusLane({ ...(options.writer ? { writer: options.writer } : {}), ...(options.events ? { events: options.events } : {}), lookup });
    }
  }

  /** start fills the cache, syncs once, and follows changes from then on. */
  async start(): Promise<SyncResult> {
    this.#o.objects.onChange(() => this.#schedule());
    this.#o.secrets?.onChange(() => this.#schedule());
    this.#o.tunnelErrors?.on('tunnel-error', (_bindingId, err) => this.#onTunnelError(err));
    this.#o.leader?.on('started-leading', () => this.#schedule());
    this.#o.leader?.on('stopped-leading', () => this.#schedule());
    await this.#o.objects.start();
    const result = await this.sync();
    // the keys are served; persisting them is tried again on the retry timer
    if (result.edge?.persistError !== undefined) {
      this.#o.onError?.(result.edge.persistError);
      this.#retryLater();
    }
    return result;
  }

  /**
   * sync translates and applies the cluster as the cache holds it now. Syncs run one at a time,
   * whoever asks (the change loop, start, a test): two at once would mint two keys for one binding.
   */
  sync(): Promise<SyncResult> {
    return this.#serialSync(false);
  }

  /** serialSync queues one sync behind the others; a `preemptible` one yields to a change that arrives meanwhile. */
  #serialSync(preemptible: boolean): Promise<SyncResult> {
    const next = this.#serial.then(() => this.#timedSync(preemptible));
    this.#serial = next.catch(() => undefined);
    return next;
  }

  /** hasPendingChange is true while a change has arrived that no sync has taken up yet (the queue depth of /metrics). */
  get hasPendingChange(): boolean {
    return this.#hasPendingChange;
  }

  async #timedSync(preemptible: boolean): Promise<SyncResult> {
    const from = this.#clock.now();
    try {
      const result = await this.#syncOnce(preemptible);
      this.#o.onSyncEnded?.('success', this.#clock.now() - from);
      return result;
    } catch (err) {
      this.#o.onSyncEnded?.('failure', this.#clock.now() - from);
      throw err;
    }
  }

  /**
   * syncOnce translates and applies once. A preemptible sync (the change loop's) ends the
   * reconcile early when a change arrives (`deferred`): it serves what is ready, writes no status,
   * and the next sync, at once, takes the bindings it had not seen first, so one new Ingress does
   * not wait behind a batch of thousands (it waited 10.9 s in the scale benchmark).
   */
  async #syncOnce(preemptible: boolean): Promise<SyncResult> {
    this.#hasPendingChange = false;
    const isRefusalSync = this.#isRefusalSync;
    this.#isRefusalSync = false;
    const syncFrom = this.#clock.now();
    if (!this.#o.objects.hasSynced()) throw new CacheNotSyncedError();
    // Domains, TCPPorts and Tunnels being deleted are not translated: the reconciler lets go of what they held
    const { live: objects, deleting } = splitDeleting(this.#o.objects.objects());
    // Secrets are not cached (not watched): the ones the objects name are read now, by name.
    const secrets = this.#o.secrets ? await this.#o.secrets.read(referencedSecrets(snapshotFromObjects(objects).snapshot, this.#o.translate)) : [];
    const clock = this.#clock;
    const phases: SyncPhases = { readMs: clock.now() - syncFrom, translateMs: 0, admitMs: 0, reconcileMs: 0, applyMs: 0, statusMs: 0 };
    let phaseFrom = clock.now();
    const lap = (phase: keyof SyncPhases): void => {
      const now = clock.now();
      phases[phase] += now - phaseFrom;
      phaseFrom = now;
    };
    const translated = translateObjects(secrets.length > 0 ? [...objects, ...secrets] : objects, this.#o.translate, this.#translation);
    const state = this.#o.select ? { ...translated, graph: this.#o.select(translated.graph) } : translated;
    const isWriter = this.#o.leader === undefined || this.#o.leader.isLeader();
    lap('translateMs');
    // before anything acts on the graph (the endpoints, the edge's reservations, the tunnels)
    await this.#admit(state.graph, isWriter, objects);
    lap('admitMs');
    this.#o.endpoints.replace(state.endpoints);
    this.#o.certificates?.update(state.graph, state.certificates);
    // A new leader first reads the keys the last one stored: it may have minted after our last load.
    const isNewLeader = isWriter && this.#o.leader !== undefined && !this.#wasWriter;
    if (!isWriter || isNewLeader) await this.#o.followKeys?.();
    if (isNewLeader) this.#o.dataPlanes?.forget();
    this.#wasWriter = isWriter;
    // a new leader lists the edge again: the last leader may have changed what it holds
    // the reconcile's slice is at least what the sync spent before it, so yielding costs at most half
    const reconcileFrom = this.#clock.now();
    const slice = Math.max(this.#o.minSliceMs ?? 250, reconcileFrom - syncFrom);
    const shouldYield = (): boolean => this.#hasPendingChange && this.#clock.now() - reconcileFrom >= slice;
    // after a refused key the edge is listed again: what it holds changed behind the cache's back
    const refresh = isNewLeader || (isWriter && this.#isRefreshDue);
    if (isWriter) this.#isRefreshDue = false;
    const options: ReconcileOptions = { refresh, releasing: deleting, persistLater: true, ...(preemptible ? { shouldYield } : {}) };
    const edge = isWriter ? await this.#o.reconciler?.reconcile(state.graph, knowsOwnerGoneFrom(this.#o.objects), options) : undefined;
    lap('reconcileMs');
    const served = this.#o.edgeIdOf ? withEdgeIds(state.graph, this.#o.edgeIdOf) : state.graph;
    let tunnelsChanged: boolean;
    try {
      // the edge's ids could collide where the graph's did not: the renamed graph is checked too
      await this.#admit(served, isWriter, objects);
      lap('admitMs');
      ({ tunnelsChanged } = await this.#agent.apply(served));
    } finally {
      // the keys' Secret is written while the new bindings attach (a key is served before it is
      // persisted); the next sync starts only once it is written
      await edge?.persisting;
    }
    if (this.#o.keyRefOf) {
      // A key minted (or re-minted) for an unchanged binding changes no binding: re-apply.
      const keyRefOf = this.#o.keyRefOf;
      const signature = served.bindings.map((b) => `${b.id}=${keyRefOf(b.id) ?? ''}`).join('\n');
      const keysChanged = signature !== this.#keySignature;
      if (!tunnelsChanged && keysChanged) {
        await this.#o.tunnels.apply(served.bindings);
        tunnelsChanged = true;
      }
      this.#keySignature = signature;
      // a sync after a refused key that changed no key backs off the next one
      if (keysChanged) this.#refusalStreak = 0;
      else if (isRefusalSync) this.#refusalStreak++;
    }
    lap('applyMs');
    // Statuses say only what the edge serves: what the reconciler held back is taken out of them.
    const heldBack = edge ? correctHeldBack(correctReservationStatuses(state.statuses, edge.crd), state.graph, edge.pending, edge.addresses, edge.ports) : state.statuses;
    // A dedicated Gateway is served by its own pods: Programmed once they are available.
    const dataPlanes = isWriter && this.#o.dataPlanes && this.#o.keyOf ? await this.#o.dataPlanes.reconcile(state.graph, gatewaysOf(objects), this.#o.keyOf) : undefined;
    const statuses = dataPlanes ? correctDataPlanes(heldBack, dataPlanes.pending) : heldBack;
    if (dataPlanes?.error !== undefined) this.#o.onError?.(dataPlanes.error);
    const result: SyncResult = { state: { ...state, statuses }, tunnelsChanged, phases, translation: this.#translation.stats };
    if (edge) result.edge = edge;
    if (dataPlanes) result.dataPlanes = dataPlanes;
    // a reconcile that yielded did not look at every binding: its statuses would be half true
    const isComplete = (edge?.deferred ?? []).length === 0;
    if (isWriter && isComplete && this.#lane) {
      // A sync of the change loop waits for its statuses only until the next change: then it ends
      // and the next sync starts at once, while the statuses go on being written beside it (a new
      // Ingress no longer waits behind the status PATCHes of a batch).
      const written = this.#lane.submit(statuses);
      const report: LaneReport | undefined = preemptible ? await Promise.race([written, this.#nextChange()]) : await written;
      if (report?.statuses) result.statuses = report.statuses;
      if (report?.events !== undefined) result.events = report.events;
    }
    if (isWriter && isComplete && edge && this.#o.finalizers) result.finalizers = await this.#o.finalizers.apply(objects, deleting, edge.crd ?? emptyCrdReport());
    lap('statusMs');
    this.#o.onSynced?.(result);
    // only the edge knows when a domain is verified, or when a port of its pool is free again
    // and only the edge knows when it listens on a port of an address: it retries a failed one by itself
    const waitsForEdge = (p: PendingBinding): boolean => p.reason === 'DomainNotVerified' || p.reason === 'PortNotAssigned' || p.reason === 'ListenerFailed' || p.reason === 'ListenerPending';
    if (edge?.confirming === true) this.#scheduleRecheck(this.#o.confirmMs ?? 1000);
    else if ((dataPlanes?.pending.length ?? 0) > 0) this.#scheduleRecheck(this.#o.dataPlaneRecheckMs ?? 2000);
    // a port change the edge refused is asked again a minute later (address-bindings.ts REFUSED_RETRY_MS)
    else if (edge?.pending.some(waitsForEdge) || edge?.refusedPorts === true || edge?.crd?.held.some((h) => h.state === 'unverified')) this.#scheduleRecheck();
    return result;
  }

  /**
   * admit refuses a graph that fails validate() (Agent.admit) before anything acts on it, so the
   * last good graph keeps serving: the sync fails with InvalidGraphError (onError's log line names
   * its first problems) and the writer records a Warning (RouteGraphRefused) on the objects they
   * came from, which `kubectl describe` shows.
   */
  async #admit(graph: RouteGraph, isWriter: boolean, objects: Parameters<typeof objectLookup>[0]): Promise<void> {
    try {
      this.#agent.admit(graph);
    } catch (err) {
      if (err instanceof InvalidGraphError && isWriter && this.#o.events) await this.#o.events.recordRefusal(refusalEvents(graph, err.problems), objectLookup(objects));
      throw err;
    }
  }

  /** nextChange settles (undefined) once a change arrives that no sync has taken up yet. */
  #nextChange(): Promise<undefined> {
    if (this.#hasPendingChange || this.#isStopped) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#changeWaiters.push(() => resolve(undefined)));
  }

  #wakeChangeWaiters(): void {
    const waiters = this.#changeWaiters;
    this.#changeWaiters = [];
    for (const w of waiters) w();
  }

  /** statusesWritten settles once every status handed to the lane is written (tests, stop). */
  async statusesWritten(): Promise<void> {
    await this.#lane?.idle();
  }

  /** stop ends the watches and drains the tunnels (in-flight streams finish). */
  async stop(): Promise<void> {
    this.#isStopped = true;
    this.#wakeChangeWaiters();
    if (this.#retry) this.#clock.clearTimeout(this.#retry);
    if (this.#recheck) this.#clock.clearTimeout(this.#recheck);
    if (this.#refusalTimer) this.#clock.clearTimeout(this.#refusalTimer);
    await this.#o.objects.stop();
    await this.#o.secrets?.stop();
    await this.#running?.catch(() => undefined);
    await this.#lane?.idle();
    await this.#agent.close();
  }

  /**
   * onTunnelError hears of a failed tunnel attempt: a key the edge refused (403, 401) asks for a
   * sync that lists the edge again, `keyRefusedSyncMs` later (one timer for every refusal until
   * then), backing off while such syncs change no key (the refusal has another cause).
   */
  #onTunnelError(err: Error): void {
    if (!(err instanceof TunnelRefusedError) || (err.statusCode !== 403 && err.statusCode !== 401)) return;
    if (this.#isStopped || this.#refusalTimer !== undefined) return;
    const baseMs = this.#o.keyRefusedSyncMs ?? 2000;
    const maxMs = Math.max(baseMs, 60_000);
    const now = this.#clock.now();
    // refusals long after the last ones are a new story: no backoff carried over
    if (now - this.#lastRefusalAt > 2 * maxMs) this.#refusalStreak = 0;
    this.#lastRefusalAt = now;
    this.#isRefreshDue = true;
    const delay = Math.min(maxMs, baseMs * 2 ** Math.min(this.#refusalStreak, 16));
    this.#refusalTimer = this.#clock.setTimeout(() => {
      this.#refusalTimer = undefined;
      this.#isRefusalSync = true;
      this.#schedule();
    }, delay);
  }

  /** scheduleRecheck syncs again once `delayMs` (default `recheckMs`) has passed (one timer at a time: a sooner one replaces a later one). */
  #scheduleRecheck(delayMs = this.#o.recheckMs ?? 60_000): void {
    if (this.#isStopped) return;
    const at = this.#clock.now() + delayMs;
    if (this.#recheck !== undefined && this.#recheckAt <= at) return;
    if (this.#recheck !== undefined) this.#clock.clearTimeout(this.#recheck);
    this.#recheckAt = at;
    this.#recheck = this.#clock.setTimeout(() => {
      this.#recheck = undefined;
      this.#schedule();
    }, delayMs);
  }

  #schedule(): void {
    // Before the cache is complete there is nothing to act on; start() syncs once it is.
    if (this.#isStopped || !this.#o.objects.hasSynced()) return;
    this.#hasPendingChange = true;
    this.#wakeChangeWaiters();
    if (this.#running) {
      this.#again = true;
      return;
    }
    // this sync is the retry too: no timer stays behind it
    this.#clearRetry();
    this.#running = this.#serialSync(true)
      .then(
        (result) => {
          // bindings the reconcile did not look at: the next sync goes on with them at once
          if ((result.edge?.deferred ?? []).length > 0) this.#again = true;
          if (result.edge?.persistError === undefined) {
            this.#failures = 0;
            return;
          }
          // the keys are served; persisting them is tried again, backing off like a failed sync
          this.#o.onError?.(result.edge.persistError);
          this.#retryLater();
        },
        (err: unknown) => {
          this.#o.onError?.(err);
          this.#retryLater();
        },
      )
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.#schedule();
        }
      });
  }

  /** retryLater sets the one retry timer, `retryMs` doubled per failure in a row up to `retryMaxMs`, with jitter. */
  #retryLater(): void {
    if (this.#isStopped) return;
    this.#clearRetry();
    const delay = backoffDelay(this.#failures++, { baseMs: this.#o.retryMs ?? 1000, maxMs: this.#o.retryMaxMs ?? 60_000, afterHealthyMs: 0, random: this.#o.random ?? Math.random });
    this.#retry = this.#clock.setTimeout(() => {
      this.#retry = undefined;
      this.#schedule();
    }, delay);
  }

  #clearRetry(): void {
    if (this.#retry === undefined) return;
    this.#clock.clearTimeout(this.#retry);
    this.#retry = undefined;
  }
}

/** gatewaysOf maps the Gateways among the objects by `<namespace>/<name>` (the data planes read their uid and infrastructure). */
function gatewaysOf(objects: readonly { kind?: string; apiVersion?: string; metadata?: { name?: string; namespace?: string } }[]): Map<string, GatewayObject> {
  const map = new Map<string, GatewayObject>();
  for (const o of objects) {
    if (o.kind !== 'Gateway' || !(o.apiVersion ?? '').startsWith('gateway.networking.k8s.io/')) continue;
    map.set(`${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`, o as GatewayObject);
  }
  return map;
}

/** withEdgeIds renames the graph's bindings (and their listeners' references) to the edge's binding ids. */
export function withEdgeIds(graph: RouteGraph, edgeIdOf: (bindingId: string) => string): RouteGraph {
  if (graph.bindings.every((b) => edgeIdOf(b.id) === b.id)) return graph;
  return {
    ...graph,
    bindings: graph.bindings.map((b) => ({ ...b, id: edgeIdOf(b.id) })),
    listeners: graph.listeners.map((l) => ({ ...l, bindingId: edgeIdOf(l.bindingId) })),
  };
}

/**
 * OperatorTunnels adapts the tunnel manager to the operator: every binding gets the edge's
 * endpoints, its connections per edge (its own `connections`, else the operator's) and its own key (the key source maps the reference; the edge reconciler mints and
 * holds those keys). A binding marked `dedicated` is left to its Gateway's own pods (whose
 * OperatorTunnels is made with `holdsDedicated`). Unlike the CLI, `apply` does not wait for
 * connections: the manager keeps trying in the background and reports through its events.
 */
export class OperatorTunnels implements TunnelControl {
  /**
   * `keyRefOf` names the key each binding holds (default: the binding id itself); a binding
   * without one gets no tunnel until it has one.
   */
  constructor(
    private readonly manager: TunnelManager,
    private readonly edges: readonly EdgeEndpoint[],
    private readonly connections = 2,
    private readonly keyRefOf: (bindingId: string) => string | undefined = (id) => id,
    private readonly holdsDedicated = false,
  ) {}

  apply(bindings: readonly Binding[]): Promise<void> {
    const specs: TunnelSpec[] = [];
    for (const b of bindings) {
      // A Gateway with a data plane of its own is served by its pods: the shared replicas leave its tunnels to them.
      if (b.dedicated !== undefined && !this.holdsDedicated) continue;
      const keyRef = this.keyRefOf(b.id);
      // A Gateway's GatewayParameters tunnelConnections (the binding's `connections`) wins over the operator's default.
      if (keyRef !== undefined) specs.push({ bindingId: b.id, edges: [...this.edges], connections: b.connections ?? this.connections, keyRef });
    }
    this.manager.apply(specs);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return this.manager.close();
  }
}
