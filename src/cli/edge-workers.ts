import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { clusterEntry, isTunaMessage, restartDelayMs, stopWorkers, untilPrimaryStops } from './cluster-entry.js';
import type { EdgeInstanceOptions } from '../edge/index.js';
import { parseEdgeWorker } from '../wire/index.js';
import type { EdgeWorker } from '../wire/index.js';
import { gatherNodeMetrics, servePrimaryMetrics } from './edge-primary-metrics.js';
import type { MetricsEndpoint, PrimaryMetrics } from './edge-primary-metrics.js';
import type { RunningEdge } from './runtime.js';

/**
 * `tuna edge --workers N` (docs/edge.md "Workers: using the cores"): N worker processes (node:cluster) share the edge's
 * listeners; cluster's primary accepts each connection and hands it to the workers in turn
 * (round-robin, the default on Linux). Each worker is a whole edge; the agent learns from the
 * 101 answer which worker its connection reached and how many there are (docs/protocol.md §9.8),
 * and holds one connection per worker, so every worker has every binding.
 *
 * The primary holds no listener logic of its own: it starts worker 0 first (it runs the store's
 * migrations alone), then the others; restarts a worker that dies; relays "the store changed"
 * between workers (a control API write on one makes the others re-read the feed at once); and on
 * SIGINT/SIGTERM tells every worker to drain and waits for them.
 */

/** EDGE_WORKER_ENV names the worker a process is (`<index>/<count>`); set by the primary on fork. */
export const EDGE_WORKER_ENV = 'TUNA_EDGE_WORKER';

/** WorkerMessage is what the primary and the workers say to each other over the cluster's IPC channel. */
type WorkerMessage =
  | { tuna: 'ready'; tunnelPort: number; httpPort?: number }
  | { tuna: 'announce' }
  | { tuna: 'stop' }
  // a worker asks for the whole node's /metrics; the primary answers the same `id` with `text` or `error`
  | { tuna: 'metrics'; id: number; text?: string; error?: string };

// a worker's request for the node's metrics fails after this long (prom-client's own timeout is 5 s)
const NODE_METRICS_TIMEOUT_MS = 10_000;

function isWorkerMessage(m: unknown): m is WorkerMessage {
  return isTunaMessage(m);
}

/** workerOfProcess is the worker this process is, when the primary started it as one. */
export function workerOfProcess(env: NodeJS.ProcessEnv): EdgeWorker | undefined {
  return cluster.isWorker ? parseEdgeWorker(env[EDGE_WORKER_ENV]) : undefined;
}

/** workerInstance is what a worker's edge takes: its name, and the other workers through the primary. */
export function workerInstance(worker: EdgeWorker): EdgeInstanceOptions {
  const listeners: (() => void)[] = [];
  const pending = new Map<number, (m: { text?: string; error?: string }) => void>();
  let nextId = 0;
  process.on('message', (m: unknown) => {
    if (isWorkerMessage(m) && m.tuna === 'announce') for (const l of listeners) l();
    if (isWorkerMessage(m) && m.tuna === 'metrics') pending.get(m.id)?.(m);
  });
  const nodeMetrics = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => answer({ error: 'the primary did not answer' }), NODE_METRICS_TIMEOUT_MS);
      const answer = (m: { text?: string; error?: string }): void => {
        pending.delete(id);
        clearTimeout(timer);
        if (m.error !== undefined) reject(new Error(m.error));
        else resolve(m.text ?? '');
      };
      pending.set(id, answer);
      process.send?.({ tuna: 'metrics', id } satisfies WorkerMessage);
    });
  return {
    worker,
    // the primary serves `listen.metrics` (edge-primary-metrics.ts): this worker answers it
    metricsFromPrimary: true,
    peers: {
      announce: () => process.send?.({ tuna: 'announce' } satisfies WorkerMessage),
      onAnnounce: (listener) => void listeners.push(listener),
      nodeMetrics,
    },
  };
}

/**
 * serveAsWorker tells the primary the edge listens, and resolves when it (or a signal to this
 * process) says stop; the caller then drains the edge.
 */
export function serveAsWorker(edge: RunningEdge, stopSignal: Promise<string>): Promise<string> {
  const ready: WorkerMessage = { tuna: 'ready', tunnelPort: edge.tunnelPort, ...(edge.httpPort !== undefined ? { httpPort: edge.httpPort } : {}) };
  process.send?.(ready);
  return untilPrimaryStops('stop', stopSignal);
}

/** PrimaryLog is how the primary reports (the command's logger). */
export interface PrimaryLog {
  info(line: string, fields?: Record<string, unknown>): void;
  notice(line: string, fields?: Record<string, unknown>): void;
  error(line: string, fields?: Record<string, unknown>): void;
}

/** WorkerStartError: a worker exited before it listened (its own error went to stderr before). */
class WorkerStartError extends Error {
  constructor(
    readonly index: number,
    readonly exitCode: number,
    why: string,
  ) {
    super(`worker ${index} exited (${why}) before it listened`);
  }
}

// SIGTERM: workers drain (their drain timeout is 10 s), then are killed.
const STOP_GRACE_MS = 20_000;

/**
 * runEdgePrimary forks `count` workers of `tuna edge <args>` and supervises them until the stop
 * signal; it resolves with the exit status once every worker has exited. With `metrics` (the
 * config's `listen.metrics`) the primary listens there itself, for every worker's series.
 */
export async function runEdgePrimary(count: number, args: string[], log: PrimaryLog, stopSignal: Promise<string>, metrics?: MetricsEndpoint): Promise<number> {
  cluster.setupPrimary({ ...clusterEntry(), args: ['edge', ...args] });
  const workers = new Map<number, Worker>();
  let isStopping = false;
  /** every worker listened once: from then on a worker that dies is restarted */
  let isStarted = false;
  // before any worker: a port in use ends the edge here, as a worker's listener would. Its
  // /healthz says 503 until every worker listens: a pod is not ready while its workers start.
  const metricsListener: PrimaryMetrics | undefined = metrics === undefined ? undefined : await servePrimaryMetrics(metrics, () => isStopping || !isStarted);
  const restarts = new Map<number, { delayMs: number; startedAt: number }>();

  const fork = (index: number): Promise<WorkerMessage & { tuna: 'ready' }> => {
    const worker = cluster.fork({ [EDGE_WORKER_ENV]: `${index}/${count}` });
    workers.set(index, worker);
    const startedAt = Date.now();
    let isReady = false;
    return new Promise((resolve, reject) => {
      worker.on('message', (m: unknown) => {
        if (!isWorkerMessage(m)) return;
        if (m.tuna === 'ready') {
          isReady = true;
          log.info(`tuna edge: worker ${index} (pid ${worker.process.pid}) ready`, { worker: index, pid: worker.process.pid });
          resolve(m);
        } else if (m.tuna === 'announce') {
          for (const [i, other] of workers) if (i !== index && other.isConnected()) other.send({ tuna: 'announce' } satisfies WorkerMessage);
        } else if (m.tuna === 'metrics') {
          const reply = (answer: { text: string } | { error: string }): void => {
            if (worker.isConnected()) worker.send({ tuna: 'metrics', id: m.id, ...answer } satisfies WorkerMessage);
          };
          gatherNodeMetrics().then(
            (text) => reply({ text }),
            (err: Error) => reply({ error: err.message }),
          );
        }
      });
      worker.once('exit', (code, signal) => {
        // one that never listened fails the start (at start-up) or its restart (then retried later)
        if (!isReady) {
          reject(new WorkerStartError(index, code !== null && code !== 0 ? code : 1, String(signal ?? code)));
          if (!isStarted) return;
        }
        // exit 0 is a worker told to stop (Ctrl-C reaches the workers too, maybe before the primary): not restarted
        if (workers.get(index) !== worker || isStopping || code === 0) return;
        const previous = restarts.get(index);
        const delayMs = restartDelayMs(previous?.delayMs, startedAt);
        restarts.set(index, { delayMs, startedAt });
        log.notice(`tuna edge: worker ${index} exited (${signal ?? code}); restarting in ${delayMs} ms`, { worker: index, code, signal });
        setTimeout(() => {
          if (!isStopping) fork(index).catch(() => undefined);
        }, delayMs);
      });
    });
  };

  let first: WorkerMessage & { tuna: 'ready' };
  try {
    // Worker 0 alone first: it opens the store (migrations run once) before the others do.
    first = await fork(0);
    await Promise.all(Array.from({ length: count - 1 }, (_, i) => fork(i + 1)));
  } catch (err) {
    isStopping = true;
    for (const w of workers.values()) w.kill();
    await metricsListener?.close();
    if (!(err instanceof WorkerStartError)) throw err;
    // the worker said why (a config mistake, a port in use) on stderr; its exit status is the edge's
    log.error(`tuna edge: ${err.message}`, { worker: err.index, exitCode: err.exitCode });
    return err.exitCode;
  }
  isStarted = true;
  const ports = first.httpPort === undefined ? { tunnelPort: first.tunnelPort } : { tunnelPort: first.tunnelPort, httpPort: first.httpPort };
  log.info(`tuna edge: tunnel listener on port ${first.tunnelPort}${first.httpPort === undefined ? '' : `, public HTTP on port ${first.httpPort}`} (${count} workers)`, { ...ports, workers: count });
  if (metricsListener !== undefined) log.info(`tuna edge: metrics on port ${metricsListener.port} (every worker's series)`, { metricsPort: metricsListener.port });
  const signal = await stopSignal;
  isStopping = true;
  log.notice(`${signal}: draining the edge's ${count} workers`, { signal });
  await stopWorkers(workers.values(), { tuna: 'stop' } satisfies WorkerMessage, STOP_GRACE_MS);
  await metricsListener?.close();
  return 0;
}
