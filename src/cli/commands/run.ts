import * as t from 'io-ts';
import { combineObservers } from '../../dataplane/index.js';
import { accessLogFlagOptions, openAccessLog, resolveAccessLog } from '../access-log-options.js';
import { agentFlagOptions, resolveAgentOptions } from '../agent-options.js';
import { loadBindingKeys } from '../binding-keys.js';
import { UsageError } from '../errors.js';
import { HostnameString, decodeFlags, parseFlags } from '../flags.js';
import { commandHelp } from '../help.js';
import { inspectFlagOptions, inspectorBanner, resolveInspectOptions, startInspector } from '../inspect-options.js';
import type { CliIo } from '../io.js';
import { createLogger, logFlagOptions, resolveLogFormat } from '../log.js';
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
  const provider = new FileProvider(flags.manifests, log, flags['base-domain'] === undefined ? {} : { baseDomain: flags['base-domain'] });
  const state = await provider.read();
  provider.report(state);
  if (flags.once === true) return 0;
  const keys = flags.keys === undefined ? undefined : await loadBindingKeys(flags.keys);
  const agentOptions = await resolveAgentOptions(pick(parsed.values, Object.keys(agentFlagOptions)), io.env, 'run', keys);
  const inspector = await startInspector(inspectOptions, log, 'run');
  const accessLog = await openAccessLog(accessLogConfig, io, 'run');
  const tracing = await openTracing(traceConfig, log);
  try {
    const agent = runtime.createAgent(agentOptions, provider.endpoints, provider.certificates, (line) => log.warn(line), combineObservers([tracing?.observer, inspector?.observer, accessLog?.observer]));
    inspector?.attach(agent.dataPlane);
    return await serveUntilStopped(agent, state.graph, io, log, ['Serving; watching the manifests for changes (Ctrl-C stops)', ...inspectorBanner(inspector)], () => provider.watch(agent));
  } finally {
    await provider.close();
    await inspector?.close();
    await accessLog?.close();
    await tracing?.close();
  }
}
