import type { Clock, ClockTimer } from '../../src/tunnel/clock.js';

interface FakeTimer {
  fn: () => void;
  ms: number;
  isCleared: boolean;
}

/** FakeClock records timers instead of running them; tests fire them by hand. */
export class FakeClock implements Clock {
  readonly timers: FakeTimer[] = [];
  #now = 0;

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const timer: FakeTimer = { fn, ms, isCleared: false };
    this.timers.push(timer);
    return timer as unknown as ClockTimer;
  }

  clearTimeout(timer: ClockTimer): void {
    (timer as unknown as FakeTimer).isCleared = true;
  }

  /** pending lists timers not yet fired or cleared. */
  pending(): FakeTimer[] {
    return this.timers.filter((t) => !t.isCleared);
  }

  /** fireNext runs the oldest pending timer and returns its delay. */
  fireNext(): number {
    const timer = this.pending()[0];
    if (timer === undefined) throw new Error('no pending timer');
    timer.isCleared = true;
    this.#now += timer.ms;
    timer.fn();
    return timer.ms;
  }
}
