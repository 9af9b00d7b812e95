import { createSocket } from 'node:dgram';
import type { Socket as DgramSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { isIPv6 } from 'node:net';
import type { ListenerStatus } from '../../control-api/index.js';
import type { UdpFront } from '../fronts/index.js';
import type { EdgeMetrics } from '../metrics/index.js';
import { portTransports } from '../tunnels/index.js';
import type { BindingDirectory } from '../tunnels/index.js';

/**
 * The UDP sockets bindings ask for: one per tcp-port binding whose transports include `udp`, on
 * the tcp-port host, and one per `udp` port of an address binding, on its address
 * (docs/protocol.md §4.6). Kept beside BindingListeners (TCP servers) rather than inside it: a
 * UDP socket has no connections to accept, and the two evolve apart. A socket that cannot bind is
 * logged, counted and retried after `retryMs`, as a TCP listener is.
 */

/** UdpListenerDeps are what UdpListeners reads and reports to. */
export interface UdpListenerDeps {
  readonly directory: BindingDirectory;
  readonly front: UdpFront;
  /** the host UDP sockets bind (the HTTP listener's, as tcp-port listeners) */
  readonly host: string;
  readonly metrics: EdgeMetrics;
  readonly log: (line: string) => void;
  readonly retryMs: number;
  readonly now?: () => number;
}

interface WantedSocket {
  readonly bindingId: string;
  readonly host: string;
  readonly port: number;
}

/** UdpListeners keeps one UDP socket open per wanted (binding, port) of the directory. */
export class UdpListeners {
  readonly #deps: UdpListenerDeps;
  readonly #sockets = new Map<string, { want: WantedSocket; socket: DgramSocket }>();
  readonly #failures = new Map<string, { want: WantedSocket; error: string; failures: number; retryAt: number }>();
  #reconciling: Promise<void> = Promise.resolve();
  #retry: NodeJS.Timeout | undefined;
  #isStopped = false;

  constructor(deps: UdpListenerDeps) {
    this.#deps = deps;
  }

  /** addresses returns the bound address of every open socket, by binding id. */
  addresses(): Map<string, AddressInfo[]> {
    const out = new Map<string, AddressInfo[]>();
    for (const { want, socket } of this.#sockets.values()) out.set(want.bindingId, [...(out.get(want.bindingId) ?? []), socket.address()]);
    return out;
  }

  /** statusOf lists a binding's UDP sockets, open or failed to bind (the reservation's status). */
  statusOf(bindingId: string): ListenerStatus[] {
    const out: ListenerStatus[] = [];
    for (const { want } of this.#sockets.values()) {
      if (want.bindingId === bindingId) out.push({ address: want.host, port: want.port, protocol: 'udp', state: 'listening', error: null, failures: 0, retryAt: null });
    }
    for (const { want, error, failures, retryAt } of this.#failures.values()) {
      if (want.bindingId === bindingId) out.push({ address: want.host, port: want.port, protocol: 'udp', state: 'failed', error, failures, retryAt });
    }
    return out;
  }

  /** reconcile opens the sockets the directory wants and closes the rest (serialised). */
  reconcile(): Promise<void> {
    const next = this.#reconciling.then(() => this.#reconcileNow());
    this.#reconciling = next.catch(() => undefined);
    return next;
  }

  /** close stops retries and closes every socket (their flows end). */
  close(): void {
    this.#isStopped = true;
    clearTimeout(this.#retry);
    for (const { socket } of this.#sockets.values()) socket.close();
    this.#sockets.clear();
  }

  async #reconcileNow(): Promise<void> {
    if (this.#isStopped) return;
    const wanted = new Map<string, WantedSocket>();
    const { host } = this.#deps;
    for (const b of this.#deps.directory.list()) {
      if (b.kind === 'tcp-port' && b.port !== undefined && portTransports(b).includes('udp')) wanted.set(`${b.id}|udp|${host}:${b.port}`, { bindingId: b.id, host, port: b.port });
      if (b.kind !== 'address' || b.address === undefined) continue;
      for (const p of b.ports ?? []) if (p.protocol === 'udp') wanted.set(`${b.id}|udp|${b.address}:${p.port}`, { bindingId: b.id, host: b.address, port: p.port });
    }
    for (const key of this.#failures.keys()) if (!wanted.has(key)) this.#failures.delete(key);
    for (const [key, entry] of this.#sockets) {
      if (wanted.has(key)) continue;
      this.#sockets.delete(key);
      entry.socket.close();
    }
    const opening = [...wanted].filter(([key]) => !this.#sockets.has(key));
    const results = await Promise.allSettled(opening.map(([key, want]) => this.#open(key, want)));
    let failed = 0;
    for (const [i, result] of results.entries()) {
      if (result.status === 'fulfilled') continue;
      failed++;
      const [key, want] = opening[i]!;
      const error = (result.reason as NodeJS.ErrnoException).code ?? (result.reason as Error).message;
      const failures = (this.#failures.get(key)?.failures ?? 0) + 1;
      this.#deps.metrics.bindingListenerFailures++;
      this.#failures.set(key, { want, error, failures, retryAt: (this.#deps.now ?? Date.now)() + this.#deps.retryMs });
      this.#deps.log(`binding listener: cannot bind UDP ${want.host}:${want.port} for ${want.bindingId}: ${error}; retrying in ${this.#deps.retryMs} ms`);
    }
    if (failed > 0 && this.#retry === undefined && !this.#isStopped) {
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        this.reconcile().catch((err: Error) => this.#deps.log(`udp listeners: ${err.message}`));
      }, this.#deps.retryMs);
      this.#retry.unref();
    }
  }

  #open(key: string, want: WantedSocket): Promise<void> {
    const { front } = this.#deps;
    const { host } = want;
    const socket = createSocket({ type: isIPv6(host) ? 'udp6' : 'udp4' });
    return new Promise((resolve, reject) => {
      socket.once('error', (err) => {
        socket.close();
        reject(err);
      });
      socket.bind(want.port, host, () => {
        socket.removeAllListeners('error');
        // a send to a client that went away reports ICMP errors here; they concern that client only
        socket.on('error', () => undefined);
        if (this.#isStopped) return void socket.close(() => resolve());
        this.#sockets.set(key, { want, socket });
        this.#failures.delete(key);
        front.serve(socket, want);
        resolve();
      });
    });
  }
}
