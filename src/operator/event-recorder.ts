import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { problemSources } from '../model/index.js';
import type { ObjectRef, ObjectStatus, RouteGraph, StatusEvent } from '../model/index.js';
import { warning } from '../translate/index.js';
import type { TunaReason } from '../translate/index.js';

/**
 * ROUTE_GRAPH_REFUSED is the reason of the Warning recorded when the operator refuses a route graph
 * that fails validate() (Agent.admit): a tuna reason, as no Gateway API condition covers it.
 */
export const ROUTE_GRAPH_REFUSED = 'RouteGraphRefused' satisfies TunaReason;

/** RefusalEvent is one Warning about a refused graph, on the object one of its problems came from. */
export interface RefusalEvent {
  ref: ObjectRef;
  message: string;
}

/** REFUSAL_EVENTS is how many of a refused graph's problems become events (the log line has them all counted). */
const REFUSAL_EVENTS = 3;

/** refusalEvents turns a refused graph's first problems into Warnings on the objects they came from, one per object. */
export function refusalEvents(graph: RouteGraph, problems: readonly string[]): RefusalEvent[] {
  const sources = problemSources(graph, problems);
  const events: RefusalEvent[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < problems.length && events.length < REFUSAL_EVENTS; i++) {
    const source = sources[i];
    if (source === undefined) continue;
    const ref: ObjectRef = { group: source.group, kind: source.kind, name: source.name, ...(source.namespace === undefined ? {} : { namespace: source.namespace }) };
    const key = `${source.group}/${source.kind}/${source.namespace ?? ''}/${source.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    events.push({ ref, message: `tuna refused the route graph built from the cluster and keeps serving the last good one: ${problems[i]!} (${problems.length} problems in all; see the operator's log)` });
  }
  return events;
}

/** EventRecorderOptions tune the recorder. */
export interface EventRecorderOptions {
  /** `source.component` of the events (default `tuna-operator`) */
  component?: string;
  now?: () => Date;
  onError?: (ref: ObjectRef, err: unknown) => void;
}

/**
 * EventRecorder records the translators' events (a Warning for every problem a user must fix)
 * as core/v1 Events on the objects, so `kubectl describe` shows them next to the object. Each
 * (object uid, type, reason, message) is recorded once per process: a sync that finds the same
 * problem again does not add another event. A fixed problem that comes back is recorded again.
 */
export class EventRecorder {
  readonly #core: CoreV1Api;
  readonly #component: string;
  readonly #now: () => Date;
  readonly #onError: (ref: ObjectRef, err: unknown) => void;
  /** what the last sync reported, per object uid */
  #reported = new Map<string, Set<string>>();
  /** refusals already recorded (uid and message), so a retried sync does not repeat them; bounded */
  readonly #refused = new Set<string>();

  constructor(config: KubeConfig, options: EventRecorderOptions = {}) {
    this.#core = config.makeApiClient(CoreV1Api);
    this.#component = options.component ?? 'tuna-operator';
    this.#now = options.now ?? (() => new Date());
    this.#onError = options.onError ?? (() => undefined);
  }

  /** record creates the events not recorded yet; it returns how many it created. */
  async record(statuses: readonly ObjectStatus[], current: (ref: ObjectRef) => KubernetesObject | undefined): Promise<number> {
    let created = 0;
    const reported = new Map<string, Set<string>>();
    for (const s of statuses) {
      const obj = current(s.ref);
      const uid = obj?.metadata?.uid;
      if (obj === undefined || uid === undefined || s.events.length === 0) continue;
      const seen = this.#reported.get(uid) ?? new Set<string>();
      const now = reported.get(uid) ?? new Set<string>();
      reported.set(uid, now);
      for (const e of s.events) {
        const key = `${e.type}\u0000${e.reason}\u0000${e.message}`;
        now.add(key);
        if (seen.has(key)) continue;
        try {
          await this.#create(obj, s.ref, e);
          created++;
        } catch (err) {
          now.delete(key); // try again next time
          this.#onError(s.ref, err);
        }
      }
    }
    this.#reported = reported;
    return created;
  }

  /**
   * recordRefusal records a ROUTE_GRAPH_REFUSED Warning on each object once per process and
   * message. It is apart from `record`, whose per-sync memory a refused sync must not reset (the
   * translators' events would be recorded again on the next good sync). It returns how many it created.
   */
  async recordRefusal(events: readonly RefusalEvent[], current: (ref: ObjectRef) => KubernetesObject | undefined): Promise<number> {
    let created = 0;
    if (this.#refused.size > 1000) this.#refused.clear();
    for (const e of events) {
      const obj = current(e.ref);
      const key = `${obj?.metadata?.uid ?? ''}\u0000${e.message}`;
      if (obj === undefined || this.#refused.has(key)) continue;
      try {
        await this.#create(obj, e.ref, warning(ROUTE_GRAPH_REFUSED, e.message));
        this.#refused.add(key);
        created++;
      } catch (err) {
        this.#onError(e.ref, err);
      }
    }
    return created;
  }

  /**
   * post creates one Event on the object, without the memory of `record` (for an event its caller
   * makes once, as the finalizer's of a retained reservation); it throws when the write fails.
   */
  async post(obj: KubernetesObject, ref: ObjectRef, e: StatusEvent): Promise<void> {
    await this.#create(obj, ref, e);
  }

  /** create writes a core/v1 Event (what `kubectl describe` shows), the one body every Event of the operator has. */
  async #create(obj: KubernetesObject, ref: ObjectRef, e: StatusEvent): Promise<void> {
    const time = this.#now();
    const namespace = ref.namespace ?? 'default';
    await this.#core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { generateName: `${ref.name}.`, namespace },
        involvedObject: { apiVersion: obj.apiVersion, kind: ref.kind, name: ref.name, namespace: ref.namespace, uid: obj.metadata?.uid },
        type: e.type,
        reason: e.reason,
        message: e.message,
        source: { component: this.#component },
        reportingComponent: this.#component,
        reportingInstance: this.#component,
        firstTimestamp: time,
        lastTimestamp: time,
        count: 1,
      },
    });
  }
}
