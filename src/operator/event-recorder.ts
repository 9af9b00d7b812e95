import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { ObjectRef, ObjectStatus } from '../model/index.js';

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

  async #create(obj: KubernetesObject, ref: ObjectRef, e: ObjectStatus['events'][number]): Promise<void> {
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
