/**
 * The plan `npm run bench` prints before it starts: each part it will run and how long it is
 * estimated to take, from the configured rounds and durations (bench/tunnel/plan.ts for `tunnel`).
 */
import { allNames, resolveOptions } from './tunnel/index.js';
import { estimateTunnelSeconds, formatDuration } from './tunnel/plan.js';

/** PartPlan is one part's line of the plan: its estimate in seconds (undefined: none) and what it rests on. */
export interface PartPlan {
  name: string;
  seconds: number | undefined;
  basis: string;
}

/** TRANSLATE_RUNS is runTranslateBench's default; one run took 0.4-0.9 s in docs/benchmarks.md's translate section, counted as 1 s. */
const TRANSLATE_RUNS = 7;

/** planParts is the plan of the named parts under `env` (the TUNA_BENCH_* knobs). */
export function planParts(names: readonly string[], env: NodeJS.ProcessEnv = process.env): PartPlan[] {
  return names.map((name): PartPlan => {
    if (name === 'translate') return { name, seconds: TRANSLATE_RUNS * 1, basis: `${TRANSLATE_RUNS} translations of one snapshot` };
    if (name === 'tunnel') {
      const o = resolveOptions({}, env);
      const e = estimateTunnelSeconds(o);
      const unknown = o.contenders.filter((c) => !allNames.includes(c) && c !== 'tuna-baseline');
      const basis =
        `${o.contenders.length} contenders, ${o.runs} rounds of ${o.seconds} s req/s + ${o.seconds} s latency` +
        (o.transferBytes > 0 ? `, ${(o.transferBytes / 2 ** 20).toFixed(0)} MiB download + upload` : '') +
        (o.tunnels > 1 ? `, idle memory with ${o.tunnels} tunnels` : '') +
        (e.cutByBudget ? `; rounds cut at the ${o.budgetSeconds} s budget (TUNA_BENCH_BUDGET)` : '') +
        (unknown.length > 0 ? `; unknown contender ${unknown.join(', ')} will stop the run` : '');
      return { name, seconds: e.total, basis };
    }
    return { name, seconds: undefined, basis: 'no estimate (its flags decide)' };
  });
}

/** formatPlan is the lines printed before the run: one per part, and the total of those with an estimate. */
export function formatPlan(plan: readonly PartPlan[]): string[] {
  const lines = plan.map((p) => `  ${p.name}: ${p.seconds === undefined ? '?' : `~${formatDuration(p.seconds)}`} (${p.basis})`);
  const known = plan.filter((p) => p.seconds !== undefined);
  const total = known.reduce((sum, p) => sum + (p.seconds ?? 0), 0);
  return [
    `bench plan (estimate; plus installing missing tools on a fresh machine): ~${formatDuration(total)}${known.length < plan.length ? ' for the parts with an estimate' : ''}`,
    ...lines,
  ];
}
