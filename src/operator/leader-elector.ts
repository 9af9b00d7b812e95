import { EventEmitter } from 'node:events';
import { CoordinationV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1Lease } from '@kubernetes/client-node';

/** LeaderElectorOptions name the Lease and its timing. */
export interface LeaderElectorOptions {
  namespace: string;
  /** the Lease's name (default `tuna-operator`) */
  name?: string;
  /** this replica's identity (its pod name) */
  identity: string;
  /** how long a holder's claim lasts without renewal (default 15 s) */
  leaseDurationSeconds?: number;
  /** how often to renew or try to acquire (default 2 s) */
  retryMs?: number;
  now?: () => Date;
  onError?: (err: unknown) => void;
}

/** LeaderElectorEvents: 'started-leading' when this replica took the Lease, 'stopped-leading' when it lost or released it. */
export type LeaderElectorEvents = {
  'started-leading': [];
  'stopped-leading': [];
};

/**
 * LeaderElector elects one writer among the operator's replicas with a coordination.k8s.io Lease,
 * as client-go's leaderelection does: the holder renews `renewTime` every `retryMs`; another
 * replica takes the Lease over once `renewTime + leaseDurationSeconds` has passed, or at once when
 * the holder released it (empty holder) on a clean shutdown. Updates carry the resourceVersion
 * they read, so two replicas racing for an expired Lease cannot both win. A leader that cannot
 * renew for a whole lease duration steps down before another can take over.
 * Emits 'started-leading' and 'stopped-leading'.
 */
export class LeaderElector extends EventEmitter<LeaderElectorEvents> {
  readonly #api: CoordinationV1Api;
  readonly #o: Required<Omit<LeaderElectorOptions, 'onError' | 'now'>> & Pick<LeaderElectorOptions, 'onError'>;
  readonly #now: () => Date;
  #isLeader = false;
  #lastRenew = 0;
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> = Promise.resolve();
  #isStopped = false;

  constructor(config: KubeConfig, options: LeaderElectorOptions) {
    super();
    this.#api = config.makeApiClient(CoordinationV1Api);
    this.#o = { name: 'tuna-operator', leaseDurationSeconds: 15, retryMs: 2000, ...options };
    this.#now = options.now ?? (() => new Date());
  }

  isLeader(): boolean {
    return this.#isLeader;
  }

  /** start tries at once, then every retryMs. */
  start(): void {
    const loop = (): void => {
      this.#tick = this.#try().catch((err: unknown) => this.#o.onError?.(err));
      void this.#tick.then(() => {
        if (!this.#isStopped) this.#timer = setTimeout(loop, this.#o.retryMs);
      });
    };
    loop();
  }

  /** stop ends the loop and, when leading, releases the Lease so another replica takes over at once. */
  async stop(): Promise<void> {
    this.#isStopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#tick;
    if (!this.#isLeader) return;
    try {
      const lease = await this.#api.readNamespacedLease({ name: this.#o.name, namespace: this.#o.namespace });
      if (lease.spec?.holderIdentity === this.#o.identity) {
        await this.#api.replaceNamespacedLease({ name: this.#o.name, namespace: this.#o.namespace, body: { ...lease, spec: { ...lease.spec, holderIdentity: '' } } });
      }
    } catch (err) {
      this.#o.onError?.(err);
    }
    this.#step(false);
  }

  async #try(): Promise<void> {
    const now = this.#now();
    let lease: V1Lease | undefined;
    try {
      lease = await this.#api.readNamespacedLease({ name: this.#o.name, namespace: this.#o.namespace });
    } catch (err) {
      if ((err as { code?: number }).code !== 404) return this.#failed(err);
    }
    const spec = lease?.spec ?? {};
    const mine = spec.holderIdentity === this.#o.identity;
    const renewedAt = spec.renewTime === undefined ? 0 : new Date(spec.renewTime).getTime();
    const expired = renewedAt + (spec.leaseDurationSeconds ?? this.#o.leaseDurationSeconds) * 1000 < now.getTime();
    const free = spec.holderIdentity === undefined || spec.holderIdentity === '' || expired;
    if (!mine && !free) return this.#step(false);
    const body: V1Lease = {
      metadata: { name: this.#o.name, namespace: this.#o.namespace, ...(lease?.metadata?.resourceVersion ? { resourceVersion: lease.metadata.resourceVersion } : {}) },
      spec: {
        holderIdentity: this.#o.identity,
        leaseDurationSeconds: this.#o.leaseDurationSeconds,
        acquireTime: microTime(mine && spec.acquireTime ? new Date(spec.acquireTime) : now),
        renewTime: microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
      },
    };
    try {
      if (lease === undefined) await this.#api.createNamespacedLease({ namespace: this.#o.namespace, body });
      else await this.#api.replaceNamespacedLease({ name: this.#o.name, namespace: this.#o.namespace, body });
    } catch (err) {
      // 409: another replica wrote the Lease first; it leads
      return this.#failed(err);
    }
    this.#lastRenew = now.getTime();
    this.#step(true);
  }

  #failed(err: unknown): void {
    if ((err as { code?: number }).code !== 409) this.#o.onError?.(err);
    // a leader that could not renew for a whole lease duration must assume another took over
    if (this.#isLeader && this.#now().getTime() - this.#lastRenew >= this.#o.leaseDurationSeconds * 1000) this.#step(false);
  }

  #step(leading: boolean): void {
    if (leading === this.#isLeader) return;
    this.#isLeader = leading;
    this.emit(leading ? 'started-leading' : 'stopped-leading');
  }
}

/**
 * microTime formats a Lease time as metav1.MicroTime: RFC 3339 with exactly six fractional
 * digits, which the API server requires (a Date would be sent with three and refused).
 */
function microTime(date: Date): Date {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') as unknown as Date;
}
