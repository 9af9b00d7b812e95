import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

/** Helpers to run `tuna edge` as a real process (it forks workers: `--workers N`), for end-to-end tests. */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** TunaProcess is a running `tuna` command (its own process, the sources through tsx) with its output so far. */
export interface TunaProcess {
  child: ChildProcess;
  /** stdout so far (for the edge: the primary's and the workers' lines) */
  out(): string;
  stderr(): string;
  /** waitForOut resolves once stdout matches `pattern` `times` times (bounded by timeoutMs) */
  waitForOut(pattern: RegExp, times?: number, timeoutMs?: number): Promise<RegExpMatchArray[]>;
}

/** EdgeProcess is a running `tuna edge` process with its output so far. */
export interface EdgeProcess extends TunaProcess {
  tunnelPort: number;
  httpPort: number;
}

/** spawnTuna runs `tuna ARGS` as its own process and captures its output. */
export function spawnTuna(args: string[], env: NodeJS.ProcessEnv = {}): TunaProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const wakers = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    for (const w of wakers) w();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  child.once('exit', () => {
    for (const w of wakers) w();
  });
  const waitForOut = async (pattern: RegExp, times = 1, timeoutMs = 30_000): Promise<RegExpMatchArray[]> => {
    const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const matches = [...out.matchAll(global)];
      if (matches.length >= times) return matches;
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`tuna ${args[0]} exited (${child.exitCode ?? child.signalCode}): ${out} ${err}`);
      if (Date.now() > deadline) throw new Error(`no ${times}× ${pattern} within ${timeoutMs} ms: ${out} ${err}`);
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          wakers.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 250);
        wakers.add(wake);
      });
    }
  };
  return { child, out: () => out, stderr: () => err, waitForOut };
}

/** startEdgeProcess runs `tuna edge ARGS` and waits for its ports line. */
export async function startEdgeProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<EdgeProcess> {
  const edge = spawnTuna(['edge', ...args], env);
  try {
    const [m] = await edge.waitForOut(/tunnel listener on port (\d+), public HTTP on port (\d+)/);
    return { ...edge, tunnelPort: Number(m![1]), httpPort: Number(m![2]) };
  } catch (e) {
    edge.child.kill('SIGKILL');
    throw e;
  }
}

/** stopEdgeProcess sends `signal` (to any TunaProcess) and waits for the exit (SIGKILL after 30 s); it resolves with the exit code. */
export async function stopEdgeProcess(edge: TunaProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (edge === undefined) return null;
  const { child } = edge;
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
  return child.exitCode;
}

/** httpGet sends GET over a fresh connection (no keep-alive agent), so cluster's primary hands each to the next worker. */
export function httpGet(port: number, path: string, headers: http.OutgoingHttpHeaders = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject);
  });
}

/**
 * scrapeWorkers reads `/metrics` ONCE (a worker's answer is the whole node's, gathered by the
 * primary: docs/edge.md, "Workers") and splits its series by their `worker` label, for each of
 * `count` workers found; a worker with no series is missing from the map.
 */
export async function scrapeWorkers(port: number, count: number, headers: http.OutgoingHttpHeaders = {}): Promise<Map<number, string>> {
  const { status, body } = await httpGet(port, '/metrics', headers);
  if (status !== 200) throw new Error(`/metrics answered ${status}`);
  const lines = new Map<number, string[]>();
  for (const line of body.split('\n')) {
    const m = /worker="(\d+)"/.exec(line);
    if (m === null || Number(m[1]) >= count) continue;
    lines.set(Number(m[1]), [...(lines.get(Number(m[1])) ?? []), line]);
  }
  return new Map([...lines].map(([w, l]) => [w, l.join('\n')]));
}

/** countOf sums the series of a metric in a scrape whose labels contain `labels` (e.g. `code="200"`). */
export function countOf(scrape: string, metric: string, labels = ''): number {
  let n = 0;
  for (const line of scrape.split('\n')) {
    if (!line.startsWith(`${metric}{`) || !line.includes(labels)) continue;
    n += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return n;
}
