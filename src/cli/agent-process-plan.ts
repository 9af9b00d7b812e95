import { isLeft } from 'fp-ts/lib/Either.js';
import { UsageError } from './errors.js';
import { PositiveIntString } from './flags.js';
import { usableCpuCount } from './cpu-limit.js';
import type { SharedExchange } from '../inspector/index.js';
// a type only: the cluster code of edge-workers.ts is not loaded
import type { PrimaryLog } from './edge-workers.js';

/**
 * How many agent processes `tuna http` runs (docs/cli.md "Processes"): `--processes N` (or
 * `$TUNA_PROCESSES`) pins N; without either, as many as the CPUs it may use (cpu-limit.ts, the
 * same count as the edge's default workers), unless something it was asked for works in one
 * process only, which the plan names in one line. A pinned count that conflicts is the caller's
 * usage error; the default never is.
 */

/** MAX_PROCESSES bounds the count: more agent processes than this is a typo, not a machine (each holds its own connections and memory). */
export const MAX_PROCESSES = 64;

/** ProcessPlan is how many agent processes to run and why. */
export interface ProcessPlan {
  count: number;
  /** isPinned: `--processes` or `$TUNA_PROCESSES` said the count (a process the edge refuses is then an error) */
  isPinned: boolean;
  /** note is the one line that says why the default runs one process, when something asked for needs that */
  note?: string;
}

/** pinnedProcesses reads `--processes N`, else `$TUNA_PROCESSES`; undefined when neither says a count. */
export function pinnedProcesses(flag: unknown, env: NodeJS.ProcessEnv, command: string): number | undefined {
  const fromEnv = env.TUNA_PROCESSES !== undefined && env.TUNA_PROCESSES !== '';
  if (flag === undefined && !fromEnv) return undefined;
  const text = flag ?? env.TUNA_PROCESSES;
  const name = flag === undefined ? '$TUNA_PROCESSES' : '--processes';
  const decoded = PositiveIntString.decode(text);
  if (isLeft(decoded) || decoded.right > MAX_PROCESSES) throw new UsageError(`tuna ${command}: ${name} ${JSON.stringify(text)} must be a whole number from 1 to ${MAX_PROCESSES}`);
  return decoded.right;
}

/**
 * planProcesses is the pinned count when there is one; else one process when `single` names a
 * reason (the first becomes the note) or only one CPU may be used; else the usable CPUs, up to
 * MAX_PROCESSES.
 */
export function planProcesses(pinned: number | undefined, single: readonly string[], cpus: number = usableCpuCount()): ProcessPlan {
  if (pinned !== undefined) return { count: pinned, isPinned: true };
  const count = Math.min(Math.max(1, Math.floor(cpus)), MAX_PROCESSES);
  if (count > 1 && single.length > 0) return { count: 1, isPinned: false, note: `one agent process, not ${count}: ${single[0]}; --processes N runs N` };
  return { count, isPinned: false };
}

/** ProcessGroup is what process 0 of a plan serves with (serve.ts): when to start the others, its stop, and its status. */
export interface ProcessGroup {
  /** afterApply forks the others once this process serves (a no-op for one process) */
  afterApply: () => void;
  /** stop resolves on the command's signal, or when another process could not start (a pinned count) */
  stop: Promise<string>;
  /** finish waits for the others to exit once this process drained, and is the command's status */
  finish: () => Promise<number>;
}

/**
 * processGroupOf runs the plan from process 0 (`onExchange` takes the others' exchanges for its
 * request inspector): the cluster code (agent-processes.ts) is loaded
 * only once there is more than one process, after the first graph is applied, so that it
 * delays neither the first byte nor a `tuna http` of one process.
 */
export function processGroupOf(plan: ProcessPlan, command: string, args: string[], log: PrimaryLog, stopSignal: Promise<string>, onExchange?: (exchange: SharedExchange) => void): ProcessGroup {
  if (plan.count <= 1) return { afterApply: () => undefined, stop: stopSignal, finish: () => Promise.resolve(0) };
  let others: Promise<{ stop(signal: string): Promise<void> } | undefined> = Promise.resolve(undefined);
  let status = 0;
  let isStopped = false;
  let startOthers: () => void = () => undefined;
  const stop = new Promise<string>((resolve) => {
    const stopAll = (signal: string): void => {
      isStopped = true;
      resolve(signal);
      void others.then((group) => group?.stop(signal));
    };
    void stopSignal.then(stopAll);
    startOthers = () => {
      // a signal while the first graph was applied: there is nobody to start
      if (isStopped) return;
      others = import('./agent-processes.js').then((m) => {
        const group = m.startAgentProcesses(command, plan.count, args, log, plan.isPinned, onExchange);
        void group.failed.then((code) => ((status = code), stopAll('an agent process could not start')));
        return group;
      });
    };
  });
  return {
    afterApply: () => startOthers(),
    stop,
    finish: async () => {
      await (await others)?.stop('stop');
      return status;
    },
  };
}

/**
 * serveAsAgentProcess serves as process 1 … N − 1. With the default count, a refusal for the key's
 * connection cap is no error: this process tells process 0, which serves with those the cap let
 * in, and exits without a word of its own.
 */
export async function serveAsAgentProcess(serve: () => Promise<number>, asProcess: { capped: () => void }, isPinned: boolean): Promise<number> {
  try {
    return await serve();
  } catch (err) {
    // recognised by its stable code, as explain.ts does
    const refusal = err as { code?: unknown; statusCode?: unknown };
    if (isPinned || refusal.code !== 'TUNA_TUNNEL_REFUSED' || refusal.statusCode !== 429) throw err;
    asProcess.capped();
    return 75;
  }
}
