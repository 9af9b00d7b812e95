/**
 * The tunnel part's plan, before anything starts: which tools the chosen contenders need (and so
 * whether hack/bench-tools.sh must install some), and how long the run will take, estimated from
 * the configured rounds, durations, transfer size and time budget.
 */
import type { BenchTools } from './tools.js';

/** PlanOptions is what the estimate reads of the part's resolved options (bench/tunnel/index.ts). */
export interface PlanOptions {
  runs: number;
  seconds: number;
  transferBytes: number;
  tunnels: number;
  contenders: readonly string[];
  budgetSeconds: number;
}

/**
 * Assumed costs the configuration does not give, each from a figure a reader can open:
 * the tunnels of the last full run in docs/benchmarks.md moved 150-320 MB/s, so a transfer is
 * counted at 200 MB/s; starting a contender (a build of the CLI, an edge and an agent) and a
 * first-byte round are counted at a few seconds; the idle-memory figure opens `tunnels` tunnels.
 */
const ASSUMED = {
  transferBytesPerSecond: 200e6,
  startSeconds: 3,
  buildSeconds: 30,
  firstByteSeconds: 1,
  /** per load run: wrk/h2load start, and the settling between runs */
  perRunOverheadSeconds: 0.5,
  /** idle memory: per contender that measures it, per 1,000 tunnels */
  memorySecondsPer1000: 20,
} as const;

/** contenders that open fresh tunnels (first byte) and measure idle memory */
const tunnelNames = (names: readonly string[]): string[] => names.filter((n) => !['direct', 'nginx', 'relay'].includes(n));

/** TunnelEstimate is the estimate with its parts, in seconds. */
export interface TunnelEstimate {
  total: number;
  setup: number;
  rounds: number;
  memory: number;
  /** true when the rounds as configured would run past the time budget, which then cuts them */
  cutByBudget: boolean;
}

/**
 * estimateTunnelSeconds: setup (start every contender, a one-second warm-up each, the CLI build
 * when a tuna row runs) + the measured rounds (req/s and latency: `seconds` per run; download and
 * upload: `transferBytes` at the assumed rate; first byte) + idle memory. The rounds stop starting
 * past the time budget, but the first round of each figure always runs, so the rounds count is
 * max(one round of everything, min(all rounds, budget)).
 */
export function estimateTunnelSeconds(o: PlanOptions): TunnelEstimate {
  const n = o.contenders.length;
  const tunnels = tunnelNames(o.contenders).length;
  const hasTuna = o.contenders.some((c) => c.startsWith('tuna'));
  const setup = n * (ASSUMED.startSeconds + 1) + (hasTuna ? ASSUMED.buildSeconds : 0);
  const load = 2 * n * (o.seconds + ASSUMED.perRunOverheadSeconds);
  const transfers = o.transferBytes > 0 ? 2 * n * (o.transferBytes / ASSUMED.transferBytesPerSecond + ASSUMED.perRunOverheadSeconds) : 0;
  const oneRound = load + transfers + tunnels * ASSUMED.firstByteSeconds;
  const allRounds = oneRound * o.runs;
  const rounds = Math.max(oneRound, Math.min(allRounds, o.budgetSeconds));
  const memory = o.tunnels > 1 ? (tunnels + (hasTuna ? 1 : 0)) * ASSUMED.memorySecondsPer1000 * (o.tunnels / 1000) : 0;
  return { total: setup + rounds + memory, setup, rounds, memory, cutByBudget: allRounds > o.budgetSeconds };
}

/** formatDuration is "45 s", "4 min", "1 h 5 min" (rounded up to the unit shown). */
export function formatDuration(seconds: number): string {
  if (seconds < 90) return `${Math.ceil(seconds)} s`;
  const minutes = Math.ceil(seconds / 60);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** toolsNeeded is the tools the run needs: the load tools always, and each contender's programs. */
export function toolsNeeded(contenders: readonly string[]): (keyof BenchTools)[] {
  const need = new Set<keyof BenchTools>(['wrk', 'h2load', 'curl']);
  for (const c of contenders) {
    if (c === 'nginx') need.add('nginx');
    if (c.startsWith('frp')) for (const t of ['frps', 'frpc'] as const) need.add(t);
    if (c === 'chisel') need.add('chisel');
    if (c.startsWith('tuna')) need.add('openssl');
  }
  return [...need];
}

/** missingTools is which of `needed` `tools` has no path for. */
export function missingTools(tools: BenchTools, needed: readonly (keyof BenchTools)[]): (keyof BenchTools)[] {
  return needed.filter((t) => !tools[t]);
}
