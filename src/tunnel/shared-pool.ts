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

  constructor(deps: SharedPoolDeps) {
    this.#deps = deps;
  }

  /** attach starts serving a binding on the `index`-th shared connection to the edge. */
  attach(edge: EdgeEndpoint, index: number, bindingId: string, key: string): BindingAttachment {
    const id = this.#slotFor(`${edgeEndpointKey(edge)}#${index}`, bindingId);
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
      const current: PoolEntry = { connection: this.#open(edge), wasOpen: false };
      entry = current;
      this.#entries.set(id, current);
      current.connection.session.once('open', () => (current.wasOpen = true));
      current.connection.once('close', (err: Error | undefined) => {
        this.#all.delete(current.connection);
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
  #slotFor(base: string, bindingId: string): string {
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
      if (entry.connection.serves(bindingId)) return spillId(base, spill);
      if (firstWithRoom === undefined && (entry.failure !== undefined || entry.connection.bindingCount < cap)) firstWithRoom = spill;
    }
    const chosen = firstWithRoom ?? firstFree ?? Math.min(highest + 1, MAX_SPILL - 1);
    if (chosen > highest) this.#highestSpill.set(base, chosen);
    return spillId(base, chosen);
  }

  /** isOneBindingEdge says the edge refused the shared upgrade as malformed (it speaks version 1 only): bindings connect to it one per connection. */
  isOneBindingEdge(edge: EdgeEndpoint): boolean {
    return this.#oneBindingEdges.has(edgeEndpointKey(edge));
  }

  #open(edge: EdgeEndpoint): SharedConnection {
    const { dialer, clock, handler, options } = this.#deps;
    const connection = new SharedConnection({
      edge,
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
