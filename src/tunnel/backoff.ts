/**
 * Backoff computes reconnect delays: exponential from 1 s to 30 s with "equal jitter" (half
 * fixed, half random), so a thousand agents that lost the same edge do not return in lockstep
 * while each still waits at least half its step (AWS Architecture Blog, "Exponential Backoff
 * and Jitter"; the same bounds as the Kubernetes client's informers).
 */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /** reconnect delay after a healthy connection ended: spread, but quick (edge restarts) */
  afterHealthyMs: number;
  /** random in [0, 1); injected for tests */
  random: () => number;
}

/** DEFAULT_BACKOFF is 1 s → 30 s, and up to 250 ms after a connection that was up. */
export const DEFAULT_BACKOFF: Readonly<BackoffOptions> = Object.freeze({
  baseMs: 1000,
  maxMs: 30_000,
  afterHealthyMs: 250,
  random: Math.random,
});

/** backoffDelay returns the delay before retry number `attempt` (0-based) after failures. */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const step = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(step / 2 + (step / 2) * options.random());
}

/** healthyReconnectDelay returns the delay before redialing after a connection that had been open. */
export function healthyReconnectDelay(options: BackoffOptions): number {
  return Math.round(options.afterHealthyMs * options.random());
}
