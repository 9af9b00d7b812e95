import type { Clock, Store } from '../store/index.js';

/**
 * Unverified custom domains expire: anyone could reserve `shop.example.com`
 * without owning it and hold it for ever, so its real owner got 409. A custom domain still
 * unverified `days` after it was reserved is released by the edge (audited as actor `system`),
 * at start and then every `sweepMs`.
 */

/** DEFAULT_UNVERIFIED_DOMAIN_DAYS is how long an unverified custom domain is held when the config names no limit. */
export const DEFAULT_UNVERIFIED_DOMAIN_DAYS = 7;

/** DomainExpiryOptions configure the sweep. */
export interface DomainExpiryOptions {
  readonly store: Store;
  readonly clock: Clock;
  /** days an unverified custom domain is held */
  readonly days: number;
  /** how often to sweep (default one hour) */
  readonly sweepMs?: number;
  /** the tunnel keys revoked with released domains: close their tunnels */
  readonly onRevoked?: (keyIds: readonly string[]) => void;
  readonly log?: (line: string) => void;
}

/** UnverifiedDomainExpiry releases custom domains left unverified too long. */
export class UnverifiedDomainExpiry {
  readonly #options: DomainExpiryOptions;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: DomainExpiryOptions) {
    this.#options = options;
  }

  /** sweep releases every expired unverified domain now and returns how many it released. */
  async sweep(): Promise<number> {
    const { store, clock, days, onRevoked, log } = this.#options;
    const released = await store.releaseUnverifiedDomains(clock.now() - days * 86_400_000, 'system');
    const keyIds = released.flatMap((r) => r.revokedTunnelKeyIds);
    if (keyIds.length > 0) onRevoked?.(keyIds);
    if (released.length > 0) log?.(`released ${released.length} custom domain(s) left unverified for ${days} days`);
    return released.length;
  }

  /** start sweeps once and then every sweepMs until stop(). */
  async start(): Promise<void> {
    await this.sweep();
    this.#timer = setInterval(() => {
      this.sweep().catch((err: Error) => this.#options.log?.(`domain expiry: ${err.name}`));
    }, this.#options.sweepMs ?? 3_600_000);
    this.#timer.unref();
  }

  /** stop ends the sweeps. */
  stop(): void {
    clearInterval(this.#timer);
  }
}
