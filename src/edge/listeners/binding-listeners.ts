import { createServer as createNetServer } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';
import type { ListenerStatus } from '../../control-api/index.js';
import { EdgeListenError } from '../errors.js';
import type { PublicFront } from '../fronts/index.js';
import type { EdgeMetrics } from '../metrics/index.js';
import { portTransports } from '../tunnels/index.js';
import type { BindingDirectory, EdgeBinding } from '../tunnels/index.js';

/**
 * The listeners bindings ask for: one per tcp-port binding and one per (address, port) of an
 * address binding. EdgeServer opens each on its own (docs/security.md, "Hostile tenant"): one that cannot bind is
 * logged, counted and retried, and neither the others nor the edge wait on it.
 */

/** WantedListener is one listener a binding needs: where, and how its sockets are served. */
export interface WantedListener {
  readonly binding: EdgeBinding;
  readonly host: string;
  readonly port: number;
  readonly protocol: ListenerStatus['protocol'];
  readonly accept: (socket: Socket) => void;
}

/** DEFAULT_BINDING_RETRY_MS is how long a listener that failed to bind waits before the next try. */
export const DEFAULT_BINDING_RETRY_MS = 30_000;

/** wantedBindingListeners maps each listener the bindings need by a key naming binding, protocol and address. */
export function wantedBindingListeners(bindings: readonly EdgeBinding[], tcpHost: string, front: PublicFront): Map<string, WantedListener> {
  const wanted = new Map<string, WantedListener>();
  for (const binding of bindings) {
    // a UDP-only port gets no TCP listener (its socket is UdpListeners')
    if (binding.kind === 'tcp-port' && binding.port !== undefined && portTransports(binding).includes('tcp')) {
      wanted.set(`${binding.id}|tcp|${binding.port}`, {
        binding,
        host: tcpHost,
        port: binding.port,
        protocol: 'tcp',
        accept: (s) => void front.acceptTcp(s, binding).catch(() => s.destroy()),
      });
    }
    if (binding.kind === 'address' && binding.address !== undefined) {
      // udp ports are UDP sockets (UdpListeners), not TCP servers
      for (const p of (binding.ports ?? []).filter((x) => x.protocol !== 'udp')) {
        const accept =
          p.protocol === 'tcp'
            ? (s: Socket) => void front.acceptTcp(s, binding).catch(() => s.destroy())
            : p.protocol === 'tls'
              ? (s: Socket) => void front.acceptTls(s, binding).catch(() => s.destroy())
              : p.protocol === 'https'
                ? (s: Socket) => void front.acceptHttps(s, binding).catch(() => s.destroy())
                : (s: Socket) => front.acceptHttp(s, binding);
        wanted.set(`${binding.id}|${p.protocol}|${binding.address}:${p.port}`, { binding, host: binding.address, port: p.port, protocol: p.protocol, accept });
      }
    }
  }
  return wanted;
}

/** PUBLIC_SOCKETS: public sockets stay half-open (a TCP client's FIN becomes END_STREAM on the tunnel while the answer still flows back, RFC 9293 §3.6; RFC 9113 §8.5 for CONNECT). */
export const PUBLIC_SOCKETS = { allowHalfOpen: true, noDelay: true } as const;

/** listenOn binds a server, rejecting with EdgeListenError naming `what`. */
export function listenOn(server: NetServer | HttpServer, port: number, host: string, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(new EdgeListenError(what, err));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** closeServer stops a server accepting and resolves once it has closed. */
export function closeServer(server: NetServer | HttpServer): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** BindingListenerDeps are what BindingListeners reads and reports to. */
export interface BindingListenerDeps {
  readonly directory: BindingDirectory;
  readonly front: PublicFront;
  /** the host tcp-port listeners bind (the HTTP listener's) */
  readonly tcpHost: string;
  readonly metrics: EdgeMetrics;
  readonly log: (line: string) => void;
  readonly retryMs: number;
  /** epoch ms (retryAt in the reservation's status) */
  readonly now?: () => number;
}

/** ListenerFailure is a wanted listener whose last attempt to bind failed. */
interface ListenerFailure {
  readonly want: WantedListener;
  readonly error: string;
  readonly failures: number;
  readonly retryAt: number;
}

/** BindingListeners keeps one listener open per WantedListener of the directory, each on its own. */
export class BindingListeners {
  readonly #deps: BindingListenerDeps;
  readonly #servers = new Map<string, { bindingId: string; server: NetServer; want: WantedListener }>();
  readonly #failures = new Map<string, ListenerFailure>();
  #reconciling: Promise<void> = Promise.resolve();
  #retry: NodeJS.Timeout | undefined;
  #retryAt: number | undefined;
  #isStopped = false;

  constructor(deps: BindingListenerDeps) {
    this.#deps = deps;
  }

  /** servers are the open listeners with their binding ids. */
  servers(): { bindingId: string; server: NetServer }[] {
    return [...this.#servers.values()];
  }

  /** statusOf lists the listeners a binding needs, open or failed to bind (the reservation's status). */
  statusOf(bindingId: string): ListenerStatus[] {
    const out: ListenerStatus[] = [];
    for (const { want } of this.#servers.values()) {
      if (want.binding.id === bindingId) out.push({ ...where(want), state: 'listening', error: null, failures: 0, retryAt: null });
    }
    for (const { want, error, failures, retryAt } of this.#failures.values()) {
      if (want.binding.id === bindingId) out.push({ ...where(want), state: 'failed', error, failures, retryAt });
    }
    return out.sort((a, b) => a.port - b.port || a.address.localeCompare(b.address));
  }

  /** reconcile opens what the directory wants and closes the rest; serialised, so a change and a retry never open one listener twice. */
  reconcile(): Promise<void> {
    const next = this.#reconciling.then(() => this.#reconcileNow());
    this.#reconciling = next.catch(() => undefined);
    return next;
  }

  /** stop ends retries and further reconciles (the servers are closed by their owner). */
  stop(): void {
    this.#isStopped = true;
    clearTimeout(this.#retry);
  }

  // A listener that fails (EADDRINUSE, an address this host lacks) is logged, counted and retried;
  // the others open regardless: a tenant's reservation must not keep the edge from starting.
  async #reconcileNow(): Promise<void> {
    if (this.#isStopped) return;
    const { directory, front, tcpHost, metrics, log, retryMs } = this.#deps;
    const wanted = wantedBindingListeners(directory.list(), tcpHost, front);
    for (const key of this.#failures.keys()) if (!wanted.has(key)) this.#failures.delete(key);
    for (const [key, entry] of this.#servers) {
      if (!wanted.has(key)) {
        this.#servers.delete(key);
        // Stop accepting now, and do not wait for the connections it accepted (server.close()
        // calls back only once they end): a client holding one open on a port an address no
        // longer serves would hold every later change to every listener. They run on until they
        // end; the front tracks them for the edge's close.
        entry.server.close();
      }
    }
    const opening = [...wanted].filter(([key]) => !this.#servers.has(key));
    const results = await Promise.allSettled(
      opening.map(async ([key, want]) => {
        const server = createNetServer(PUBLIC_SOCKETS, want.accept);
        await listenOn(server, want.port, want.host, `${want.host}:${want.port} for ${want.binding.id}`);
        if (this.#isStopped) return void server.close();
        this.#servers.set(key, { bindingId: want.binding.id, server, want });
        this.#failures.delete(key);
      }),
    );
    let failed = 0;
    const now = (this.#deps.now ?? Date.now)();
    for (const [i, result] of results.entries()) {
      if (result.status === 'fulfilled') continue;
      failed++;
      metrics.bindingListenerFailures++;
      const [key, want] = opening[i]!;
      const cause = (result.reason as Error).cause as NodeJS.ErrnoException | undefined;
      const failures = (this.#failures.get(key)?.failures ?? 0) + 1;
      this.#failures.set(key, { want, error: cause?.code ?? (result.reason as Error).message, failures, retryAt: this.#retryAt ?? now + retryMs });
      log(`binding listener: ${(result.reason as Error).message}; retrying in ${retryMs} ms`);
    }
    metrics.bindingListenersFailing = failed;
    if (failed > 0) this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    if (this.#retry !== undefined || this.#isStopped) return;
    this.#retryAt = (this.#deps.now ?? Date.now)() + this.#deps.retryMs;
    for (const [key, failure] of this.#failures) this.#failures.set(key, { ...failure, retryAt: this.#retryAt });
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#retryAt = undefined;
      this.reconcile().catch((err: Error) => this.#deps.log(`binding listeners: ${err.message}`));
    }, this.#deps.retryMs);
    this.#retry.unref();
  }
}

function where(want: WantedListener): Pick<ListenerStatus, 'address' | 'port' | 'protocol'> {
  return { address: want.host, port: want.port, protocol: want.protocol };
}
