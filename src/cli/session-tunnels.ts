import type { Binding } from '../model/index.js';
import type { Clock } from '../tunnel/clock.js';
import type { EdgeDialer, EdgeEndpoint } from '../tunnel/dialer.js';
import { TunnelSession } from '../tunnel/session.js';
import type { TunnelStreamHandler } from '../tunnel/stream-handler.js';
import type { TunnelControl } from './agent.js';

/** SessionTunnelsOptions configure the agent's tunnels. */
export interface SessionTunnelsOptions {
  edge: EdgeEndpoint;
  key: string;
  connections: number;
  dialer: EdgeDialer;
  clock: Clock;
  handler: TunnelStreamHandler;
  /** first reconnect delay; doubles up to maxBackoffMs, with full jitter */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  random?: () => number;
}

/**
 * SessionTunnels holds `connections` tunnel sessions per binding and replaces each one that
 * closes, after a jittered exponential backoff (full jitter: a random delay in [0, min(cap,
 * base·2^n)], so that agents cut off together do not return together). The first connection of a
 * new binding is awaited so that a wrong edge or a refused key fails `apply` with its error.
 */
export class SessionTunnels implements TunnelControl {
  private readonly slots = new Map<string, Slot[]>();
  private isClosing = false;

  constructor(private readonly options: SessionTunnelsOptions) {}

  /** apply opens tunnels for new bindings and drains those of removed ones; others are untouched. */
  async apply(bindings: readonly Binding[]): Promise<void> {
    const wanted = new Set(bindings.map((b) => b.id));
    const closing: Promise<void>[] = [];
    for (const [id, slots] of this.slots) {
      if (wanted.has(id)) continue;
      this.slots.delete(id);
      closing.push(...slots.map((s) => s.stop()));
    }
    const starting: Promise<void>[] = [];
    for (const id of wanted) {
      if (this.slots.has(id)) continue;
      const slots = Array.from({ length: this.options.connections }, () => new Slot(id, this.options, () => this.isClosing));
      this.slots.set(id, slots);
      starting.push(...slots.map((s) => s.start()));
    }
    await Promise.all([...starting, ...closing]);
  }

  /** openCount counts tunnel connections that are open now. */
  openCount(): number {
    let n = 0;
    for (const slots of this.slots.values()) for (const s of slots) if (s.isOpen()) n++;
    return n;
  }

  /** close drains every tunnel. */
  async close(): Promise<void> {
    this.isClosing = true;
    const all = [...this.slots.values()].flat();
    this.slots.clear();
    await Promise.all(all.map((s) => s.stop()));
  }
}

/** Slot keeps one tunnel connection of a binding alive. */
class Slot {
  private session: TunnelSession | undefined;
  private timer: ReturnType<Clock['setTimeout']> | undefined;
  private failures = 0;
  private isStopped = false;

  constructor(
    private readonly bindingId: string,
    private readonly options: SessionTunnelsOptions,
    private readonly isClosing: () => boolean,
  ) {}

  /** start connects once; it rejects with the first failure (the caller reports it). */
  async start(): Promise<void> {
    await this.connect();
  }

  isOpen(): boolean {
    return this.session?.state === 'open';
  }

  private async connect(): Promise<void> {
    const { edge, key, dialer, clock, handler } = this.options;
    const session = new TunnelSession({ edge, bindingId: this.bindingId, key, dialer, clock, handler });
    this.session = session;
    session.once('close', () => this.onClose(session));
    session.once('open', () => (this.failures = 0));
    await session.connect();
  }

  private onClose(session: TunnelSession): void {
    if (this.session !== session || this.isStopped || this.isClosing()) return;
    this.failures++;
    const { minBackoffMs = 100, maxBackoffMs = 30_000, random = Math.random, clock } = this.options;
    const delay = random() * Math.min(maxBackoffMs, minBackoffMs * 2 ** Math.min(this.failures, 20));
    this.timer = clock.setTimeout(() => {
      this.timer = undefined;
      if (!this.isStopped) this.connect().catch(() => undefined);
    }, delay);
  }

  /** stop drains the connection and cancels any reconnect. */
  async stop(): Promise<void> {
    this.isStopped = true;
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    await this.session?.close();
  }
}
