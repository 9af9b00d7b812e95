import type { Clock } from '../store/index.js';

/**
 * A token bucket per client address, spent by failed authentications only: an honest client with a
 * valid key never drains it, a client trying keys runs dry after `capacity` failures and then earns
 * one attempt per `1 / refillPerSecond` seconds. While a bucket is empty every request from that
 * client is refused before its key is checked, so a correct guess cannot be told from a wrong one.
 */

/** RateLimitOptions sizes the bucket. */
export interface RateLimitOptions {
  /** failed attempts allowed in a burst */
  readonly capacity: number;
  /** attempts earned back per second */
  readonly refillPerSecond: number;
  /** most clients tracked at once; the fullest buckets are forgotten first (memory bound) */
  readonly maxClients?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** FailureRateLimiter tracks failed authentications per client. */
export class FailureRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly options: RateLimitOptions,
    private readonly clock: Clock,
  ) {}

  /** retryAfter returns 0 when the client may try, else whole seconds until it may. */
  retryAfter(client: string): number {
    const bucket = this.refill(client);
    if (!bucket || bucket.tokens >= 1) return 0;
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.options.refillPerSecond));
  }

  /** recordFailure spends one token of the client's bucket. */
  recordFailure(client: string): void {
    const bucket = this.refill(client) ?? { tokens: this.options.capacity, updatedAt: this.clock.now() };
    bucket.tokens = Math.max(0, bucket.tokens - 1);
    this.buckets.delete(client);
    this.buckets.set(client, bucket);
    this.evict();
  }

  private refill(client: string): Bucket | undefined {
    const bucket = this.buckets.get(client);
    if (!bucket) return undefined;
    const now = this.clock.now();
    bucket.tokens = Math.min(this.options.capacity, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.options.refillPerSecond);
    bucket.updatedAt = now;
    if (bucket.tokens >= this.options.capacity) {
      this.buckets.delete(client);
      return undefined;
    }
    return bucket;
  }

  private evict(): void {
    const max = this.options.maxClients ?? 10_000;
    // Map iteration order is insertion order and recordFailure re-inserts: the first entries are
    // the clients that failed longest ago, whose buckets are the fullest.
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= max) break;
      this.buckets.delete(key);
    }
  }
}
