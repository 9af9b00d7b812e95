/**
 * The `tunnel` benchmark part: direct, nginx, frp, chisel and tuna side by side on
 * loopback in one run; writes its section of docs/benchmarks.md. Method: docs/benchmarking.md.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSection } from '../report.js';
import { startBackend } from './backend.js';
import type { BenchContext, Contender } from './contender.js';
import { ChiselContender } from './contenders/chisel.js';
import { directContender } from './contenders/direct.js';
import { FrpContender } from './contenders/frp.js';
import { NginxContender } from './contenders/nginx.js';
import { NodeRelayContender } from './contenders/node-relay.js';
import { TunaContender } from './contenders/tuna.js';
import { runDownload, runFixedRate, runUpload, runWrk } from './load.js';
import { ProcessGroup } from './processes.js';
import type { Running } from './rounds.js';
import { measureSharedBindings } from '../bindings/index.js';
import { inRounds, startAll } from './rounds.js';
import type { Figures } from './table.js';
import { renderSection } from './section.js';
import { emptyFigures, formatNumber } from './table.js';
import { toolsNeeded } from './plan.js';
import { ensureTools, requireTool, toolVersions } from './tools.js';

/** TunnelBenchOptions tunes a run; every field has an environment variable and a default. */
export interface TunnelBenchOptions {
  /** rounds per figure (TUNA_BENCH_RUNS, default 3) */
  runs?: number;
  /** seconds per wrk / h2load run (TUNA_BENCH_SECONDS, default 5) */
  seconds?: number;
  /** bytes per download / upload (TUNA_BENCH_BYTES, default 1 GiB) */
  transferBytes?: number;
  /** offered rate of the latency figure (TUNA_BENCH_RATE, default 2,000 req/s) */
  rate?: number;
  /** idle tunnels of the memory figure (TUNA_BENCH_TUNNELS, default 1,000; 0 skips it) */
  tunnels?: number;
  /** contenders to run, by name (TUNA_BENCH_CONTENDERS, comma-separated; default all) */
  contenders?: string[];
  /** write docs/benchmarks.md (TUNA_BENCH_WRITE=0 to only print; default true) */
  writeReport?: boolean;
  /** seconds after which no further round starts (TUNA_BENCH_BUDGET, default 540) */
  budgetSeconds?: number;
  /** install missing tools with hack/bench-tools.sh before the run (TUNA_BENCH_INSTALL=0 to not; default true) */
  install?: boolean;
}

/** phaseShare is the cumulative share of the time budget by the end of each phase. */
const phaseShare = { rps: 0.15, latency: 0.35, download: 0.6, upload: 0.85, fresh: 1 } as const;

/** Run is the state of one run shared by its phases. */
interface Run {
  ctx: BenchContext;
  running: Running[];
  o: Resolved;
  started: number;
  /** run-wide notes (rounds cut by the time budget) */
  notes: string[];
}

/** deadlineOf is when `phase` must stop starting rounds. */
function deadlineOf(run: Run, phase: keyof typeof phaseShare): number {
  return run.started + run.o.budgetSeconds * 1000 * phaseShare[phase];
}

/** rounds runs one figure's rounds within its phase's deadline and notes a cut. */
async function rounds(run: Run, phase: keyof typeof phaseShare, figure: string, measure: (r: Running, round: number) => Promise<string>, running = run.running): Promise<void> {
  const done = await inRounds(running, run.o.runs, figure, measure, deadlineOf(run, phase));
  if (done < run.o.runs) run.notes.push(`- ${figure}: ${done} of ${run.o.runs} rounds (time budget of ${run.o.budgetSeconds} s)`);
}

type Resolved = Required<TunnelBenchOptions>;

export const allNames = ['direct', 'nginx', 'frp', 'frp-tcp', 'chisel', 'relay', 'tuna', 'tuna-1core', 'tuna-per-request', 'tuna-workers', 'tuna-processes'];
const connections = 64;
const wrkThreads = 2;
const latencyClients = 20;

/** resolveOptions fills unset options from the environment, then from the defaults. */
export function resolveOptions(options: TunnelBenchOptions, env: NodeJS.ProcessEnv = process.env): Resolved {
  const num = (value: number | undefined, name: string, fallback: number): number => {
    if (value !== undefined) return value;
    const text = env[name];
    const parsed = text === undefined || text === '' ? Number.NaN : Number(text);
    return Number.isFinite(parsed) && parsed >= 0 ? parsed : fallback;
  };
  return {
    runs: Math.max(1, num(options.runs, 'TUNA_BENCH_RUNS', 3)),
    seconds: Math.max(1, num(options.seconds, 'TUNA_BENCH_SECONDS', 5)),
    transferBytes: num(options.transferBytes, 'TUNA_BENCH_BYTES', 2 ** 30),
    rate: Math.max(latencyClients, num(options.rate, 'TUNA_BENCH_RATE', 2000)),
    tunnels: num(options.tunnels, 'TUNA_BENCH_TUNNELS', 1000),
    contenders: options.contenders ?? (env.TUNA_BENCH_CONTENDERS ? env.TUNA_BENCH_CONTENDERS.split(',').map((s) => s.trim()) : allNames),
    writeReport: options.writeReport ?? env.TUNA_BENCH_WRITE !== '0',
    budgetSeconds: Math.max(60, num(options.budgetSeconds, 'TUNA_BENCH_BUDGET', 540)),
    install: options.install ?? env.TUNA_BENCH_INSTALL !== '0',
  };
}

function makeContender(name: string): Contender {
  switch (name) {
    case 'direct':
      return directContender;
    case 'nginx':
      return new NginxContender();
    case 'frp':
      return new FrpContender('http');
    case 'frp-tcp':
      return new FrpContender('tcp');
    case 'chisel':
      return new ChiselContender();
    case 'relay':
      return new NodeRelayContender();
    case 'tuna':
      // both sides as users run them: `tuna edge` and `tuna http` without --workers / --processes,
      // one edge worker and one agent process per usable CPU (src/cli/cpu-limit.ts); spliced is the edge's default
      return new TunaContender('tuna (defaults: a worker and an agent process per CPU)', undefined, 'spliced', 'auto', 'auto');
    case 'tuna-1core':
      // the same, pinned to one process a side: what one core of each does
      return new TunaContender('tuna (1 worker, 1 process)', undefined, 'spliced', 1, 1);
    case 'tuna-per-request':
      return new TunaContender('tuna (per-request, 1 worker, 1 process)', undefined, 'per-request', 1, 1);
    case 'tuna-workers':
      // the edge as two worker processes sharing its listeners (`tuna edge --workers 2`)
      return new TunaContender('tuna (2 workers, 1 process)', undefined, undefined, 2, 1);
    case 'tuna-processes':
      // the agent as two processes for one binding (`tuna http --processes 2`, docs/tunnel-performance.md §8.2)
      return new TunaContender('tuna (1 worker, 2 agent processes)', undefined, undefined, 1, 2);
    case 'tuna-baseline':
      // another build of tuna side by side (an A/B run): TUNA_BENCH_TUNA_BASELINE names its dist/cli/main.js
      if (!process.env.TUNA_BENCH_TUNA_BASELINE) throw new Error('tuna-baseline needs TUNA_BENCH_TUNA_BASELINE=<path of a built dist/cli/main.js>');
      return new TunaContender('tuna (baseline)', process.env.TUNA_BENCH_TUNA_BASELINE);
    default:
      throw new Error(`unknown contender ${name}; known: ${allNames.join(', ')}`);
  }
}

/** runTunnelBench runs the whole `tunnel` part and (unless told not to) writes its report section. */
export async function runTunnelBench(options: TunnelBenchOptions = {}): Promise<void> {
  const o = resolveOptions(options);
  const contenders = o.contenders.map(makeContender);
  const tools = ensureTools(toolsNeeded(o.contenders), { install: o.install });
  for (const t of ['wrk', 'h2load', 'curl'] as const) requireTool(tools, t);
  const started = performance.now();
  const loadBefore = loadavg()[0] ?? 0;
  const group = new ProcessGroup();
  const tmp = await mkdtemp(join(tmpdir(), 'tuna-bench-'));
  // Every process of the run dies after this, whatever happens to the orchestrator's own timers.
  const lifetimeMs = (o.budgetSeconds + 600) * 1000;
  const all: Figures[] = contenders.map((c) => emptyFigures(c.name, c.describe()));
  try {
    const backend = await startBackend(group, lifetimeMs);
    const ctx: BenchContext = { tools, group, tmp, backendPort: backend.port, lifetimeMs };
    console.log(`tunnel bench: backend on 127.0.0.1:${backend.port}; ${o.runs} rounds; temp ${tmp}`);
    const run: Run = { ctx, running: await startAll(ctx, contenders, all), o, started, notes: [] };
    await measureLoad(run);
    await measureTransfers(run);
    await measureFresh(run);
    for (const r of run.running) await r.contender.stop(ctx).catch(() => undefined);
    const memoryOnly = await measureSharedConnection(o, contenders);
    const markdown = renderSection(all, {
      ...o,
      connections,
      wrkThreads,
      latencyClients,
      versions: toolVersions(tools),
      seconds: (performance.now() - started) / 1000,
      load: [loadBefore, loadavg()[0] ?? 0],
      notes: [...run.notes, ...group.unexpectedExits.map((e) => `- ${e}`)],
      memoryOnly,
    });
    console.log(`\n${markdown}`);
    if (o.writeReport) writeSection('tunnel', markdown);
  } finally {
    await group.close();
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * measureSharedConnection is the memory table's row for many bindings on one connection
 * (docs/tunnel-performance.md §6): `npm run bench -- bindings`' shared mode (the TunnelManager of
 * `tuna run` and the operator, each binding with its own key, over one TLS connection) with 1 and
 * with `tunnels` bindings, after the contenders stopped. Only when a tuna row runs and the memory figure is on.
 */
async function measureSharedConnection(o: Resolved, contenders: Contender[]): Promise<Figures[]> {
  if (o.tunnels <= 1 || !contenders.some((c) => c.name.startsWith('tuna'))) return [];
  const name = 'tuna (bindings on one connection)';
  const figures = emptyFigures(name, 'memory only: bench/bindings, shared mode');
  try {
    console.log(`idle memory · ${name}: 1 and ${o.tunnels} bindings`);
    const { rssOne, rssMany } = await measureSharedBindings(o.tunnels);
    figures.memory = {
      tunnels: o.tunnels,
      rssOne,
      rssMany,
      note: `${o.tunnels} bindings, each with its own key, on one TLS connection and HTTP/2 session (protocol version 2): the tunnel manager of \`tuna run\` and the operator (bench/bindings, through tsx)`,
    };
  } catch (err) {
    figures.failures.push(`idle memory: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  return [figures];
}

/** measureLoad takes requests/s (closed loop) and latency at a fixed rate (open loop). */
async function measureLoad(run: Run): Promise<void> {
  const { ctx, o } = run;
  console.log('warm-up');
  for (const r of run.running) await runWrk(ctx.group, ctx.tools.wrk, r.target, connections, wrkThreads, 1).catch(() => undefined);
  await rounds(run, 'rps', 'req/s', async (r) => {
    const res = await runWrk(ctx.group, ctx.tools.wrk, r.target, connections, wrkThreads, o.seconds);
    r.figures.rps.push(res.requestsPerSecond);
    r.figures.requestErrors += res.errors;
    return `${formatNumber(res.requestsPerSecond, 'req/s')} req/s${res.errors ? `, ${res.errors} errors` : ''}`;
  });
  await rounds(run, 'latency', 'latency', async (r) => {
    const res = await runFixedRate(ctx.group, ctx.tools.h2load, r.target, o.rate, latencyClients, o.seconds, ctx.tmp);
    r.figures.p50.push(res.p50);
    r.figures.p99.push(res.p99);
    r.figures.achievedRate.push(res.achievedRate);
    r.figures.requestErrors += res.errors;
    return `p50 ${formatNumber(res.p50, 'ms')}, p99 ${formatNumber(res.p99, 'ms')}, ${formatNumber(res.achievedRate, 'req/s')} req/s done`;
  });
}

/** measureTransfers times one big download and one big upload per contender per round. */
async function measureTransfers(run: Run): Promise<void> {
  const { ctx, o } = run;
  if (o.transferBytes <= 0) return;
  const transferTimeout = 180;
  await rounds(run, 'download', 'download', async (r) => {
    const res = await runDownload(ctx.group, ctx.tools.curl, r.target, o.transferBytes, transferTimeout);
    r.figures.download.push(res.megabytesPerSecond);
    return `${formatNumber(res.megabytesPerSecond, 'MB/s')} (${res.seconds.toFixed(2)} s)`;
  });
  await rounds(run, 'upload', 'upload', async (r) => {
    const res = await runUpload(ctx.group, r.target, o.transferBytes, transferTimeout);
    r.figures.upload.push(res.megabytesPerSecond);
    return `${formatNumber(res.megabytesPerSecond, 'MB/s')} (${res.seconds.toFixed(2)} s)`;
  });
}

/** measureFresh takes the per-tunnel figures: first byte on a fresh tunnel and idle memory. */
async function measureFresh(run: Run): Promise<void> {
  const { ctx, o } = run;
  const tunnels = run.running.filter((r) => r.contender.firstByte);
  await rounds(
    run,
    'fresh',
    'first byte',
    async (r, round) => {
      const ms = await (r.contender.firstByte as NonNullable<Contender['firstByte']>)(ctx, round);
      r.figures.firstByte.push(ms);
      return formatNumber(ms, 'ms');
    },
    tunnels,
  );
  if (o.tunnels <= 1) return;
  for (const r of run.running.filter((x) => x.contender.idleMemory)) {
    try {
      r.figures.memory = await (r.contender.idleMemory as NonNullable<Contender['idleMemory']>)(ctx, o.tunnels);
      console.log(`  idle memory · ${r.contender.name}: ${formatNumber(r.figures.memory.rssOne, 'MiB')} → ${formatNumber(r.figures.memory.rssMany, 'MiB')}`);
    } catch (err) {
      r.figures.failures.push(`idle memory: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
  }
}
