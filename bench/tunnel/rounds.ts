/**
 * Rounds: each figure is taken in `runs` rounds, and each round visits every running contender in
 * a rotated order, so that slow drift of a shared machine (other jobs, thermal, page cache) spreads
 * over all contenders instead of landing on whichever was measured last.
 */
import type { BenchContext, Contender } from './contender.js';
import { ContenderUnavailableError } from './contender.js';
import type { Target } from './net.js';
import type { Figures } from './table.js';

/** Running is a started contender with its figures and where it listens. */
export interface Running {
  contender: Contender;
  target: Target;
  figures: Figures;
}

/** rotate returns `items` starting at index `by` (mod length). */
export function rotate<T>(items: T[], by: number): T[] {
  if (items.length === 0) return [];
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/**
 * inRounds calls `measure` for every contender in every round (rotated); a failed measurement is
 * recorded on that contender as "<figure> round <n>: <message>" and the run goes on. Past
 * `deadline` (a performance.now() time) no further round starts, so the part stays within its time
 * budget on a slow machine; it resolves with the number of rounds done.
 */
export async function inRounds(running: Running[], runs: number, figure: string, measure: (r: Running, round: number) => Promise<string>, deadline = Number.POSITIVE_INFINITY): Promise<number> {
  let round = 0;
  for (; round < runs; round++) {
    if (round > 0 && performance.now() > deadline) break;
    for (const r of rotate(running, round)) {
      try {
        const shown = await measure(r, round);
        console.log(`  ${figure} · ${r.contender.name} · round ${round + 1}/${runs}: ${shown}`);
      } catch (err) {
        const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
        r.figures.failures.push(`${figure} round ${round + 1}: ${message}`);
        console.log(`  ${figure} · ${r.contender.name} · round ${round + 1}/${runs}: FAILED ${message}`);
      }
    }
  }
  return round;
}

/** startAll starts the contenders one by one; one that cannot start is marked unavailable. */
export async function startAll(ctx: BenchContext, contenders: Contender[], all: Figures[]): Promise<Running[]> {
  const running: Running[] = [];
  for (const [i, contender] of contenders.entries()) {
    const figures = all[i] as Figures;
    try {
      const target = await contender.start(ctx);
      // Some contenders learn how they run only when they start (tuna's tunnel mode).
      figures.description = contender.describe();
      running.push({ contender, target, figures });
      console.log(`  started ${contender.name} on 127.0.0.1:${target.port}${target.host ? ` (Host ${target.host})` : ''}`);
    } catch (err) {
      figures.unavailable = unavailableReason(err);
      console.log(`  ${contender.name}: not available (${figures.unavailable})`);
      await contender.stop(ctx).catch(() => undefined);
    }
  }
  return running;
}

/** unavailableReason is the one-line reason a contender could not start. */
export function unavailableReason(err: unknown): string {
  if (err instanceof ContenderUnavailableError) return err.reason.split('\n')[0] ?? err.reason;
  return err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err);
}
