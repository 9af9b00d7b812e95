/** Clock is the time source of the tunnel code, injected so tests can use a fake one. */
export interface Clock {
  /** now returns milliseconds since the epoch. */
  now(): number;
  /** setTimeout schedules fn after ms. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  /** clearTimeout cancels a timer from setTimeout. */
  clearTimeout(timer: ClockTimer): void;
}

/** ClockTimer is an opaque timer handle. */
export type ClockTimer = { readonly __clockTimer?: never } | NodeJS.Timeout;

/**
 * SystemClock is the real clock. Its timers keep the process alive on purpose: an agent waiting to
 * reconnect must not exit; close() on the session or manager clears them.
 */
export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }
  setTimeout(fn: () => void, ms: number): ClockTimer {
    return setTimeout(fn, ms);
  }
  clearTimeout(timer: ClockTimer): void {
    clearTimeout(timer as NodeJS.Timeout);
  }
}
