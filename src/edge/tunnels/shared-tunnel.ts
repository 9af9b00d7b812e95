import type { ClientHttp2Stream } from 'node:http2';
import { CONTROL_PATH, ControlLineReader, encodeControlMessage, parseAgentControlMessage } from '../../wire/index.js';
import type { AgentControlMessage, EdgeControlMessage } from '../../wire/index.js';
import type { EdgeConnection } from './edge-connection.js';
import { EdgeTunnel } from './edge-tunnel.js';
import type { TunnelAcceptorOptions } from './tunnel-acceptor.js';

/** MAX_BINDINGS_PER_CONNECTION bounds what one shared connection may attach (each costs the edge a little memory). */
export const MAX_BINDINGS_PER_CONNECTION = 10_000;

/**
 * MAX_CONCURRENT_CHECKS bounds the key checks one connection runs at once: an agent that sends
 * thousands of attaches (or of wrong keys) queues them instead of starting thousands of store
 * look-ups together, and the burst of attaching holds less memory at its peak.
 */
export const MAX_CONCURRENT_CHECKS = 16;

/** UNATTACHED_TIMEOUT_MS is how long a shared connection may hold no binding before the edge closes it. */
export const UNATTACHED_TIMEOUT_MS = 10_000;

// The same sentences as the version 1 refusal bodies (docs/protocol.md §2.3): one for every
// credential problem, so a refusal does not say which part of the key was wrong.
const REFUSED = {
  'credentials': [401, 'tunnel refused: missing or malformed credentials'],
  'forbidden': [403, 'tunnel refused: the key is not valid for this binding'],
  'connection-limit': [429, 'tunnel refused: connection limit of this key reached'],
  'rate-limited': [429, 'tunnel refused: too many failed attempts, retry later'],
  'binding-limit': [429, `tunnel refused: this connection already serves ${MAX_BINDINGS_PER_CONNECTION} bindings`],
  'unavailable': [503, 'tunnel refused: the edge could not check the key now, retry later'],
  'draining': [503, 'tunnel refused: this connection is draining'],
} as const;

type RefusedKind = keyof typeof REFUSED;

/**
 * SharedTunnel runs the control stream of one shared connection (protocol version 2,
 * docs/protocol.md §9): it opens the stream once the agent's SETTINGS arrived, checks each
 * `attach` with that binding's own key exactly as a version 1 handshake is checked (authority,
 * directory, per-key connection cap, failed-attempt budget), and registers one EdgeTunnel per
 * attached binding. Revoking a key destroys that binding's EdgeTunnel only; the edge tells the
 * agent with `detached` and the connection's other bindings carry on. Messages of one binding are
 * handled in order; different bindings' checks run concurrently.
 */
export class SharedTunnel {
  readonly #options: TunnelAcceptorOptions;
  readonly #connection: EdgeConnection;
  readonly #remoteAddress: string;
  readonly #bindings = new Map<string, EdgeTunnel>();
  readonly #queues = new Map<string, Promise<void>>();
  readonly #detachedByAgent = new WeakSet<EdgeTunnel>();
  #control: ClientHttp2Stream | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #checking = 0;
  readonly #waitingChecks: (() => void)[] = [];

  constructor(options: TunnelAcceptorOptions, connection: EdgeConnection, remoteAddress: string) {
    this.#options = options;
    this.#connection = connection;
    this.#remoteAddress = remoteAddress;
  }

  /** start waits for the agent's SETTINGS and opens the control stream; false when the connection ended first. */
  async start(): Promise<boolean> {
    if (!(await this.#connection.ready())) {
      this.#connection.destroy();
      return false;
    }
    const control = this.#connection.session.request({ ':method': 'POST', ':path': CONTROL_PATH }, { endStream: false });
    this.#control = control;
    control.on('error', () => undefined);
    control.once('response', (headers) => {
      if (headers[':status'] !== 200) this.#fail(`control stream answered ${String(headers[':status'])}`);
    });
    const reader = new ControlLineReader<AgentControlMessage>(parseAgentControlMessage);
    control.on('data', (chunk: Buffer) => {
      let messages: AgentControlMessage[];
      try {
        messages = reader.push(chunk);
      } catch (err) {
        return this.#fail((err as Error).message);
      }
      for (const message of messages) this.#enqueue(message);
    });
    // The control stream lives as long as the connection. Either side ends its half when the
    // connection starts to close (or the other half ended); the stream then closes and the
    // connection drains: open streams finish, nothing new starts (docs/protocol.md §9.5).
    control.once('end', () => this.#endControl());
    this.#connection.onClosing(() => this.#endControl());
    control.once('close', () => void this.#connection.close());
    this.#connection.onClose(() => this.#disarmIdle());
    this.#armIdle();
    return true;
  }

  #endControl(): void {
    const control = this.#control;
    if (control !== undefined && !control.destroyed && !control.writableEnded) control.end();
  }

  #fail(why: string): void {
    this.#options.log(`shared tunnel connection ${this.#connection.connectionId} from ${this.#remoteAddress} closed: ${why}`);
    this.#connection.destroy();
  }

  #enqueue(message: AgentControlMessage): void {
    if (message.type === 'attach') this.#disarmIdle();
    const previous = this.#queues.get(message.binding) ?? Promise.resolve();
    const next = previous
      .then(() => (message.type === 'attach' ? this.#attach(message.binding, message.key) : this.#detach(message.binding)))
      .catch((err: Error) => {
        // e.g. the authority's store failing: the agent retries that binding with backoff.
        this.#options.log(`tunnel attach failed for ${message.binding}: ${err.message}`);
        this.#refuse(message.binding, 'unavailable');
      })
      .finally(() => {
        if (this.#queues.get(message.binding) === next) this.#queues.delete(message.binding);
        if (this.#bindings.size === 0 && this.#queues.size === 0) this.#armIdle();
      });
    this.#queues.set(message.binding, next);
  }

  async #attach(bindingId: string, key: string): Promise<void> {
    const { authority, directory, registry, metrics, limiter } = this.#options;
    if (!this.#connection.isAvailable) return this.#refuse(bindingId, 'draining');
    const existing = this.#bindings.get(bindingId);
    if (existing === undefined && this.#bindings.size >= MAX_BINDINGS_PER_CONNECTION) return this.#refuse(bindingId, 'binding-limit');
    // Brute force of tunnel keys: refused before the key is looked at, so a right guess looks like a wrong one.
    if ((limiter?.retryAfter(this.#remoteAddress) ?? 0) > 0) {
      metrics.countHandshake('rate-limited');
      return this.#refuse(bindingId, 'rate-limited');
    }
    if (!/^[\x21-\x7e]+$/.test(key)) {
      metrics.countHandshake('malformed');
      return this.#refuse(bindingId, 'credentials');
    }
    const connectionId = this.#connection.connectionId;
    const verdict = await this.#check(() => authority.authorize(key, { bindingId, remoteAddress: this.#remoteAddress, connectionId }));
    if (!this.#connection.isAvailable) return;
    if (!verdict.ok || directory.byId(bindingId) === undefined) {
      const reason = verdict.ok ? 'unknown-binding' : verdict.reason;
      metrics.countHandshake(reason);
      limiter?.recordFailure(this.#remoteAddress);
      this.#options.log(`tunnel refused from ${this.#remoteAddress}: ${reason} (binding ${bindingId}, shared connection ${connectionId})`);
      return this.#refuse(bindingId, !verdict.ok && verdict.status === 401 ? 'credentials' : 'forbidden');
    }
    // The same key again (an agent re-attaching after a reconnect race): nothing to change.
    if (existing !== undefined && existing.keyId === verdict.keyId && existing.isAvailable) return this.#send({ type: 'attached', binding: bindingId });
    // an account key's cap (capId) is shared by all its tunnels: its slot is held until the tunnel closes
    const release = verdict.maxConnections === undefined ? noop : registry.claim(verdict.capId ?? verdict.keyId, verdict.maxConnections);
    if (release === undefined) {
      metrics.countHandshake('connection-limit');
      return this.#refuse(bindingId, 'connection-limit');
    }
    let tunnel: EdgeTunnel | undefined;
    try {
      metrics.countHandshake('granted');
      tunnel = new EdgeTunnel({ connection: this.#connection, bindingId, keyId: verdict.keyId });
      this.#bindings.set(bindingId, tunnel);
      const attached = tunnel;
      tunnel.onClose(() => this.#onTunnelEnd(attached));
      registry.add(tunnel);
      // A new key for a binding already attached (rotation): the old key's streams finish, silently.
      if (existing !== undefined) void existing.close();
      this.#send({ type: 'attached', binding: bindingId });
      this.#options.onGranted?.(verdict);
      this.#options.log(`tunnel ${connectionId} up for ${bindingId} (key ${verdict.keyId}) from ${this.#remoteAddress}, shared`);
    } finally {
      if (tunnel !== undefined && verdict.capId !== undefined) tunnel.onClose(release);
      else release();
    }
  }

  // At most MAX_CONCURRENT_CHECKS at once; a finished check hands its turn to the next in line.
  async #check<T>(run: () => Promise<T>): Promise<T> {
    if (this.#checking >= MAX_CONCURRENT_CHECKS) await new Promise<void>((resolve) => this.#waitingChecks.push(resolve));
    else this.#checking++;
    try {
      return await run();
    } finally {
      const next = this.#waitingChecks.shift();
      if (next !== undefined) next();
      else this.#checking--;
    }
  }

  async #detach(bindingId: string): Promise<void> {
    const tunnel = this.#bindings.get(bindingId);
    if (tunnel === undefined) return this.#send({ type: 'detached', binding: bindingId, reason: 'not attached' });
    this.#detachedByAgent.add(tunnel);
    await tunnel.close();
  }

  #onTunnelEnd(tunnel: EdgeTunnel): void {
    if (this.#bindings.get(tunnel.bindingId) !== tunnel) return;
    this.#bindings.delete(tunnel.bindingId);
    this.#options.log(`tunnel ${this.#connection.connectionId} down for ${tunnel.bindingId}`);
    const reason = this.#detachedByAgent.has(tunnel) ? 'detached as the agent asked' : 'closed by the edge';
    this.#send({ type: 'detached', binding: tunnel.bindingId, reason });
    if (this.#bindings.size === 0 && this.#queues.size === 0) this.#armIdle();
  }

  #refuse(bindingId: string, kind: RefusedKind): void {
    const [status, reason] = REFUSED[kind];
    this.#send({ type: 'refused', binding: bindingId, status, reason });
  }

  #send(message: EdgeControlMessage): void {
    const control = this.#control;
    if (control === undefined || control.destroyed || !control.writable) return;
    control.write(encodeControlMessage(message));
  }

  // A connection that serves no binding is closed after a while: it cost a TLS handshake and
  // holds memory, and nothing proved a key on it.
  #armIdle(): void {
    if (this.#idleTimer !== undefined || this.#connection.session.destroyed) return;
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      // nothing runs on it but the control stream: no drain to wait for
      if (this.#bindings.size === 0 && this.#queues.size === 0) {
        this.#options.log(`shared tunnel connection ${this.#connection.connectionId} from ${this.#remoteAddress} closed: no binding attached for ${UNATTACHED_TIMEOUT_MS} ms`);
        this.#connection.destroy();
      }
    }, UNATTACHED_TIMEOUT_MS);
    this.#idleTimer.unref();
  }

  #disarmIdle(): void {
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }
}

function noop(): void {}
