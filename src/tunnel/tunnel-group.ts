import { EventEmitter } from 'node:events';
import { backoffDelay, healthyReconnectDelay } from './backoff.js';
import type { BackoffOptions } from './backoff.js';
import type { Clock, ClockTimer } from './clock.js';
import type { EdgeDialer, EdgeEndpoint } from './dialer.js';
import { edgeEndpointKey } from './dialer.js';
import type { TunnelKeySource } from './key-source.js';
import type { TunnelManagerOptions, TunnelSpec } from './manager-options.js';
import { TunnelSession } from './session.js';
import type { TunnelLink } from './session.js';
import type { SharedConnectionPool } from './shared-pool.js';
import type { EdgeWorker, TunnelStreamHandler } from '../wire/index.js';

/** GroupDeps are what a group needs from its manager. */
export interface GroupDeps {
  dialer: EdgeDialer;
  clock: Clock;
  handler: TunnelStreamHandler;
  keys: TunnelKeySource;
  options: TunnelManagerOptions;
  backoff: BackoffOptions;
  /** set when bindings share connections (protocol version 2): slots attach to the pool's connections */
  pool?: SharedConnectionPool;
}

/** specIdentity is what decides whether a spec change needs new connections: edges and key, not the count. */
export function specIdentity(spec: TunnelSpec): string {
  return JSON.stringify([spec.keyRef, spec.edges.map(edgeEndpointKey).sort()]);
}

/**
 * TunnelSlot keeps one connection to one edge up: connect, and when it ends reconnect after a
 * jittered backoff (a quick one if the connection had been healthy).
 */
class TunnelSlot {
  session: TunnelLink | undefined;
  lastError: Error | undefined;
  #attempt = 0;
  #timer: ClockTimer | undefined;
  #isStopped = false;
  /** a connection of this slot has been open before: the next one to open is a reconnect */
  #hasOpened = false;
  readonly #group: TunnelGroup;
  readonly #edge: EdgeEndpoint;
  readonly #index: number;

  constructor(group: TunnelGroup, edge: EdgeEndpoint, index: number) {
    this.#group = group;
    this.#edge = edge;
    this.#index = index;
  }

  start(): void {
    void this.#connect();
  }

  async #connect(): Promise<void> {
    this.#timer = undefined;
    if (this.#isStopped) return;
    const deps = this.#group.deps;
    let key: string;
    try {
      key = await this.#group.key();
    } catch (err) {
      this.#fail(err as Error, false);
      return;
    }
    if (this.#isStopped) return;
    const { options } = deps;
    const bindingId = this.#group.spec.bindingId;
    // An edge that predates shared connections answers their upgrade 400: its bindings get connections of their own.
    const pool = deps.pool !== undefined && !deps.pool.isOneBindingEdge(this.#edge) ? deps.pool : undefined;
    const wantWorker = pool === undefined ? this.#group.workerFor(this.#edge, this.#index) : undefined;
    const session: TunnelLink = pool !== undefined ? pool.attach(this.#edge, this.#index, bindingId, key) : new TunnelSession({
      edge: this.#edge,
      bindingId,
      key,
      ...(wantWorker !== undefined ? { wantWorker } : {}),
      dialer: deps.dialer,
      clock: deps.clock,
      handler: deps.handler,
      ...(options.limits !== undefined ? { limits: options.limits } : {}),
      ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
      ...(options.pingTimeoutMs !== undefined ? { pingTimeoutMs: options.pingTimeoutMs } : {}),
      ...(options.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: options.handshakeTimeoutMs } : {}),
      ...(options.drainTimeoutMs !== undefined ? { drainTimeoutMs: options.drainTimeoutMs } : {}),
    });
    this.session = session;
    let wasOpen = false;
    session.once('open', () => {
      wasOpen = true;
      if (session instanceof TunnelSession) this.#group.learnWorker(this.#edge, session.edgeWorker);
      this.#attempt = 0;
      this.lastError = undefined;
      this.#group.emit('open', session);
      if (this.#hasOpened) this.#group.emit('reconnected', session);
      this.#hasOpened = true;
    });
    // the edge draining (GOAWAY) means this connection takes no new streams: open its successor now.
    session.once('draining', () => {
      if (this.session === session && !this.#isStopped) {
        this.session = undefined;
        this.#schedule(healthyReconnectDelay(deps.backoff));
      }
    });
    session.once('close', (err: Error | undefined) => {
      if (this.session !== session) return;
      this.session = undefined;
      if (pool !== undefined && !wasOpen && pool.isOneBindingEdge(this.#edge)) return this.#schedule(0);
      if (err !== undefined && !wasOpen) return this.#fail(err, true);
      if (err !== undefined) this.lastError = err;
      if (!this.#isStopped) this.#schedule(healthyReconnectDelay(deps.backoff));
    });
    session.connect().catch(() => {
      // reported through 'close'
    });
  }

  #fail(err: Error, isConnectFailure: boolean): void {
    this.lastError = err;
    this.#group.emit('tunnel-error', err, isConnectFailure);
    if (!this.#isStopped) this.#schedule(backoffDelay(this.#attempt++, this.#group.deps.backoff));
  }

  #schedule(ms: number): void {
    if (this.#timer !== undefined) return;
    this.#timer = this.#group.deps.clock.setTimeout(() => void this.#connect(), ms);
  }

  /** stop ends the slot: drain its connection gracefully, or destroy it. */
  stop(graceful: boolean): Promise<void> {
    this.#isStopped = true;
    if (this.#timer !== undefined) this.#group.deps.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    const session = this.session;
    this.session = undefined;
    if (session === undefined) return Promise.resolve();
    if (graceful) return session.close();
    session.destroy();
    return session.closed();
  }
}

/** TunnelGroupEvents are a TunnelGroup's events (its doc comment says when each fires). */
export type TunnelGroupEvents = {
  open: [session: TunnelLink];
  reconnected: [session: TunnelLink];
  'tunnel-error': [err: Error, isConnectFailure: boolean];
};

/**
 * TunnelGroup holds the connections of one binding for one (key, edges) identity: `connections`
 * slots per edge. A key or edge change creates a new group next to this one (make-before-break).
 * Emits 'open' (session), 'reconnected' (session: an open that replaces an earlier connection of
 * the same slot, after a loss or an edge's GOAWAY) and 'tunnel-error' (err, isConnectFailure).
 */
export class TunnelGroup extends EventEmitter<TunnelGroupEvents> {
  readonly identity: string;
  spec: TunnelSpec;
  readonly deps: GroupDeps;
  readonly #slots = new Map<string, TunnelSlot[]>();
  /** version 1 connections to an edge of several workers: how many, and the worker the first reached (docs/protocol.md §9.8) */
  readonly #workers = new Map<string, { count: number; first: number }>();
  #key: Promise<string> | undefined;

  constructor(spec: TunnelSpec, deps: GroupDeps) {
    super();
    this.spec = spec;
    this.deps = deps;
    this.identity = specIdentity(spec);
  }

  /** key resolves the tunnel key once per group; a failed lookup is retried next time. */
  key(): Promise<string> {
    this.#key ??= this.deps.keys.resolveKey(this.spec.bindingId, this.spec.keyRef).catch((err: unknown) => {
      this.#key = undefined;
      throw err;
    });
    return this.#key;
  }

  /** start opens every slot. */
  start(): void {
    this.resize(this.spec);
  }

  /** resize adjusts the number of connections per edge without touching the ones that stay. */
  resize(spec: TunnelSpec): void {
    this.spec = spec;
    for (const edge of spec.edges) {
      // an edge of several worker processes: the connections to each worker (docs/protocol.md §9.8)
      const id = edgeEndpointKey(edge);
      const want = this.#wantedOn(edge);
      const slots = this.#slots.get(id) ?? [];
      this.#slots.set(id, slots);
      while (slots.length < want) {
        const slot = new TunnelSlot(this, edge, slots.length);
        slots.push(slot);
        slot.start();
      }
      while (slots.length > want) void slots.pop()!.stop(true);
    }
  }

  /** wanted is how many connections the group keeps: `connections` per edge, times the edge's workers. */
  wanted(): number {
    return this.spec.edges.reduce((n, edge) => n + this.#wantedOn(edge), 0);
  }

  #wantedOn(edge: EdgeEndpoint): number {
    const workers = Math.max(this.deps.pool?.workersOf(edge) ?? 1, this.#workers.get(edgeEndpointKey(edge))?.count ?? 1);
    return Math.max(1, this.spec.connections ?? 1) * workers;
  }

  /** workerFor is the edge worker a version 1 connection at `position` must reach (undefined: any, the count not known yet). */
  workerFor(edge: EdgeEndpoint, position: number): number | undefined {
    const workers = this.#workers.get(edgeEndpointKey(edge));
    return workers === undefined ? undefined : (workers.first + position) % workers.count;
  }

  /** learnWorker hears which worker a version 1 connection reached; a new worker count resizes the slots to one per worker. */
  learnWorker(edge: EdgeEndpoint, reached: EdgeWorker | undefined): void {
    if (reached === undefined || reached.count <= 1) return;
    const id = edgeEndpointKey(edge);
    if (this.#workers.get(id)?.count === reached.count) return;
    this.#workers.set(id, { count: reached.count, first: reached.index });
    if (this.#slots.size > 0) this.resize(this.spec);
  }

  /** sessions lists the open sessions (one-binding connections, or attachments to shared ones). */
  sessions(): TunnelLink[] {
    const out: TunnelLink[] = [];
    for (const slots of this.#slots.values()) for (const s of slots) if (s.session?.state === 'open') out.push(s.session);
    return out;
  }

  /** lastError is the most recent failure of any slot still failing. */
  lastError(): Error | undefined {
    for (const slots of this.#slots.values()) for (const s of slots) if (s.lastError !== undefined) return s.lastError;
    return undefined;
  }

  /** whenOpen resolves true once a connection is open, or false after ms. */
  whenOpen(ms: number): Promise<boolean> {
    if (this.sessions().length > 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = this.deps.clock.setTimeout(() => {
        this.off('open', onOpen);
        resolve(false);
      }, ms);
      const onOpen = (): void => {
        this.deps.clock.clearTimeout(timer);
        resolve(true);
      };
      this.once('open', onOpen);
    });
  }

  /** stop ends every slot, gracefully (drain) or not. */
  async stop(graceful: boolean): Promise<void> {
    const all = [...this.#slots.values()].flat();
    this.#slots.clear();
    await Promise.all(all.map((s) => s.stop(graceful)));
  }
}
