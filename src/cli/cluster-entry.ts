import type { Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';

/**
 * clusterEntry is what a worker (an edge worker, or an agent process of `tuna http --processes`) runs: the script this process was started with when it is tuna's
 * (bin/tuna.js finds dist/ or registers tsx itself; src/cli/main.ts under `--import tsx`), else
 * (tuna run inside another program, e.g. a test) src/cli/main beside this file, under tsx when it
 * is TypeScript, with the repository's tsconfig (decorators) whatever the working directory.
 */
export function clusterEntry(): { exec: string; execArgv: string[] } {
  // `--import tsx` resolves from the working directory, which `npm run tuna` changes (runMain): pin it.
  const execArgv = process.execArgv.map((a, i, all) => (a === 'tsx' && all[i - 1] === '--import' ? import.meta.resolve('tsx') : a === '--import=tsx' ? `--import=${import.meta.resolve('tsx')}` : a));
  const started = process.argv[1] ?? '';
  if (/(^|[\\/])(bin[\\/]tuna\.js|cli[\\/]main\.[jt]s)$/.test(started)) return { exec: started, execArgv };
  const isTs = fileURLToPath(import.meta.url).endsWith('.ts');
  const exec = fileURLToPath(new URL(`./main${isTs ? '.ts' : '.js'}`, import.meta.url));
  if (!isTs || execArgv.some((a) => a.includes('tsx'))) return { exec, execArgv };
  process.env.TSX_TSCONFIG_PATH ??= fileURLToPath(new URL('../../tsconfig.json', import.meta.url));
  return { exec, execArgv: [...execArgv, '--import', import.meta.resolve('tsx')] };
}

/** isTunaMessage says whether a cluster IPC message is one of tuna's own (`{ tuna: kind, … }`). */
export function isTunaMessage(m: unknown): m is { tuna: string } {
  return typeof m === 'object' && m !== null && typeof (m as { tuna?: unknown }).tuna === 'string';
}

/**
 * untilPrimaryStops is a worker's stop: it resolves with 'stop' when the primary sends
 * `{ tuna: stopKind }`, with 'disconnect' when the primary is gone (killed: nobody will say stop),
 * or with the signal that reached this process first.
 */
export function untilPrimaryStops(stopKind: string, stopSignal: Promise<string>): Promise<string> {
  return new Promise((resolve) => {
    process.on('message', (m: unknown) => {
      if (isTunaMessage(m) && m.tuna === stopKind) resolve('stop');
    });
    process.once('disconnect', () => resolve('disconnect'));
    void stopSignal.then(resolve);
  });
}

// A worker that dies is restarted after this long, doubling up to 10 s while it keeps dying young.
const RESTART_FIRST_MS = 100;
const RESTART_MAX_MS = 10_000;
const HEALTHY_AFTER_MS = 10_000;

/**
 * restartDelayMs is how long to wait before restarting a worker that died after running since
 * `startedAt`: 100 ms for the first death or after a healthy run (10 s), else twice the
 * `previousMs` delay, up to 10 s.
 */
export function restartDelayMs(previousMs: number | undefined, startedAt: number, now = Date.now()): number {
  return previousMs === undefined || now - startedAt > HEALTHY_AFTER_MS ? RESTART_FIRST_MS : Math.min(previousMs * 2, RESTART_MAX_MS);
}

/**
 * stopWorkers sends `stop` to every live worker and resolves once all have exited; a worker still
 * running after `graceMs` is killed (SIGKILL).
 */
export async function stopWorkers(workers: Iterable<Worker>, stop: object, graceMs: number): Promise<void> {
  const live = [...workers].filter((w) => !w.isDead());
  const exited = Promise.all(live.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve())))));
  for (const w of live) if (w.isConnected()) w.send(stop);
  const grace = setTimeout(() => {
    for (const w of live) if (!w.isDead()) w.kill('SIGKILL');
  }, graceMs);
  await exited;
  clearTimeout(grace);
}
