import * as t from 'io-ts';
import { UsageError } from '../errors.js';
import { PositiveIntString, decodeFlags, parseFlags } from '../flags.js';
import { commandHelp } from '../help.js';
import type { CliIo } from '../io.js';
import { createLogger, logFlagOptions, resolveLogFormat } from '../log.js';
import type { CliRuntime } from '../runtime.js';
import { edgeConfigFromFlags } from '../edge-flags.js';
import { usableCpuCount } from '../cpu-limit.js';
import type { MetricsEndpoint } from '../edge-primary-metrics.js';
import { runEdgePrimary, serveAsWorker, workerInstance, workerOfProcess } from '../edge-workers.js';
import { pick } from './http.js';
import { accessLogFlagOptions, openAccessLog, resolveAccessLog } from '../access-log-options.js';
import type { AccessLogConfig } from '../access-log-options.js';
import type { EdgeAccessLog } from '../../edge/index.js';

const EdgeFlags = t.partial({
  config: t.string,
  tunnel: t.string,
  http: t.string,
  store: t.string,
  'base-domain': t.string,
  bind: t.array(t.string),
  workers: PositiveIntString,
  'http1-forwarding': t.keyof({ spliced: null, 'per-request': null }),
});

const quickStartFlags = ['tunnel', 'http', 'store', 'base-domain', 'bind'] as const;

const options = {
  config: { type: 'string' },
  tunnel: { type: 'string' },
  http: { type: 'string' },
  store: { type: 'string' },
  'base-domain': { type: 'string' },
  bind: { type: 'string', multiple: true },
  workers: { type: 'string' },
  'http1-forwarding': { type: 'string' },
  ...accessLogFlagOptions,
  ...logFlagOptions,
} as const;

/**
 * edgeCommand is `tuna edge --config FILE`, or the quick start `tuna edge --tunnel … [--http …]
 * (--store … | --bind …)` (edge-flags.ts): it runs an edge until SIGINT/SIGTERM, then drains it.
 */
export async function edgeCommand(args: string[], io: CliIo, runtime: CliRuntime): Promise<number> {
  const parsed = parseFlags(args, options, 'edge');
  if (parsed.values.help === true) return (io.out(commandHelp.edge!), 0);
  if (parsed.positionals.length > 0) throw new UsageError(`tuna edge: unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  const flags = decodeFlags(EdgeFlags, pick(parsed.values, ['config', 'workers', 'http1-forwarding', ...quickStartFlags]), 'edge');
  const quick = quickStartFlags.filter((f) => flags[f] !== undefined);
  if (flags.config !== undefined && quick.length > 0) throw new UsageError(`tuna edge: --config and --${quick[0]} exclude each other (the file says everything)`);
  if (flags.config === undefined && quick.length === 0) throw new UsageError('tuna edge: pass --config FILE, or --tunnel HOST:PORT with --store or --bind (see tuna edge --help)');
  const log = createLogger(io, resolveLogFormat(parsed.values, io.env, 'edge'));
  const accessLogConfig = await resolveEdgeAccessLog(parsed.values, io.env);
  const onLog = (line: string): void => log.notice(line);
  // --http1-forwarding overrides the file's (or the quick start's) `http1Forwarding` (docs/edge.md).
  const forwarding = flags['http1-forwarding'];
  const overrides = forwarding === undefined ? {} : { http1Forwarding: forwarding };
  // the flags' document is checked here, before any worker is forked: a mistake is one clear error
  const document = flags.config === undefined ? { ...edgeConfigFromFlags(flags), ...overrides } : undefined;
  const worker = workerOfProcess(io.env);
  if (worker !== undefined) {
    // one of the primary's workers: the primary reports the ports and says when to stop.
    const accessLog = await openEdgeAccessLog(accessLogConfig, io);
    const instance = { ...workerInstance(worker), ...(accessLog !== undefined ? { accessLog: accessLog.observer } : {}) };
    const edge = document === undefined ? await runtime.startEdgeFromFile(flags.config!, onLog, overrides, instance) : await runtime.startEdge(document, onLog, instance);
    await serveAsWorker(edge, io.stopSignal);
    await edge.close();
    await accessLog?.close();
    process.disconnect?.();
    return 0;
  }
  const { workers, metrics } = await workerCount(flags.workers, flags.config, document);
  if (workers > 1) return runEdgePrimary(workers, args, log, io.stopSignal, metrics);
  const accessLog = await openEdgeAccessLog(accessLogConfig, io);
  const instance = accessLog !== undefined ? { accessLog: accessLog.observer } : undefined;
  const edge = document === undefined ? await runtime.startEdgeFromFile(flags.config!, onLog, overrides, instance) : await runtime.startEdge(document, onLog, instance);
  const ports = edge.httpPort === undefined ? { tunnelPort: edge.tunnelPort } : { tunnelPort: edge.tunnelPort, httpPort: edge.httpPort };
  log.info(`tuna edge: tunnel listener on port ${edge.tunnelPort}${edge.httpPort === undefined ? '' : `, public HTTP on port ${edge.httpPort}`}`, ports);
  const signal = await io.stopSignal;
  log.notice(`${signal}: draining the edge`, { signal });
  await edge.close();
  await accessLog?.close();
  return 0;
}

/** resolveEdgeAccessLog checks the access log flags, the format against the edge's fields (docs/edge.md "Access log"). */
async function resolveEdgeAccessLog(values: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<AccessLogConfig | undefined> {
  const accessLogValues = pick(values, Object.keys(accessLogFlagOptions));
  if (Object.keys(accessLogValues).length === 0 && (env.TUNA_ACCESS_LOG ?? '') === '') return undefined;
  const { compileEdgeAccessLogFormat } = await import('../../edge/index.js');
  return resolveAccessLog(accessLogValues, env, 'edge', compileEdgeAccessLogFormat);
}

/** openEdgeAccessLog opens the access log's destination (each worker its own, appending) and the edge's log on it. */
async function openEdgeAccessLog(config: AccessLogConfig | undefined, io: CliIo) {
  if (config === undefined) return undefined;
  const { EdgeAccessLog: Log } = await import('../../edge/index.js');
  return openAccessLog<EdgeAccessLog>(config, io, 'edge', (options) => new Log(options));
}

/**
 * workerCount is `--workers`, else the config file's `workers`, else the core count within the
 * container's CPU limit (cpu-limit.ts), but one for an ACME edge (it issues and renews in one
 * process; docs/edge.md, "Workers").
 */
async function workerCount(
  flag: number | undefined,
  configPath: string | undefined,
  document: Record<string, unknown> | undefined,
): Promise<{ workers: number; metrics?: MetricsEndpoint }> {
  if (flag === 1) return { workers: 1 };
  const edge = await import('../../edge/index.js');
  const config = configPath === undefined ? edge.decodeEdgeConfig(document) : await edge.loadEdgeConfig(configPath);
  const metrics = config.listen.metrics === undefined ? {} : { metrics: config.listen.metrics };
  if (configPath === undefined) return { workers: flag ?? usableCpuCount(), ...metrics };
  if (flag !== undefined && flag > 1 && config.acme !== undefined) throw new UsageError('tuna edge: --workers: an edge with an `acme` section runs one worker (ACME issues in one process)');
  return { workers: flag ?? config.workers ?? (config.acme !== undefined ? 1 : usableCpuCount()), ...metrics };
}
