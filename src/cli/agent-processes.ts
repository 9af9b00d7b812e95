import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { clusterEntry, isTunaMessage, restartDelayMs, stopWorkers, untilPrimaryStops } from './cluster-entry.js';
import type { PrimaryLog } from './edge-workers.js';
import type { SharedExchange } from '../inspector/index.js';

/**
 * `tuna http --processes N` (docs/cli.md "Processes", docs/tunnel-performance.md §8.2): N agent
 * processes publish the same binding, each with its own tunnel connections (`--connections`
 * each), so the agent's per-request work (Node's HTTP/1.1 server and client, on a spliced
 * connection the whole cost) spreads over N cores; the edge spreads public connections over a
 * binding's tunnels by their open streams. The processes share nothing but the key, and every
 * connection counts against that key's connection cap at the edge.
 *
 * The command's own process is process 0: it serves as a single `tuna http` does (the request
 * inspector, the banner), and once its first graph is applied it forks the N − 1 others
 * (node:cluster), restarts one that dies, and on SIGINT/SIGTERM tells them to drain as it drains
 * itself. So the first byte comes as soon as with one process (a primary that only supervised
 * forked first: 178 → 314 ms, §8.2).
 */

/** AGENT_PROCESS_ENV names the process an agent is (`<index>/<count>`); set by the primary on fork. */
export const AGENT_PROCESS_ENV = 'TUNA_AGENT_PROCESS';

/** AgentProcess is one of the primary's agent processes, as that process sees itself. */
export interface AgentProcess {
  index: number;
  /** ready tells the primary this process serves (its first graph is applied) */
  ready: () => void;
  /** capped tells the primary the edge refused this process for the key's connection cap (it then exits) */
  capped: () => void;
  /** handExchange gives process 0's request inspector an exchange this process served */
  handExchange: (exchange: SharedExchange) => void;
  /** stop resolves when the primary says stop, the primary is gone, or a signal reaches this process */
  stop: Promise<string>;
}

// `agent-capped`: the edge refused this process's connection for the key's connection cap
// `agent-exchange`: an exchange this process served, for process 0's request inspector
type ProcessMessage = { tuna: 'agent-ready' } | { tuna: 'agent-stop' } | { tuna: 'agent-capped' } | { tuna: 'agent-exchange'; exchange: SharedExchange };

/** agentProcessOf is the agent process this one is, when the primary started it as one. */
export function agentProcessOf(env: NodeJS.ProcessEnv, stopSignal: Promise<string>): AgentProcess | undefined {
  if (!cluster.isWorker) return undefined;
  const match = /^(\d+)\/(\d+)$/.exec(env[AGENT_PROCESS_ENV] ?? '');
  if (match === null || Number(match[1]) >= Number(match[2])) return undefined;
  return {
    index: Number(match[1]),
    ready: () => process.send?.({ tuna: 'agent-ready' } satisfies ProcessMessage),
    capped: () => process.send?.({ tuna: 'agent-capped' } satisfies ProcessMessage),
    handExchange: (exchange) => process.send?.({ tuna: 'agent-exchange', exchange } satisfies ProcessMessage),
    stop: untilPrimaryStops('agent-stop', stopSignal),
  };
}

// SIGTERM: processes drain (a tunnel's drain timeout is 30 s), then are killed.
const STOP_GRACE_MS = 40_000;

/** AgentProcesses is process 0's hold on the others. */
export interface AgentProcesses {
  /** failed resolves with the exit status of one that could not start, when the count was pinned (else never) */
  failed: Promise<number>;
  /** stop tells every other process to drain (`signal` says why); it resolves once all have exited */
  stop(signal: string): Promise<void>;
}

/**
 * startAgentProcesses forks processes 1 … count − 1 of `tuna <command> <args>` beside this one
 * (process 0, already serving) and supervises them; `onExchange` takes the exchanges they served
 * for process 0's request inspector. With a pinned count, one that fails to start
 * fails the command (`failed`, its status; its reason is on its stderr); with the default count,
 * those the edge refused for the key's connection cap are left out, in one line.
 */
export function startAgentProcesses(command: string, count: number, args: string[], log: PrimaryLog, isPinned: boolean, onExchange?: (exchange: SharedExchange) => void): AgentProcesses {
  cluster.setupPrimary({ ...clusterEntry(), args: [command, ...args] });
  const processes = new Map<number, Worker>();
  let isStopping = false;
  let isStarted = false;
  const restarts = new Map<number, number>();
  let fail: (code: number) => void = () => undefined;
  const failed = new Promise<number>((resolve) => (fail = resolve));
  let stopping: Promise<void> | undefined;

  const fork = (index: number): Promise<'serves' | 'capped'> => {
    const worker = cluster.fork({ [AGENT_PROCESS_ENV]: `${index}/${count}` });
    processes.set(index, worker);
    const startedAt = Date.now();
    let isReady = false;
    let isCapped = false;
    return new Promise((resolve, reject) => {
      worker.on('message', (m: unknown) => {
        if (!isTunaMessage(m)) return;
        if (m.tuna === 'agent-exchange') return onExchange?.((m as ProcessMessage & { tuna: 'agent-exchange' }).exchange);
        if (m.tuna === 'agent-capped') isCapped = true;
        if (m.tuna !== 'agent-ready') return;
        isReady = true;
        // a note about a process (stderr in text), as a tunnel up is: stdout keeps the banner and the summary below
        log.notice(`tuna ${command}: agent process ${index} (pid ${worker.process.pid}) serves`, { process: index, pid: worker.process.pid });
        resolve('serves');
      });
      worker.once('exit', (code, signal) => {
        if (!isReady) {
          if (isCapped && !isPinned) return (processes.delete(index), resolve('capped'));
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

  const started = Promise.all(Array.from({ length: count - 1 }, (_, i) => fork(i + 1))).then(
    (outcomes) => {
      isStarted = true;
      const serving = 1 + outcomes.filter((o) => o === 'serves').length;
      if (serving < count) log.notice(`tuna ${command}: the key's connection limit let ${serving} of ${count} agent processes connect; serving with ${serving}`, { processes: serving, asked: count });
      log.info(`tuna ${command}: ${serving} agent processes serve ${command === 'run' ? 'the bindings' : 'the binding'}`, { processes: serving });
    },
    (err: Error & { exitCode?: number }) => {
      if (isStopping) return;
      log.error(`tuna ${command}: ${err.message}`, { exitCode: err.exitCode });
      fail(err.exitCode ?? 1);
    },
  );
  return {
    failed,
    stop(signal) {
      stopping ??= (async () => {
        isStopping = true;
        const live = [...processes.values()].filter((w) => !w.isDead());
        log.notice(`${signal}: draining ${live.length + 1} agent processes`, { signal, processes: live.length + 1 });
        await stopWorkers(live, { tuna: 'agent-stop' } satisfies ProcessMessage, STOP_GRACE_MS);
        await started;
      })();
      return stopping;
    },
  };
}
