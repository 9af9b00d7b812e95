/**
 * What the scale benchmark reads about its processes and the edge, all from this machine: /proc
 * (memory, CPU time, descriptors, TCP connections), the edge's /metrics on loopback, and public
 * requests to the edge's HTTP listener on loopback (one Host each).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { rssBytes } from '../tunnel/memory.js';
import { loopback, probe } from '../tunnel/net.js';

const ticksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** ProcessSample is one process's resident memory, CPU time so far and open descriptors. */
export interface ProcessSample {
  rssBytes: number;
  cpuSeconds: number;
  fds: number;
}

/** sampleProcess reads /proc for one pid (zeros once it is gone). */
export function sampleProcess(pid: number): ProcessSample {
  let cpuSeconds = 0;
  let fds = 0;
  try {
    // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    cpuSeconds = (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
    fds = readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    // gone
  }
  return { rssBytes: rssBytes(pid), cpuSeconds, fds };
}

/** establishedTo counts ESTABLISHED IPv4 TCP connections whose local port is `port` (the edge's side of each). */
export function establishedTo(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  let count = 0;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length > 3 && cols[1]?.endsWith(`:${hex}`) && cols[3] === '01') count++;
  }
  return count;
}

/** scrapeMetrics reads a Prometheus exposition from a loopback port's /metrics. */
export function scrapeMetrics(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: loopback, port, path: '/metrics', agent: false, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(text));
    });
    req.once('timeout', () => req.destroy(new Error('metrics: timeout')));
    req.once('error', reject);
    req.end();
  });
}

/** sumSeries adds the values of every sample of one metric whose labels include `labels` (`phase="translate"`). */
export function sumSeries(text: string, name: string, labels = ''): number {
  return text
    .split('\n')
    .filter((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(labels))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}

/** controlCalls sums `tuna_edge_control_requests_total` from the edge's metrics listener. */
export async function controlCalls(metricsPort: number): Promise<number> {
  return sumSeries(await scrapeMetrics(metricsPort), 'tuna_edge_control_requests_total');
}

/** SYNC_PHASES are the phases of `tuna_operator_sync_phase_seconds_total`, in the order a sync runs them. */
export const SYNC_PHASES = ['read', 'translate', 'admit', 'reconcile', 'apply', 'status'] as const;

/** OperatorSyncs is what the operator's /metrics says about its syncs so far: how many, their time, their time per phase (ms). */
export interface OperatorSyncs {
  count: number;
  ms: number;
  phases: Record<(typeof SYNC_PHASES)[number], number>;
}

/** operatorSyncs reads the operator's sync counters from its health listener. */
export async function operatorSyncs(healthPort: number): Promise<OperatorSyncs> {
  const text = await scrapeMetrics(healthPort);
  const phases = Object.fromEntries(SYNC_PHASES.map((p) => [p, sumSeries(text, 'tuna_operator_sync_phase_seconds_total', `phase="${p}"`) * 1000])) as OperatorSyncs['phases'];
  return { count: sumSeries(text, 'tuna_operator_sync_duration_seconds_count'), ms: sumSeries(text, 'tuna_operator_sync_duration_seconds_sum') * 1000, phases };
}

/** AllAnswered is how long until every host answered 200, or which did not within the bound. */
export interface AllAnswered {
  ms: number;
  pending: number;
  /** what the last round answered, by status (or connection error) */
  lastStatuses: Record<string, number>;
}

/**
 * waitAll200 asks every host in rounds (at most `concurrency` requests in flight) until each has
 * answered 200 once, or `timeoutMs` passed; hosts that answered are not asked again. Bounded: the
 * loop ends at the deadline whatever the edge answers, or as soon as `hasFailed` (a process died).
 */
export async function waitAll200(
  httpPort: number,
  hosts: readonly string[],
  timeoutMs: number,
  start = performance.now(),
  hasFailed: () => boolean = () => false,
  concurrency = 32,
): Promise<AllAnswered> {
  let pending = [...hosts];
  let lastStatuses: Record<string, number> = {};
  while (pending.length > 0 && performance.now() - start < timeoutMs && !hasFailed()) {
    const still: string[] = [];
    const counts: Record<string, number> = {};
    let next = 0;
    const worker = async () => {
      while (next < pending.length) {
        const host = pending[next++]!;
        const result = await probe({ port: httpPort, host }, '/', 5_000);
        const key = 'status' in result ? String(result.status) : result.error;
        counts[key] = (counts[key] ?? 0) + 1;
        if (!('status' in result) || result.status !== 200) still.push(host);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, pending.length) }, worker));
    lastStatuses = counts;
    pending = still;
    if (pending.length > 0) await sleep(200);
  }
  return { ms: performance.now() - start, pending: pending.length, lastStatuses };
}

/** waitOne200 asks one host every 10 ms until it answers 200 (bounded by `timeoutMs`); undefined when it never did. */
export async function waitOne200(httpPort: number, host: string, timeoutMs: number, start = performance.now(), hasFailed: () => boolean = () => false): Promise<number | undefined> {
  while (performance.now() - start < timeoutMs && !hasFailed()) {
    const result = await probe({ port: httpPort, host }, '/', 5_000);
    if ('status' in result && result.status === 200) return performance.now() - start;
    await sleep(10);
  }
  return undefined;
}
