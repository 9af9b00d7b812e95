import type { Socket } from 'node:net';
import type { EdgeConnection } from './edge-connection.js';
import type { EdgeTunnel } from './edge-tunnel.js';

/**
 * TunnelRegistry holds the live tunnel connections of each binding and picks one per stream:
 * the connection with the fewest open streams (ties: the first registered), so a slow replica
 * gets fewer new streams and a fresh one fills up quickly.
 */
export class TunnelRegistry {
  readonly #byBinding = new Map<string, EdgeTunnel[]>();
  readonly #waiters = new Map<string, Set<(tunnel: EdgeTunnel | undefined) => void>>();
  readonly #pending = new Map<string, number>();
  readonly #connections = new Set<EdgeConnection>();
  /** sockets in use, with how many tunnels and shared connections hold each (bytes count once per socket) */
  readonly #sockets = new Map<Socket, number>();
  #closedBytesIn = 0;
  #closedBytesOut = 0;

  /** add registers a ready tunnel and removes it again when it closes. */
  add(tunnel: EdgeTunnel): void {
    const list = this.#byBinding.get(tunnel.bindingId) ?? [];
    list.push(tunnel);
    this.#byBinding.set(tunnel.bindingId, list);
    this.#retainSocket(tunnel.socket);
    tunnel.onClose(() => this.#remove(tunnel));
    const waiters = this.#waiters.get(tunnel.bindingId);
    if (waiters !== undefined) {
      this.#waiters.delete(tunnel.bindingId);
      for (const wake of waiters) wake(tunnel);
    }
  }

  #remove(tunnel: EdgeTunnel): void {
    const list = this.#byBinding.get(tunnel.bindingId);
    if (list === undefined) return;
    const at = list.indexOf(tunnel);
    if (at < 0) return;
    list.splice(at, 1);
    if (list.length === 0) this.#byBinding.delete(tunnel.bindingId);
    this.#releaseSocket(tunnel.socket);
  }

  /** addShared registers a shared connection (protocol version 2) until it closes: the edge drains it on shutdown. */
  addShared(connection: EdgeConnection): void {
    this.#connections.add(connection);
    this.#retainSocket(connection.socket);
    connection.onClose(() => {
      if (this.#connections.delete(connection)) this.#releaseSocket(connection.socket);
    });
  }

  /** shared lists the live shared connections, with or without bindings attached. */
  shared(): EdgeConnection[] {
    return [...this.#connections];
  }

  #retainSocket(socket: Socket): void {
    this.#sockets.set(socket, (this.#sockets.get(socket) ?? 0) + 1);
  }

  #releaseSocket(socket: Socket): void {
    const left = (this.#sockets.get(socket) ?? 1) - 1;
    if (left > 0) return void this.#sockets.set(socket, left);
    this.#sockets.delete(socket);
    this.#closedBytesIn += socket.bytesRead;
    this.#closedBytesOut += socket.bytesWritten;
  }

  /** pick returns the available tunnel of a binding with the fewest open streams, other than `except` (and, with `accept`, one it accepts). */
  pick(bindingId: string, except?: EdgeTunnel, accept?: (tunnel: EdgeTunnel) => boolean): EdgeTunnel | undefined {
    const list = this.#byBinding.get(bindingId);
    if (list === undefined) return undefined;
    let best: EdgeTunnel | undefined;
    for (const tunnel of list) {
      if (!tunnel.isAvailable || tunnel === except || (accept !== undefined && !accept(tunnel))) continue;
      if (best === undefined || tunnel.activeStreams < best.activeStreams) best = tunnel;
    }
    return best;
  }

  /** waitFor returns a tunnel for the binding other than `except`, waiting up to ms for one to connect (an agent reconnecting after a restart). */
  waitFor(bindingId: string, ms: number, except?: EdgeTunnel): Promise<EdgeTunnel | undefined> {
    const now = this.pick(bindingId, except);
    if (now !== undefined || ms <= 0) return Promise.resolve(now);
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(bindingId) ?? new Set();
      this.#waiters.set(bindingId, waiters);
      const wake = (tunnel: EdgeTunnel | undefined): void => {
        clearTimeout(timer);
        waiters.delete(wake);
        resolve(tunnel);
      };
      const timer = setTimeout(() => wake(this.pick(bindingId, except)), ms);
      waiters.add(wake);
    });
  }

  /** countForKey counts the live connections opened with one key (connection caps). */
  countForKey(keyId: string): number {
    let n = 0;
    for (const list of this.#byBinding.values()) for (const t of list) if (t.keyId === keyId && t.isAvailable) n++;
    return n;
  }

  /**
   * claim takes one of a key's `max` connection slots, counting live connections and handshakes
   * still in progress, or returns undefined when none is left. Check and take happen in one
   * synchronous step, so concurrent handshakes in this process cannot both pass the cap. The
   * returned function gives the slot back; call it once the tunnel is registered (then it counts
   * as live) or has failed.
   */
  claim(keyId: string, max: number): (() => void) | undefined {
    const pending = this.#pending.get(keyId) ?? 0;
    if (this.countForKey(keyId) + pending >= max) return undefined;
    this.#pending.set(keyId, pending + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#pending.get(keyId) ?? 1) - 1;
      if (left > 0) this.#pending.set(keyId, left);
      else this.#pending.delete(keyId);
    };
  }

  /** all lists every registered tunnel. */
  all(): EdgeTunnel[] {
    return [...this.#byBinding.values()].flat();
  }

  /** count returns the number of tunnels per binding id. */
  count(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [id, list] of this.#byBinding) out.set(id, list.length);
    return out;
  }

  /** bytes returns the bytes read from and written to tunnel sockets, live and closed. */
  bytes(): { in: number; out: number } {
    let bytesIn = this.#closedBytesIn;
    let bytesOut = this.#closedBytesOut;
    for (const socket of this.#sockets.keys()) {
      bytesIn += socket.bytesRead;
      bytesOut += socket.bytesWritten;
    }
    return { in: bytesIn, out: bytesOut };
  }

  /** wakeAll resolves every waiter with nothing (edge shutdown). */
  wakeAll(): void {
    for (const waiters of this.#waiters.values()) for (const wake of waiters) wake(undefined);
    this.#waiters.clear();
  }
}
