import type { Clock } from './rate-limiter.js';

/** Fetched is a document as known now: its value, or why there is none (the routes that need it answer 503 with the reason). */
export type Fetched<T> = { kind: 'ready'; value: T } | { kind: 'unavailable'; reason: string };

/** RefreshingOptions say how a remote document is fetched and what a failure is called. */
export interface RefreshingOptions<T> {
  /** fetches and checks the document; `prior` is the value in force, if any (so that what it holds can be kept); throws with the reason when it cannot */
  load: (prior: T | undefined) => Promise<T>;
  now: Clock;
  /** time between two periodic fetches */
  refreshMs: number;
  /** least time between two fetches asked for by requests */
  cooldownMs: number;
  /** told of every failed fetch, with its reason; returns the reason the document is unavailable, used while no fetch has succeeded */
  onFailure: (reason: string) => string;
}

/**
 * Refreshing is a document the agent fetches from an identity provider (a key set, a provider's
 * configuration): fetched at once, then every `refreshMs`, and when a request asks for a fresh
 * copy — at most once per cooldown, and one fetch at a time, so that requests cannot make the agent
 * hammer the provider. A failed fetch keeps the last good value; before any fetch succeeded the
 * document is unavailable, with the reason of the last failure.
 */
export class Refreshing<T> {
  private state: Fetched<T>;
  private inFlight: Promise<Fetched<T>> | undefined;
  private lastStart = Number.NEGATIVE_INFINITY;
  private readonly timer: NodeJS.Timeout;

  constructor(
    notYet: string,
    private readonly options: RefreshingOptions<T>,
  ) {
    this.state = { kind: 'unavailable', reason: notYet };
    this.timer = setInterval(() => void this.fetchNow(), options.refreshMs);
    this.timer.unref();
    void this.fetchNow();
  }

  /** current is the value in force; without one, the fetch under way or one started now (past the cooldown). */
  current(): Fetched<T> | Promise<Fetched<T>> {
    return this.state.kind === 'ready' ? this.state : this.fresh();
  }

  /** fresh asks for a newer copy: the fetch under way, or one started now unless one started within the cooldown; resolves to what is in force after. */
  fresh(): Fetched<T> | Promise<Fetched<T>> {
    if (this.inFlight) return this.inFlight;
    if (this.options.now() - this.lastStart < this.options.cooldownMs) return this.state;
    return this.fetchNow();
  }

  /** known is the value in force without fetching (undefined before any fetch succeeded). */
  known(): T | undefined {
    return this.state.kind === 'ready' ? this.state.value : undefined;
  }

  /** stop ends the periodic fetches. */
  stop(): void {
    clearInterval(this.timer);
  }

  private fetchNow(): Promise<Fetched<T>> {
    if (this.inFlight) return this.inFlight;
    this.lastStart = this.options.now();
    this.inFlight = this.options
      .load(this.known())
      .then((value) => {
        this.state = { kind: 'ready', value };
      })
      .catch((err: unknown) => {
        const reason = this.options.onFailure(errorText(err));
        if (this.state.kind === 'unavailable') this.state = { kind: 'unavailable', reason };
      })
      .then(() => {
        this.inFlight = undefined;
        return this.state;
      });
    return this.inFlight;
  }
}

/** errorText is an error's message, with the code of its cause when there is one (a refused connection says ECONNREFUSED). */
export function errorText(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const message = err instanceof Error ? err.message : String(err);
  return typeof cause?.code === 'string' ? `${message} (${cause.code})` : message;
}
