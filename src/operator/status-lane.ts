import type { KubernetesObject } from '@kubernetes/client-node';
import type { ObjectRef, ObjectStatus } from '../model/index.js';
import type { EventRecorder } from './event-recorder.js';
import type { StatusWriter, WriteReport } from './status-writer.js';

/** StatusLaneOptions are the lane's writers and where it finds the objects as they are now. */
export interface StatusLaneOptions {
  writer?: Pick<StatusWriter, 'write'>;
  events?: Pick<EventRecorder, 'record'>;
  /** the cached objects at the time of writing (a write merges with what each object has then) */
  lookup: () => (ref: ObjectRef) => KubernetesObject | undefined;
}

/** LaneReport is what the write that covered a submission did. */
export interface LaneReport {
  statuses?: WriteReport;
  events?: number;
}

interface Submission {
  statuses: readonly ObjectStatus[];
  waiters: ((report: LaneReport) => void)[];
}

/**
 * StatusLane writes statuses and events beside the syncs instead of inside them (a new
 * Ingress waited behind the status PATCHes of a whole batch before its own sync could start).
 * Each submission is a sync's complete set of statuses, so only the newest matters: a newer one
 * replaces one not yet started, and stops one being written between two PATCHes (what it had not
 * written yet is in the newer set too, as every status of a complete sync is). Writes never
 * overlap, so two syncs' statuses cannot race on one object.
 */
export class StatusLane {
  readonly #o: StatusLaneOptions;
  #next: Submission | undefined;
  #running: Promise<void> | undefined;

  constructor(options: StatusLaneOptions) {
    this.#o = options;
  }

  /** submit queues a complete set of statuses; the promise settles once it, or a newer set, is written. */
  submit(statuses: readonly ObjectStatus[]): Promise<LaneReport> {
    return new Promise((resolve) => {
      const waiters = this.#next?.waiters ?? [];
      waiters.push(resolve);
      this.#next = { statuses, waiters };
      this.#running ??= this.#drain().finally(() => (this.#running = undefined));
    });
  }

  /** idle settles once nothing is queued or being written (stop, tests). */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  /** pending is the set waiting to be written (a method, so the compiler does not assume it unchanged across an await) */
  #pending(): Submission | undefined {
    return this.#next;
  }

  async #drain(): Promise<void> {
    while (this.#next !== undefined) {
      const { statuses, waiters } = this.#next;
      this.#next = undefined;
      const report: LaneReport = {};
      const lookup = this.#o.lookup();
      const superseded = (): boolean => this.#next !== undefined;
      try {
        if (this.#o.writer) report.statuses = await this.#o.writer.write(statuses, lookup, superseded);
        if (this.#o.events && !superseded()) report.events = await this.#o.events.record(statuses, lookup);
      } catch {
        // the writers report each failed call themselves (onError) and never throw; the next set tries again
      }
      const newer = this.#pending();
      if (newer !== undefined) {
        // the newer set covers this one: its waiters learn what that write did
        newer.waiters.push(...waiters);
        continue;
      }
      for (const w of waiters) w(report);
    }
  }
}
