import type { RateLimitPolicy } from '../../model/index.js';

/** Clock gives milliseconds from an arbitrary origin (tests pass a fake one). */
export type Clock = () => number;

/** RateDecision is a limiter's answer: pass, or wait `retryAfterSeconds` (whole, at least 1). */
export type RateDecision = { kind: 'pass' } | { kind: 'limited'; retryAfterSeconds: number };

const pass: RateDecision = { kind: 'pass' };

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * RateLimiter is a token bucket per client address: `requests` tokens per `periodSeconds`
 * refill continuously, at most `burst` are saved up, each request takes one. Memory is bounded:
 * at most `maxClients` buckets, least recently used dropped first (a Map keeps insertion order;
 * a touched bucket is moved to the end). Dropping a bucket only forgets debt, never grants more
 * than a fresh client gets: a full bucket, which is what a long-idle client has anyway.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;

  constructor(
    readonly policy: RateLimitPolicy,
    private readonly now: Clock,
    private readonly maxClients = 10_000,
  ) {
    this.perMs = policy.requests / (policy.periodSeconds * 1000);
  }

  /** take spends one token of `client`'s bucket, or says how long until one is there. */
  take(client: string): RateDecision {
    const now = this.now();
    const { burst } = this.policy;
    let bucket = this.buckets.get(client);
    if (bucket === undefined) {
      bucket = { tokens: burst, at: now };
      if (this.buckets.size >= this.maxClients) this.evictOldest();
    } else {
      this.buckets.delete(client);
      bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.at) * this.perMs);
      bucket.at = now;
    }
    this.buckets.set(client, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return pass;
    }
    // RFC 9110 §10.2.3: Retry-After in whole seconds; round up so a client that obeys succeeds.
    return { kind: 'limited', retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.perMs / 1000)) };
  }

  /** size is the number of clients tracked (tests check the bound). */
  get size(): number {
    return this.buckets.size;
  }

  private evictOldest(): void {
    const oldest = this.buckets.keys().next();
    if (oldest.done !== true) this.buckets.delete(oldest.value);
  }
}
