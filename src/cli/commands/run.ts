import * as t from 'io-ts';
import { combineObservers } from '../../dataplane/index.js';
import { addSharedExchange, handingObserver } from '../../inspector/index.js';
import type { RouteGraph } from '../../model/index.js';
import { pinnedProcesses, planProcesses, processGroupOf, serveAsAgentProcess } from '../agent-process-plan.js';
import { accessLogFlagOptions, openAccessLog, resolveAccessLog } from '../access-log-options.js';
import { agentFlagOptions, resolveAgentOptions } from '../agent-options.js';
import { loadBindingKeys } from '../binding-keys.js';
import { UsageError } from '../errors.js';
import { HostnameString, decodeFlags, parseFlags } from '../flags.js';
import { commandHelp } from '../help.js';
import { inspectFlagOptions, inspectorBanner, resolveInspectOptions, startInspector } from '../inspect-options.js';
import type { CliIo } from '../io.js';
import { createLogger, logFlagOptions, resolveLogFormat } from '../log.js';
import type { Logger } from '../log.js';
import { FileProvider } from '../file-provider.js';
import type { CliRuntime } from '../runtime.js';
import { pick } from './http.js';
import { openTracing, resolveTracing, traceFlagOptions } from '../trace-options.js';
import { serveUntilStopped } from './serve.js';

const options = {
  ...agentFlagOptions,
  ...logFlagOptions,
  ...inspectFlagOptions,
  ...accessLogFlagOptions,
  ...traceFlagOptions,
  manifests: { type: 'string', multiple: true },
  keys: { type: 'string' },
  'base-domain': { type: 'string' },
  once: { type: 'boolean' },
  processes: { type: 'string' },
} as const;

const RunFlags = t.intersection([t.type({ manifests: t.array(t.string) }), t.partial({ 'base-domain': HostnameString, once: t.boolean, keys: t.string })]);

/** runCommand is `tuna run --manifests DIR`. */
export async function runCommand(args: string[], io: CliIo, runtime: CliRuntime): Promise<number> {
  const parsed = parseFlags(args, options, 'run');
  if (parsed.values.help === true) return (io.out(commandHelp.run!), 0);
  if (parsed.positionals.length > 0) throw new UsageError(`tuna run: unexpected argument ${JSON.stringify(parsed.positionals[0])}; folders go after --manifests`);
  if (parsed.values.manifests === undefined) throw new UsageError('tuna run: --manifests DIR is required (see tuna run --help)');
  const flags = decodeFlags(RunFlags, pick(parsed.values, ['manifests', 'base-domain', 'once', 'keys']), 'run');
  const inspectOptions = resolveInspectOptions(pick(parsed.values, Object.keys(inspectFlagOptions)), io.env, 'run');
  const accessLogConfig = resolveAccessLog(pick(parsed.values, Object.keys(accessLogFlagOptions)), io.env, 'run');
  const traceConfig = resolveTracing(pick(parsed.values, Object.keys(traceFlagOptions)), io.env, 'run');
  const log = createLogger(io, resolveLogFormat(parsed.values, io.env, 'run'));
  const processes = pinnedProcesses(parsed.values.processes, io.env, 'run');
  // one of process 0's others (docs/cli.md "Processes"): it serves and watches the manifests as
  // process 0 does, and leaves reporting them to process 0 (one "Publishing:", one reload line)
  const asProcess = io.env.TUNA_AGENT_PROCESS !== undefined ? (await import('../agent-processes.js')).agentProcessOf(io.env, io.stopSignal) : undefined;
  const isFirst = asProcess === undefined;
  const provider = new FileProvider(flags.manifests, isFirst ? log : errorsOnly(log), flags['base-domain'] === undefined ? {} : { baseDomain: flags['base-domain'] });
  const state = await provider.read();
  provider.report(state);
  if (flags.once === true) return 0;
  const keys = flags.keys === undefined ? undefined : await loadBindingKeys(flags.keys);
  const agentOptions = await resolveAgentOptions(pick(parsed.values, Object.keys(agentFlagOptions)), io.env, 'run', keys);
  // decided from the manifests at start: a rate limit a later edit adds is then counted per process
  const plan = planProcesses(processes, isFirst && hasRateLimit(state.graph) ? ['a rate limit in the manifests counts per process (N processes would let N times the limit through)'] : []);
  if (isFirst && plan.note !== undefined) log.info(`tuna run: ${plan.note}`, { processes: 1 });
  const inspector = isFirst ? await startInspector(inspectOptions, log, 'run') : undefined;
  const handing = asProcess !== undefined && inspectOptions !== undefined ? handingObserver(inspectOptions.bodyLimit, asProcess.handExchange) : undefined;
  const accessLog = await openAccessLog(accessLogConfig, io, 'run');
  const tracing = await openTracing(traceConfig, log);
  try {
    const agent = runtime.createAgent(agentOptions, provider.endpoints, provider.certificates, (line) => log.warn(line), combineObservers([tracing?.observer, inspector?.observer ?? handing, accessLog?.observer]));
    inspector?.attach(agent.dataPlane);
    const watch = (): void => provider.watch(agent);
    if (asProcess !== undefined) {
      return await serveAsAgentProcess(() => serveUntilStopped(agent, state.graph, io, log, [], () => (watch(), asProcess.ready()), asProcess.stop), asProcess, plan.isPinned);
    }
    const group = processGroupOf(plan, 'run', args, log, io.stopSignal, inspector === undefined ? undefined : (exchange) => addSharedExchange(inspector.log, exchange));
    const code = await serveUntilStopped(agent, state.graph, io, log, ['Serving; watching the manifests for changes (Ctrl-C stops)', ...inspectorBanner(inspector)], () => (watch(), group.afterApply()), group.stop);
    return code === 0 ? await group.finish() : code;
  } finally {
    await provider.close();
    await inspector?.close();
    await accessLog?.close();
    await tracing?.close();
  }
}

/** hasRateLimit says whether a binding or a route of the graph has a rate limit (counted per process). */
function hasRateLimit(graph: RouteGraph): boolean {
  return graph.bindings.some((b) => b.policies?.rateLimit !== undefined) || graph.virtualHosts.some((v) => v.routes.some((r) => r.policies?.rateLimit !== undefined));
}

/** errorsOnly is `log` for a process other than 0: process 0 says what the manifests publish and what changed. */
function errorsOnly(log: Logger): Logger {
  const quiet = (): void => undefined;
  return { info: quiet, notice: quiet, warn: quiet, error: (msg, fields) => log.error(msg, fields) };
}
