import 'reflect-metadata';
import { EventEmitter } from 'node:events';
import { inject, injectable } from 'tsyringe';
import { DEFAULT_BACKOFF } from './backoff.js';
import type { Clock } from './clock.js';
import type { EdgeDialer } from './dialer.js';
import type { TunnelKeySource } from './key-source.js';
import type { TunnelManagerOptions, TunnelSpec } from './manager-options.js';
import type { TunnelLink } from './session.js';
import { SharedConnectionPool } from './shared-pool.js';
import type { TunnelStreamHandler } from '../wire/index.js';
import { TunnelGroup, specIdentity } from './tunnel-group.js';
import type { GroupDeps } from './tunnel-group.js';
import { CLOCK, EDGE_DIALER, TUNNEL_KEY_SOURCE, TUNNEL_MANAGER_OPTIONS, TUNNEL_STREAM_HANDLER } from './tokens.js';

/** BindingTunnelStatus reports one binding's connections. */
export interface BindingTunnelStatus {
  bindingId: string;
  open: number;
  wanted: number;
  lastError?: Error;
}

/** TunnelManagerEvents are the tunnel manager's events, each naming its binding (its doc comment says when each fires). */
export type TunnelManagerEvents = {
  'tunnel-error': [bindingId: string, err: Error];
  open: [bindingId: string, session: TunnelLink];
  reconnected: [bindingId: string, session: TunnelLink];
};

/**
 * TunnelManager keeps the tunnel connections the route graph needs. With `sharedConnections` every
 * binding attaches to one connection per edge (and per `connections` index) with its own key
 * (protocol version 2); without, each binding has connections of its own (version 1). `apply(specs)` is idempotent:
 * a binding whose key and edges are unchanged keeps its connections untouched; a changed one gets
 * a new set of connections first and the old set drains once the new one is up
 * (make-before-break); a binding no longer wanted drains. Emits 'tunnel-error' (bindingId, err)
 * for every failed attempt, so the CLI can say "refused key" or "edge unreachable" clearly, 'open'
 * (bindingId, session) for every connection that opens, and 'reconnected' (bindingId, session) when
 * one replaces an earlier connection of the same slot (a lost one, or one the edge sent away):
 * the operator's reconnect counter. A new key's connections (make-before-break) are not reconnects.
 */
@injectable()
export class TunnelManager extends EventEmitter<TunnelManagerEvents> {
  readonly #deps: GroupDeps;
  readonly #groups = new Map<string, TunnelGroup>();
  readonly #retiring = new Set<TunnelGroup>();
  readonly #pool: SharedConnectionPool | undefined;
  #isClosed = false;

  constructor(
    @inject(EDGE_DIALER) dialer: EdgeDialer,
    @inject(CLOCK) clock: Clock,
    @inject(TUNNEL_STREAM_HANDLER) handler: TunnelStreamHandler,
    @inject(TUNNEL_KEY_SOURCE) keys: TunnelKeySource,
    @inject(TUNNEL_MANAGER_OPTIONS) options: TunnelManagerOptions,
  ) {
    super();
    this.#deps = { dialer, clock, handler, keys, options, backoff: { ...DEFAULT_BACKOFF, ...options.backoff } };
    if (options.sharedConnections === true) {
      // an edge turned out to run several workers: every binding gets a connection to each
      this.#pool = new SharedConnectionPool({ dialer, clock, handler, options, onWorkerCount: () => this.#resizeAll() });
      this.#deps.pool = this.#pool;
    }
  }

  /** sharedConnectionCount is how many shared connections are live (0 unless `sharedConnections`). */
  get sharedConnectionCount(): number {
    return this.#pool?.connections().length ?? 0;
  }

  /** apply makes the held connections match the specs (see the class comment). */
  apply(specs: readonly TunnelSpec[]): void {
    if (this.#isClosed) throw new Error('TunnelManager is closed');
    const wanted = new Map(specs.map((s) => [s.bindingId, s]));
    for (const [bindingId, group] of this.#groups) {
      if (!wanted.has(bindingId)) {
        this.#groups.delete(bindingId);
        this.#retire(group, false);
      }
    }
    for (const spec of wanted.values()) {
      const current = this.#groups.get(spec.bindingId);
      if (current !== undefined && hasSameIdentity(current, spec)) {
        if ((current.spec.connections ?? 1) !== (spec.connections ?? 1)) current.resize(spec);
        continue;
      }
      const next = new TunnelGroup(spec, this.#deps);
      next.on('tunnel-error', (err: Error) => this.emit('tunnel-error', spec.bindingId, err));
      next.on('open', (session: TunnelLink) => this.emit('open', spec.bindingId, session));
      next.on('reconnected', (session: TunnelLink) => this.emit('reconnected', spec.bindingId, session));
      this.#groups.set(spec.bindingId, next);
      next.start();
      if (current !== undefined) this.#retire(current, true, next);
    }
  }

  // Make-before-break: the old group serves until its successor has a connection (or the switch
  // timeout passes), then drains; in-flight streams on it finish.
  #retire(group: TunnelGroup, hasSuccessor: boolean, successor?: TunnelGroup): void {
    this.#retiring.add(group);
    const wait = hasSuccessor && successor !== undefined ? successor.whenOpen(this.#deps.options.switchTimeoutMs ?? 30_000) : Promise.resolve(true);
    void wait
      .then(() => group.stop(true))
      .finally(() => this.#retiring.delete(group));
  }

  #resizeAll(): void {
    if (this.#isClosed) return;
    for (const group of this.#groups.values()) group.resize(group.spec);
  }

  /** sessions lists the open sessions of a binding, or of all bindings. */
  sessions(bindingId?: string): TunnelLink[] {
    const groups = bindingId === undefined ? [...this.#groups.values(), ...this.#retiring] : [this.#groups.get(bindingId), ...[...this.#retiring].filter((g) => g.spec.bindingId === bindingId)];
    return groups.flatMap((g) => g?.sessions() ?? []);
  }

  /** status reports every wanted binding. */
  status(): BindingTunnelStatus[] {
    return [...this.#groups.values()].map((g) => {
      const status: BindingTunnelStatus = {
        bindingId: g.spec.bindingId,
        open: g.sessions().length,
        wanted: g.wanted(),
      };
      const err = g.lastError();
      if (err !== undefined) status.lastError = err;
      return status;
    });
  }

  /** close drains every connection (GOAWAY; in-flight streams finish) and stops reconnecting. */
  async close(): Promise<void> {
    this.#isClosed = true;
    const groups = [...this.#groups.values(), ...this.#retiring];
    this.#groups.clear();
    // shared connections drain as a whole (GOAWAY): their in-flight streams finish before this resolves.
    await Promise.all([...groups.map((g) => g.stop(true)), this.#pool?.close()]);
  }

  /** destroy drops every connection now. */
  destroy(): void {
    this.#isClosed = true;
    const groups = [...this.#groups.values(), ...this.#retiring];
    this.#groups.clear();
    for (const g of groups) void g.stop(false);
    this.#pool?.destroy();
  }
}

/**
 * hasSameIdentity tells whether a spec keeps its group: the same key and edges. The common case —
 * the same key reference and the same edge objects in the same order, as the operator passes on
 * every apply — is decided without the identity string (at 10,000 bindings, a JSON string and a
 * sorted edge list per binding and apply: docs/tunnel-performance.md §13).
 */
function hasSameIdentity(group: TunnelGroup, spec: TunnelSpec): boolean {
  const prior = group.spec;
  if (prior.keyRef === spec.keyRef && prior.edges.length === spec.edges.length && prior.edges.every((e, i) => e === spec.edges[i])) return true;
  return group.identity === specIdentity(spec);
}
