import { BindingAttachment } from './binding-attachment.js';
import type { Clock } from './clock.js';
import type { EdgeDialer, EdgeEndpoint } from './dialer.js';
import { edgeEndpointKey } from './dialer.js';
import type { TunnelManagerOptions } from './manager-options.js';
import { TunnelRefusedError } from './errors.js';
import { SharedConnection } from './shared-connection.js';
import type { TunnelStreamHandler } from '../wire/index.js';

/** SharedPoolDeps are what the pool needs to open connections. */
export interface SharedPoolDeps {
  dialer: EdgeDialer;
  clock: Clock;
  handler: TunnelStreamHandler;
  options: TunnelManagerOptions;
  /** called when an edge's worker count is learned or changes: every binding then wants one connection per worker (docs/protocol.md §9.8) */
  onWorkerCount?: () => void;
}

// After a shared connection failed to open, attaches within this window fail at once with the
// same error instead of each dialing: a thousand bindings retrying must not become a thousand
// dials per backoff step (their slots still back off on their own).
const FAILED_DIAL_HOLD_MS = 1000;

/** BINDINGS_PER_CONNECTION is the default number of bindings one shared connection carries before another is opened (the edge admits 10,000). */
export const BINDINGS_PER_CONNECTION = 5000;

// a bound on the spill-over connections per edge and index (at the default, 5 million bindings)
const MAX_SPILL = 1000;

interface PoolEntry {
  /** the entry's id without its spill-over index, and that index */
  base: string;
  spill: number;
  connection: SharedConnection;
  wasOpen: boolean;
  failedAt?: number;
  failure?: Error;
}

/** spillId names the `spill`-th connection beside the first of one edge and connection index. */
function spillId(base: string, spill: number): string {
  return spill === 0 ? base : `${base}+${spill}`;
}

/**
 * SharedConnectionPool holds the shared connections of one tunnel manager: one per edge endpoint
 * and connection index (`connections: N` opens N per edge, and a binding attaches to the first N
 * of them). A connection is opened when its first binding attaches and closes when it serves none;
 * one that drains (GOAWAY) or fails is replaced by the next attach.
 */
export class SharedConnectionPool {
  readonly #deps: SharedPoolDeps;
  readonly #entries = new Map<string, PoolEntry>();
  readonly #all = new Set<SharedConnection>();
  readonly #oneBindingEdges = new Set<string>();
  /** the highest spill-over index used per edge and connection index */
  readonly #highestSpill = new Map<string, number>();
  /** per edge of several worker processes: how many, and the worker its first connection reached */
  readonly #workers = new Map<string, { count: number; first: number }>();

  constructor(deps: SharedPoolDeps) {
    this.#deps = deps;
  }

  /** workersOf is how many worker processes the edge runs, as its connections' 101 answers said (1 until one did). */
  workersOf(edge: EdgeEndpoint): number {
    return this.#workers.get(edgeEndpointKey(edge))?.count ?? 1;
  }

  /**
   * attach starts serving a binding on the `position`-th shared connection to the edge. For an
   * edge of W workers, position p is connection index ⌊p / W⌋ to worker (first + p) mod W, where
   * `first` is the worker the edge's first connection reached: the first W positions cover every
   * worker, and position 0 stays on the connection it already has.
   */
  attach(edge: EdgeEndpoint, position: number, bindingId: string, key: string): BindingAttachment {
    const workers = this.#workers.get(edgeEndpointKey(edge));
    const want = workers === undefined ? undefined : (workers.first + position) % workers.count;
    const base = workers === undefined ? `${edgeEndpointKey(edge)}#${position}` : `${edgeEndpointKey(edge)}#${Math.floor(position / workers.count)}@${want}`;
    const { id, spill } = this.#slotFor(base, bindingId);
    let entry = this.#entries.get(id);
    const now = this.#deps.clock.now();
    const failure = entry?.failure;
    if (entry !== undefined && failure !== undefined && now - (entry.failedAt ?? 0) < FAILED_DIAL_HOLD_MS) {
      const attachment = new BindingAttachment(entry.connection, bindingId);
      // after the caller has subscribed, as a real attach would fail
      queueMicrotask(() => attachment.end(failure));
      return attachment;
    }
    if (entry === undefined || !entry.connection.isUsable) {
      const current: PoolEntry = { base, spill, connection: this.#open(edge, want), wasOpen: false };
      entry = current;
      this.#entries.set(id, current);
      current.connection.session.once('open', () => {
        current.wasOpen = true;
        this.#learnWorker(edge, current);
      });
      current.connection.once('close', (err: Error | undefined) => {
        this.#all.delete(current.connection);
        this.#forgetAliases(current, id);
        if (this.#entries.get(id) !== current) return;
        // An edge of protocol version 1 answers the version 2 upgrade 400 (malformed, docs/protocol.md §2.3).
        if (err instanceof TunnelRefusedError && err.statusCode === 400 && err.bindingId === undefined && !current.wasOpen) {
          this.#oneBindingEdges.add(edgeEndpointKey(edge));
          this.#entries.delete(id);
        } else if (err !== undefined && !current.wasOpen) {
          current.failure = err;
          current.failedAt = this.#deps.clock.now();
        } else this.#entries.delete(id);
      });
    }
    return entry.connection.attach(bindingId, key);
  }

  /**
   * slotFor picks the connection a binding attaches to: the one that already serves it (a key
   * rotation stays on its connection), else the first with room (`bindingsPerConnection`), else a
   * new one beside them, so no connection reaches the edge's per-connection limit.
   */
  #slotFor(base: string, bindingId: string): { id: string; spill: number } {
    const cap = this.#deps.options.bindingsPerConnection ?? BINDINGS_PER_CONNECTION;
    const highest = this.#highestSpill.get(base) ?? 0;
    let firstWithRoom: number | undefined;
    let firstFree: number | undefined;
    for (let spill = 0; spill <= highest; spill++) {
      const entry = this.#entries.get(spillId(base, spill));
      if (entry === undefined || !entry.connection.isUsable) {
        firstFree ??= spill;
        continue;
      }
      if (entry.connection.serves(bindingId)) return { id: spillId(base, spill), spill };
      if (firstWithRoom === undefined && (entry.failure !== undefined || entry.connection.bindingCount < cap)) firstWithRoom = spill;
    }
    const chosen = firstWithRoom ?? firstFree ?? Math.min(highest + 1, MAX_SPILL - 1);
    if (chosen > highest) this.#highestSpill.set(base, chosen);
    return { id: spillId(base, chosen), spill: chosen };
  }

  // A connection opened before the edge's worker count was known (an id without `@worker`) is
  // also entered under the worker it reached, so positions mapped to that worker find it; the
  // first one to an edge of several workers teaches the pool their count.
  #learnWorker(edge: EdgeEndpoint, entry: PoolEntry): void {
    const reached = entry.connection.session.edgeWorker;
    if (reached === undefined || reached.count <= 1) return;
    const edgeKey = edgeEndpointKey(edge);
    const known = this.#workers.get(edgeKey);
    if (known === undefined || known.count !== reached.count) {
      this.#workers.set(edgeKey, { count: reached.count, first: reached.index });
      this.#deps.onWorkerCount?.();
    }
    if (entry.base.includes('@')) return;
    const index = Number(entry.base.slice(entry.base.lastIndexOf('#') + 1));
    const aliasBase = `${edgeKey}#${Math.floor(index / reached.count)}@${reached.index}`;
    const alias = spillId(aliasBase, entry.spill);
    if (this.#entries.get(alias)?.connection.isUsable === true) return;
    this.#entries.set(alias, entry);
    if (entry.spill > (this.#highestSpill.get(aliasBase) ?? 0)) this.#highestSpill.set(aliasBase, entry.spill);
  }

  #forgetAliases(entry: PoolEntry, id: string): void {
    for (const [other, e] of this.#entries) if (e === entry && other !== id) this.#entries.delete(other);
  }

  /** isOneBindingEdge says the edge refused the shared upgrade as malformed (it speaks version 1 only): bindings connect to it one per connection. */
  isOneBindingEdge(edge: EdgeEndpoint): boolean {
    return this.#oneBindingEdges.has(edgeEndpointKey(edge));
  }

  #open(edge: EdgeEndpoint, wantWorker: number | undefined): SharedConnection {
    const { dialer, clock, handler, options } = this.#deps;
    const connection = new SharedConnection({
      edge,
      ...(wantWorker !== undefined ? { wantWorker } : {}),
      dialer,
      clock,
      handler,
      ...(options.limits !== undefined ? { limits: options.limits } : {}),
      ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
      ...(options.pingTimeoutMs !== undefined ? { pingTimeoutMs: options.pingTimeoutMs } : {}),
      ...(options.handshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: options.handshakeTimeoutMs } : {}),
      ...(options.drainTimeoutMs !== undefined ? { drainTimeoutMs: options.drainTimeoutMs } : {}),
    });
    this.#all.add(connection);
    return connection;
  }

  /** connections lists the pool's live shared connections (tests and status). */
  connections(): SharedConnection[] {
    return [...this.#all];
  }

  /** close drains every shared connection (GOAWAY; in-flight streams finish). */
  async close(): Promise<void> {
    this.#entries.clear();
    await Promise.all([...this.#all].map((c) => c.close()));
  }

  /** destroy drops every shared connection now. */
  destroy(): void {
    this.#entries.clear();
    for (const c of this.#all) c.destroy();
  }
}
