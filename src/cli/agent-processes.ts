import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { clusterEntry, isTunaMessage, restartDelayMs, stopWorkers, untilPrimaryStops } from './cluster-entry.js';
import type { PrimaryLog } from './edge-workers.js';

/**
 * `tuna http --processes N` (docs/tunnel-performance.md §8.2): N agent processes (node:cluster)
 * publish the same binding, each with its own tunnel connections (`--connections` each), so the
 * agent's per-request work (Node's HTTP/1.1 server and client, on a spliced connection the whole
 * cost) spreads over N cores; the edge spreads public connections over a binding's tunnels by
 * their open streams. The processes share nothing but the key, and every connection counts
 * against that key's connection cap at the edge.
 *
 * The primary opens no tunnel: it starts the processes, restarts one that dies, and on
 * SIGINT/SIGTERM tells every process to drain and waits for them. Process 0 alone runs the request
 * inspector and prints the banner.
 */

/** AGENT_PROCESS_ENV names the process an agent is (`<index>/<count>`); set by the primary on fork. */
export const AGENT_PROCESS_ENV = 'TUNA_AGENT_PROCESS';

/** AgentProcess is one of the primary's agent processes, as that process sees itself. */
export interface AgentProcess {
  index: number;
  /** ready tells the primary this process serves (its first graph is applied) */
  ready: () => void;
  /** stop resolves when the primary says stop, the primary is gone, or a signal reaches this process */
  stop: Promise<string>;
}

type ProcessMessage = { tuna: 'agent-ready' } | { tuna: 'agent-stop' };

/** agentProcessOf is the agent process this one is, when the primary started it as one. */
export function agentProcessOf(env: NodeJS.ProcessEnv, stopSignal: Promise<string>): AgentProcess | undefined {
  if (!cluster.isWorker) return undefined;
  const match = /^(\d+)\/(\d+)$/.exec(env[AGENT_PROCESS_ENV] ?? '');
  if (match === null || Number(match[1]) >= Number(match[2])) return undefined;
  return {
    index: Number(match[1]),
    ready: () => process.send?.({ tuna: 'agent-ready' } satisfies ProcessMessage),
    stop: untilPrimaryStops('agent-stop', stopSignal),
  };
}

// SIGTERM: processes drain (a tunnel's drain timeout is 30 s), then are killed.
const STOP_GRACE_MS = 40_000;

/**
 * runAgentPrimary forks `count` agent processes of `tuna <command> <args>` and supervises them
 * until the stop signal; it resolves with the exit status: that of a process that failed to
 * start (its reason is on stderr), else 0 once every process has exited.
 */
export async function runAgentPrimary(command: string, count: number, args: string[], log: PrimaryLog, stopSignal: Promise<string>): Promise<number> {
  cluster.setupPrimary({ ...clusterEntry(), args: [command, ...args] });
  const processes = new Map<number, Worker>();
  let isStopping = false;
  let isStarted = false;
  const restarts = new Map<number, number>();

  const fork = (index: number): Promise<void> => {
    const worker = cluster.fork({ [AGENT_PROCESS_ENV]: `${index}/${count}` });
    processes.set(index, worker);
    const startedAt = Date.now();
    let isReady = false;
    return new Promise((resolve, reject) => {
      worker.on('message', (m: unknown) => {
        if (!isTunaMessage(m) || m.tuna !== 'agent-ready') return;
        isReady = true;
        log.info(`tuna ${command}: agent process ${index} (pid ${worker.process.pid}) serves`, { process: index, pid: worker.process.pid });
        resolve();
      });
      worker.once('exit', (code, signal) => {
        if (!isReady) {
          reject(Object.assign(new Error(`agent process ${index} exited (${String(signal ?? code)}) before it served`), { exitCode: code !== null && code !== 0 ? code : 1 }));
          if (!isStarted) return;
        }
        // exit 0 is a process told to stop (Ctrl-C reaches every process of the group): not restarted
        if (processes.get(index) !== worker || isStopping || code === 0) return;
        const previous = restarts.get(index);
        const delayMs = restartDelayMs(previous, startedAt);
        restarts.set(index, delayMs);
        log.notice(`tuna ${command}: agent process ${index} exited (${signal ?? code}); restarting in ${delayMs} ms`, { process: index, code, signal });
        setTimeout(() => {
          if (!isStopping) fork(index).catch(() => undefined);
        }, delayMs);
      });
    });
  };

  try {
    await Promise.all(Array.from({ length: count }, (_, i) => fork(i)));
  } catch (err) {
    isStopping = true;
    for (const w of processes.values()) w.kill();
    const exitCode = (err as { exitCode?: number }).exitCode;
    if (exitCode === undefined) throw err;
    log.error(`tuna ${command}: ${(err as Error).message}`, { exitCode });
    return exitCode;
  }
  isStarted = true;
  log.info(`tuna ${command}: ${count} agent processes serve the binding`, { processes: count });
  const signal = await stopSignal;
  isStopping = true;
  log.notice(`${signal}: draining ${count} agent processes`, { signal });
  await stopWorkers(processes.values(), { tuna: 'agent-stop' } satisfies ProcessMessage, STOP_GRACE_MS);
  return 0;
}
