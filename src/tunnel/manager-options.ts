import type { BackoffOptions } from './backoff.js';
import type { EdgeEndpoint } from './dialer.js';
import type { TunnelLimits } from '../wire/index.js';

/** TunnelSpec is one binding the route graph needs tunnels for. */
export interface TunnelSpec {
  bindingId: string;
  /** every edge node to connect to (several edge nodes share state and each gets connections) */
  edges: EdgeEndpoint[];
  /** connections per edge from this process (default 1) */
  connections?: number;
  /** opaque reference the key source resolves; a new value means a new key (make-before-break) */
  keyRef: string;
}

/** TunnelManagerOptions tunes the manager; every field has a default. */
export interface TunnelManagerOptions {
  backoff?: Partial<BackoffOptions>;
  limits?: Partial<TunnelLimits>;
  pingIntervalMs?: number;
  pingTimeoutMs?: number;
  handshakeTimeoutMs?: number;
  drainTimeoutMs?: number;
  /** make-before-break: how long the old connections wait for the new ones (default 30 s) */
  switchTimeoutMs?: number;
  /**
   * true: one connection per edge (per `connections` index) carries every binding, each proved with
   * its own key (protocol version 2, docs/protocol.md §9); the programs' composition root sets it.
   * false (default): one connection per binding (version 1, what edges before version 2 accept).
   */
  sharedConnections?: boolean;
  /**
   * how many bindings one shared connection carries before the next binding opens another one to
   * the same edge (default 5,000, half of what an edge admits on one connection: docs/protocol.md §9)
   */
  bindingsPerConnection?: number;
}
