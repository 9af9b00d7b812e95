/**
 * scale benchmark: one `tuna operator` (keys in a Secret) and one store-mode
 * `tuna edge` serving N hosts on the local test cluster. For each N of `--hosts` (default
 * 100,1000,5000,10000) it adds Ingresses (one host each, one echo Service) in batches of at most
 * `--batch` (≤ 2,000) and measures: batch → every host of it answers 200 through the edge, one new
 * Ingress → 200, RSS, CPU and descriptors of both processes, operator↔edge TCP connections, control
 * API calls (the edge's `tuna_edge_control_requests_total`), and over `--idle-seconds` with nothing
 * changing, CPU and control API calls per minute. Writes the table to docs/benchmarks.md after each
 * N, so an interrupted run keeps what it measured. Every loop is bounded; all traffic is loopback.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { machineLine, writeSection } from '../report.js';
import { ProcessGroup } from '../tunnel/processes.js';
import { repoRoot } from '../tunnel/tools.js';
import type { SpawnedProcess } from '../tunnel/processes.js';
import { clusterDown, clusterUp, createIngresses, deleteNamespace, hostOf, prepareNamespace } from './cluster.js';
import { controlCalls, establishedTo, operatorSyncs, sampleProcess, waitAll200, waitOne200 } from './measure.js';
import type { OperatorSyncs } from './measure.js';
import { freePort } from '../tunnel/net.js';
import { IMAGE_NODE_FLAGS, buildCli, startScaleEdge, startScaleOperator } from './stack.js';
import type { ScaleEdge } from './stack.js';
import { renderScaleTable } from './table.js';
import type { ScaleRow } from './table.js';

const NAMESPACE = 'tuna-scale';
const MAX_BATCH = 2000;
/** the quiet spell before each "one new Ingress" round: the last round's status writes are done, and the change is the first after a quiet spell */
const ROUND_GAP_MS = 2000;

/** ScaleOptions are the benchmark's flags. */
export interface ScaleOptions {
  hosts: number[];
  batch: number;
  idleSeconds: number;
  batchTimeoutSeconds: number;
  /** how many times "one new Ingress → 200" is measured per level */
  rounds: number;
}

function positiveInt(flag: string, value: string | undefined, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (value === undefined || !/^\d+$/.test(value) || n < 1 || n > max) throw new Error(`scale bench: ${flag} must be a whole number 1..${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** parseScaleArgs reads `--hosts 100,1000`, `--batch 2000`, `--idle-seconds 60`, `--batch-timeout-seconds 600`, `--rounds 5`. */
export function parseScaleArgs(args: readonly string[]): ScaleOptions {
  const options: ScaleOptions = { hosts: [100, 1000, 5000, 10000], batch: MAX_BATCH, idleSeconds: 60, batchTimeoutSeconds: 600, rounds: 5 };
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i]!, args[i + 1]];
    if (flag === '--hosts') options.hosts = (value ?? '').split(',').map((v) => positiveInt('--hosts', v.trim(), 100_000));
    else if (flag === '--batch') options.batch = positiveInt('--batch', value, MAX_BATCH);
    else if (flag === '--idle-seconds') options.idleSeconds = positiveInt('--idle-seconds', value, 3600);
    else if (flag === '--batch-timeout-seconds') options.batchTimeoutSeconds = positiveInt('--batch-timeout-seconds', value, 7200);
    else if (flag === '--rounds') options.rounds = positiveInt('--rounds', value, 50);
    else throw new Error(`scale bench: unknown flag ${flag}; known: --hosts, --batch, --idle-seconds, --batch-timeout-seconds, --rounds`);
  }
  if (options.hosts.some((n, i) => i > 0 && n <= options.hosts[i - 1]!)) throw new Error('scale bench: --hosts must increase');
  return options;
}

async function waitWatching(operator: SpawnedProcess, timeoutMs: number): Promise<void> {
  let seen = false;
  operator.child.stdout?.on('data', (b: Buffer) => (seen ||= b.toString().includes('watching the cluster')));
  operator.child.stderr?.on('data', (b: Buffer) => (seen ||= b.toString().includes('watching the cluster')));
  const start = performance.now();
  while (!seen && performance.now() - start < timeoutMs) {
    if (operator.child.exitCode !== null) throw new Error(`operator exited ${operator.child.exitCode}: ${operator.output()}`);
    await sleep(200);
  }
  if (!seen) throw new Error(`operator not watching after ${timeoutMs} ms: ${operator.output()}`);
}

interface Stack {
  config: KubeConfig;
  edge: ScaleEdge;
  operator: SpawnedProcess;
  /** the operator's probes and /metrics (its sync counters) */
  healthPort: number;
  /** what died without being stopped ("operator exited SIGABRT ...: <telling line>") */
  failures: readonly string[];
}

async function measureLevel(stack: Stack, options: ScaleOptions, target: number, from: number): Promise<{ row: ScaleRow; count: number; failed: boolean }> {
  const { edge, operator, config } = stack;
  const hasFailed = () => stack.failures.length > 0;
  const calls = () => controlCalls(edge.metricsPort).catch(() => Number.NaN);
  const [op0, edge0, calls0] = [sampleProcess(operator.child.pid!), sampleProcess(edge.process.child.pid!), await calls()];
  let count = from;
  let batch: ScaleRow['batch'];
  while (count < target) {
    const added = Math.min(options.batch, target - count);
    const start = performance.now();
    await createIngresses(config, NAMESPACE, count, count + added);
    const createMs = performance.now() - start;
    const hosts = Array.from({ length: added }, (_, k) => hostOf(count + k));
    const all = await waitAll200(edge.httpPort, hosts, options.batchTimeoutSeconds * 1000, start, hasFailed);
    count += added;
    batch = { added, createMs, allMs: all.ms, pending: all.pending, lastStatuses: all.lastStatuses };
    console.log(`  ${count} hosts: +${added} created in ${(createMs / 1000).toFixed(1)} s, all 200 after ${(all.ms / 1000).toFixed(1)} s (${all.pending} not)`);
    if (all.pending > 0) break;
  }
  const failed = (batch?.pending ?? 0) > 0 || hasFailed();
  const oneNew: OneNewRound[] = [];
  for (let round = 0; round < options.rounds && !failed && !hasFailed(); round++) {
    await sleep(ROUND_GAP_MS);
    const measured = await measureOneNew(stack, count);
    count += 1;
    if (measured === undefined) break;
    oneNew.push(measured);
  }
  if (!failed) console.log(`  one new Ingress → 200: ${oneNew.map((r) => Math.round(r.ms)).join(', ') || 'never'} ms (${oneNew.length} of ${options.rounds} rounds)`);
  const [op1, edge1, calls1] = [sampleProcess(operator.child.pid!), sampleProcess(edge.process.child.pid!), await calls()];
  const connections = establishedTo(edge.tunnelPort);
  // Idle: let the last changes settle, then nothing changes for the window (skipped after a crash).
  if (!hasFailed()) await sleep(10_000);
  // the bench's own scrape of the edge's /metrics (10,000 series of tuna_edge_tunnels at 10,000 hosts)
  // happens before the window's first CPU sample and after its last, so the idle CPU is the edge's own
  const callsIdle0 = await calls();
  const [opIdle0, edgeIdle0] = [sampleProcess(operator.child.pid!), sampleProcess(edge.process.child.pid!)];
  if (!hasFailed()) await sleep(options.idleSeconds * 1000);
  const [opIdle1, edgeIdle1, callsIdle1] = [sampleProcess(operator.child.pid!), sampleProcess(edge.process.child.pid!), await calls()];
  const row: ScaleRow = {
    hosts: target,
    batch,
    oneNew: summarizeRounds(oneNew, options.rounds),
    operator: { rssBytes: op1.rssBytes, cpuSeconds: op1.cpuSeconds - op0.cpuSeconds, fds: op1.fds },
    edge: { rssBytes: edge1.rssBytes, cpuSeconds: edge1.cpuSeconds - edge0.cpuSeconds, fds: edge1.fds },
    connections,
    controlCalls: calls1 - calls0,
    idle: {
      seconds: options.idleSeconds,
      operatorCpuPercent: ((opIdle1.cpuSeconds - opIdle0.cpuSeconds) / options.idleSeconds) * 100,
      edgeCpuPercent: ((edgeIdle1.cpuSeconds - edgeIdle0.cpuSeconds) / options.idleSeconds) * 100,
      // the metrics scrape itself is not a control API call (it is on the metrics listener)
      controlCallsPerMinute: ((callsIdle1 - callsIdle0) / options.idleSeconds) * 60,
    },
    ...(hasFailed() ? { failure: stack.failures.join('; ') } : {}),
  };
  return { row, count, failed };
}

/** OneNewRound is one "one new Ingress → 200" measurement and what the operator's counters say of it. */
interface OneNewRound {
  ms: number;
  createMs: number;
  syncs: OperatorSyncs;
}

/**
 * measureOneNew creates one Ingress and waits for its 200 (undefined: never within 120 s). The
 * operator's sync counters are read before the create and 2 s after the 200, so the syncs the
 * change caused (and its statuses' writes) are counted whole.
 */
async function measureOneNew(stack: Stack, i: number): Promise<OneNewRound | undefined> {
  const before = await operatorSyncs(stack.healthPort);
  const start = performance.now();
  await createIngresses(stack.config, NAMESPACE, i, i + 1);
  const createMs = performance.now() - start;
  const ms = await waitOne200(stack.edge.httpPort, hostOf(i), 120_000, start, () => stack.failures.length > 0);
  if (ms === undefined) return undefined;
  await sleep(ROUND_GAP_MS);
  const after = await operatorSyncs(stack.healthPort);
  const phases = Object.fromEntries(Object.entries(after.phases).map(([k, v]) => [k, v - before.phases[k as keyof OperatorSyncs['phases']]])) as OperatorSyncs['phases'];
  return { ms, createMs, syncs: { count: after.count - before.count, ms: after.ms - before.ms, phases } };
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** summarizeRounds gives the table's view of the rounds: the median, fastest and slowest, and the medians of their parts. */
function summarizeRounds(rounds: readonly OneNewRound[], asked: number): ScaleRow['oneNew'] {
  if (rounds.length === 0) return { asked, rounds: [] };
  const phases = Object.fromEntries(Object.keys(rounds[0]!.syncs.phases).map((k) => [k, median(rounds.map((r) => r.syncs.phases[k as keyof OperatorSyncs['phases']]))])) as OperatorSyncs['phases'];
  return {
    asked,
    rounds: rounds.map((r) => r.ms),
    createMs: median(rounds.map((r) => r.createMs)),
    syncs: { count: median(rounds.map((r) => r.syncs.count)), ms: median(rounds.map((r) => r.syncs.ms)), phases },
  };
}

/** codeLine names the commit the run built (and says when the worktree had changes on top). */
function codeLine(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const isDirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench'], { cwd: repoRoot, encoding: 'utf8' }).trim() !== '';
    return `commit ${commit}${isDirty ? ' with uncommitted changes' : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

function section(rows: readonly ScaleRow[], options: ScaleOptions, load: { before: number; after: number }, code: string): string {
  return `## scale: one operator and one edge, N hosts

\`npm run bench -- scale [--hosts ${options.hosts.join(',')}] [--batch ${options.batch}] [--idle-seconds ${options.idleSeconds}] [--rounds ${options.rounds}]\`, on the local
test cluster (hack/cluster/up.sh; hold the cluster tier's lock, one test cluster per machine).
Code: ${code}. Machine: ${machineLine()}; 1-minute load average ${load.before.toFixed(1)} before, ${load.after.toFixed(1)} after (other jobs share these cores).

- A store-mode \`tuna edge\` (SQLite) and \`tuna operator --keys-namespace\` (keys in a Secret), both the built CLI run as the images run it (\`node ${IMAGE_NODE_FLAGS.join(' ')}\`)${process.env['TUNA_BENCH_NODE_FLAGS'] ? ` plus \`${process.env['TUNA_BENCH_NODE_FLAGS']}\`` : ''}; one echo-basic pod behind one Service.
- Per N: Ingresses (one host each) added in batches of ≤ ${options.batch}; **batch → all 200** runs from the first create call of the level's last batch until every host of that batch answered 200 through the edge's HTTP listener (32 requests in flight, each host asked until its first 200), and in brackets how long the creates took and how long after the last create every host answered; then **one new Ingress → 200**, create call to first 200, measured ${options.rounds} times (${ROUND_GAP_MS / 1000} s of quiet before each): the median, and in brackets the fastest and slowest; **its parts** (medians over the rounds): the create call, and the operator's syncs from its own counters (\`tuna_operator_sync_phase_seconds_total\`, read before the create and ${ROUND_GAP_MS / 1000} s after the 200, so the status writes' syncs count too): how many, their time, and that time by phase (translate / validate / reconcile the edge / apply / statuses).
- RSS and descriptors at the end of the level; CPU = CPU-seconds spent while the level was added; TCP = ESTABLISHED connections to the edge's tunnel listener; control-API calls from the edge's \`tuna_edge_control_requests_total\`.
- Idle: 10 s after the level, ${options.idleSeconds} s with nothing changing: CPU in % of one core, control-API calls per minute.

${renderScaleTable(rows)}`;
}

/** runScaleBench runs the benchmark with the flags after `scale` and rewrites its section. */
export async function runScaleBench(args: readonly string[]): Promise<void> {
  const options = parseScaleArgs(args);
  const dir = mkdtempSync(join(tmpdir(), 'tuna-scale-'));
  console.log(`  logs: ${dir}`);
  const loadBefore = loadavg()[0] ?? 0;
  // the commit built now: the worktree may move on while a long run goes
  const code = codeLine();
  buildCli();
  const group = new ProcessGroup();
  const cluster = await clusterUp();
  const rows: ScaleRow[] = [];
  try {
    await prepareNamespace(cluster.config, NAMESPACE);
    const edge = await startScaleEdge(group, dir);
    const healthPort = await freePort();
    const operator = startScaleOperator(group, edge, cluster.kubeconfig, NAMESPACE, dir, healthPort);
    await waitWatching(operator, 120_000);
    const stack: Stack = { config: cluster.config, edge, operator, healthPort, failures: group.unexpectedExits };
    let count = 0;
    for (const target of options.hosts) {
      console.log(`  level ${target}`);
      const level = await measureLevel(stack, options, target, count);
      count = level.count;
      rows.push(level.row);
      writeSection('scale', section(rows, options, { before: loadBefore, after: loadavg()[0] ?? 0 }, code));
      if (level.failed) break;
    }
    console.log(renderScaleTable(rows));
  } finally {
    await group.close();
    await deleteNamespace(cluster.config, NAMESPACE);
    await clusterDown(cluster);
  }
}
