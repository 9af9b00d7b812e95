import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { EdgeMetrics } from '../metrics/index.js';

/** ListenerLimits are the deadlines and connection limits one listener's ConnectionGuard keeps. */
export interface ListenerLimits {
  /** a connection that sends no byte this long after accept is closed */
  firstByteTimeoutMs: number;
  /** a request's header block (or a TLS ClientHello) must be complete this long after accept (after a keep-alive response: idle + this) */
  headersTimeoutMs: number;
  /** an HTTP connection with no traffic this long is closed (keep-alive between requests, HTTP/2 sessions, inactivity during a request) */
  idleTimeoutMs: number;
  /** open public connections, all listeners together; more are closed at accept */
  maxConnections: number;
  /** open public connections from one client address; more are closed at accept */
  maxConnectionsPerAddress: number;
}

/** PublicConnectionLimits bound what one anonymous client may hold open on the public listeners. */
export interface PublicConnectionLimits extends ListenerLimits {
  /** a raw TCP relay on which no byte moved either way this long after accept is closed (the backend's banner counts) */
  tcpFirstByteTimeoutMs: number;
  /** a raw relay (TCP, or TLS routed by SNI) without a byte either way this long is closed */
  tcpIdleTimeoutMs: number;
  /** HTTP requests one client address may have in flight to one binding; more are answered 429 */
  maxInFlightPerClient: number;
  /** the window the HTTP/2 budgets below are counted over, per public connection */
  http2WindowMs: number;
  /** streams a public HTTP/2 client may reset (or have refused) per window before GOAWAY */
  http2MaxResets: number;
  /** PING frames a public HTTP/2 client may send per window before GOAWAY */
  http2MaxPings: number;
  /** SETTINGS frames a public HTTP/2 client may send per window before GOAWAY */
  http2MaxSettings: number;
}

/**
 * DEFAULT_PUBLIC_CONNECTION_LIMITS: headers 60 s like nginx's client_header_timeout, idle 75 s
 * like nginx's keepalive_timeout; the first byte gets 10 s (the ClientHello budget the edge had).
 * Raw relays: 30 s for the first byte either way, idle 1 h like Envoy's tcp_proxy idle_timeout.
 * One client address may have 128 requests in flight to a binding: half the agent's 256 sockets
 * per backend, so one greedy client leaves the other half to the binding's other clients.
 */
export const DEFAULT_PUBLIC_CONNECTION_LIMITS: PublicConnectionLimits = {
  firstByteTimeoutMs: 10_000,
  headersTimeoutMs: 60_000,
  idleTimeoutMs: 75_000,
  maxConnections: 10_000,
  maxConnectionsPerAddress: 512,
  tcpFirstByteTimeoutMs: 30_000,
  tcpIdleTimeoutMs: 3_600_000,
  maxInFlightPerClient: 128,
  http2WindowMs: 10_000,
  http2MaxResets: 200,
  http2MaxPings: 100,
  http2MaxSettings: 100,
};

/** GuardCounters are where a guard counts: the public listeners and the tunnel listener count apart. */
export interface GuardCounters {
  refused(reason: RefusalReason): void;
  timedOut(phase: TimeoutPhase): void;
  open(count: number): void;
}

/** publicGuardCounters counts into the public listeners' metrics. */
export function publicGuardCounters(metrics: EdgeMetrics): GuardCounters {
  return {
    refused: (reason) => metrics.countPublicRefusal(reason),
    timedOut: (phase) => metrics.countPublicTimeout(phase),
    open: (count) => (metrics.publicConnectionsOpen = count),
  };
}

/** Why a public connection was refused at accept, as counted in metrics. */
export type RefusalReason = 'connection-limit' | 'address-limit';

/** Which deadline closed a public connection, as counted in metrics. */
export type TimeoutPhase = 'first-byte' | 'headers' | 'idle';

/** The per-connection state: the headers deadline and the HTTP/1.1 requests answered-to-come. */
interface Watch {
  raw: Socket;
  timer: NodeJS.Timeout | undefined;
  outstanding: number;
}

/**
 * ConnectionGuard counts the open connections of a listener (the public ones together, or the tunnel listener) (globally and per client address), refuses
 * those over a limit at accept, and runs the first-byte and headers deadlines of each one.
 * Node's own headersTimeout/requestTimeout never run on connections fed to a server that does
 * not listen, so the edge keeps these deadlines itself.
 */
export class ConnectionGuard {
  readonly #limits: ListenerLimits;
  readonly #counters: GuardCounters;
  readonly #perAddress = new Map<string, number>();
  readonly #watches = new WeakMap<object, Watch>();
  #open = 0;

  constructor(limits: ListenerLimits, counters: GuardCounters) {
    this.#limits = limits;
    this.#counters = counters;
  }

  /** limits are the configured limits. */
  get limits(): ListenerLimits {
    return this.#limits;
  }

  /** open is the number of public connections open now. */
  get open(): number {
    return this.#open;
  }

  /** admit counts a new connection, or closes it at once (false) when a limit is reached. */
  admit(socket: Socket): boolean {
    const address = socket.remoteAddress ?? '';
    const fromAddress = this.#perAddress.get(address) ?? 0;
    const refusal: RefusalReason | undefined =
      this.#open >= this.#limits.maxConnections ? 'connection-limit' : fromAddress >= this.#limits.maxConnectionsPerAddress ? 'address-limit' : undefined;
    if (refusal !== undefined) {
      this.#counters.refused(refusal);
      socket.on('error', noop);
      socket.destroy();
      return false;
    }
    this.#open++;
    this.#perAddress.set(address, fromAddress + 1);
    this.#counters.open(this.#open);
    socket.once('close', () => {
      this.#open--;
      const left = (this.#perAddress.get(address) ?? 1) - 1;
      if (left === 0) this.#perAddress.delete(address);
      else this.#perAddress.set(address, left);
      this.#counters.open(this.#open);
      const watch = this.#watches.get(socket);
      if (watch?.timer !== undefined) clearTimeout(watch.timer);
    });
    return true;
  }

  /**
   * watchFirstBytes starts the first-byte deadline and the headers deadline of a connection
   * just admitted, and closes it on a FIN before the sniffing step is done (a half-open socket
   * would otherwise sit in CLOSE-WAIT for ever). `done()` ends the sniffing step's part.
   */
  watchFirstBytes(socket: Socket): { done(): void } {
    const watch: Watch = { raw: socket, timer: undefined, outstanding: 0 };
    this.#watches.set(socket, watch);
    this.#armHeaders(watch);
    const onTimeout = (): void => this.#expire(socket, 'first-byte');
    const onData = (): void => {
      socket.setTimeout(0);
      socket.off('timeout', onTimeout);
    };
    const onEnd = (): void => void socket.destroy();
    socket.setTimeout(this.#limits.firstByteTimeoutMs);
    socket.once('timeout', onTimeout);
    socket.once('data', onData);
    socket.once('end', onEnd);
    return {
      done: () => {
        onData();
        socket.off('data', onData);
        socket.off('end', onEnd);
      },
    };
  }

  /** alias makes a wrapping socket (TLS) share the raw socket's deadlines. */
  alias(wrapper: object, raw: Socket): void {
    const watch = this.#watches.get(raw);
    if (watch !== undefined) this.#watches.set(wrapper, watch);
  }

  /** headersDone clears the headers deadline (HTTP/2 sessions and raw relays: no HTTP/1.1 header block follows). */
  headersDone(socket: object): void {
    const watch = this.#watches.get(socket);
    if (watch?.timer !== undefined) clearTimeout(watch.timer);
    if (watch !== undefined) watch.timer = undefined;
  }

  /** onHttp1Request clears the headers deadline for a request, and re-arms it once every response on the connection is done. */
  onHttp1Request(req: IncomingMessage, res: ServerResponse): void {
    const watch = this.#watches.get(req.socket);
    if (watch === undefined) return;
    this.headersDone(req.socket);
    watch.outstanding++;
    res.once('close', () => {
      watch.outstanding--;
      // the next request may first wait out the keep-alive idle time, then gets its headers budget.
      if (watch.outstanding === 0 && !watch.raw.destroyed && res.writableFinished) this.#armHeaders(watch, this.#limits.idleTimeoutMs);
    });
  }

  /** countIdle records a connection closed by the idle timeout. */
  countIdle(): void {
    this.#counters.timedOut('idle');
  }

  #armHeaders(watch: Watch, extraMs = 0): void {
    if (watch.timer !== undefined) clearTimeout(watch.timer);
    watch.timer = setTimeout(() => this.#expire(watch.raw, 'headers'), this.#limits.headersTimeoutMs + extraMs);
    watch.timer.unref();
  }

  #expire(socket: Socket, phase: TimeoutPhase): void {
    if (socket.destroyed) return;
    this.#counters.timedOut(phase);
    socket.destroy();
  }
}

function noop(): void {}
