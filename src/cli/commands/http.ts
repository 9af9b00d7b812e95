import { StaticEndpointResolver, combineObservers } from '../../dataplane/index.js';
import { addSharedExchange, handingObserver } from '../../inspector/index.js';
import type { BackendProtocol } from '../../model/index.js';
import { accessLogFlagOptions, openAccessLog, resolveAccessLog } from '../access-log-options.js';
import { agentFlagOptions, resolveAgentOptions } from '../agent-options.js';
import { UsageError } from '../errors.js';
import { HostnameString, decodeFlags, parseFlags } from '../flags.js';
import { pinnedProcesses, planProcesses, processGroupOf, serveAsAgentProcess } from '../agent-process-plan.js';
import type { ProcessPlan } from '../agent-process-plan.js';
import { inspectFlagOptions, inspectorBanner, resolveInspectOptions, startInspector } from '../inspect-options.js';
import type { CliIo } from '../io.js';
import { createLogger, logFlagOptions, resolveLogFormat } from '../log.js';
import { policyFlagOptions, resolvePolicyFlags } from '../policy-flags.js';
import { probePort } from '../port-probe.js';
import { httpTarget } from '../quick-graph.js';
import type { CliRuntime } from '../runtime.js';
import { openTracing, resolveTracing, traceFlagOptions } from '../trace-options.js';
import { serveUntilStopped } from './serve.js';
import * as t from 'io-ts';

const options = { ...agentFlagOptions, ...logFlagOptions, ...inspectFlagOptions, ...accessLogFlagOptions, ...traceFlagOptions, ...policyFlagOptions, host: { type: 'string' }, binding: { type: 'string' }, 'no-check': { type: 'boolean' }, processes: { type: 'string' } } as const;

const HttpFlags = t.partial({ host: HostnameString, binding: t.string, 'no-check': t.boolean });

/** LocalTarget is where `tuna http` sends requests. */
export interface LocalTarget {
  host: string;
  port: number;
  protocol: BackendProtocol;
}

const schemes: Record<string, BackendProtocol> = { 'http:': 'http', 'h2c:': 'h2c', 'https:': 'h2' };

/** parseLocalTarget reads `3000`, `localhost:3000` or a URL with scheme http, h2c or https. */
export function parseLocalTarget(text: string | undefined): LocalTarget {
  if (text === undefined) throw new UsageError('tuna http: missing <port|url> (see tuna http --help)');
  if (/^\d{1,5}$/.test(text)) return checkPort({ host: '127.0.0.1', port: Number(text), protocol: 'http' }, text);
  const withScheme = /^[a-z0-9]+:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`tuna http: ${JSON.stringify(text)} is neither a port nor a URL`);
  }
  const protocol = schemes[url.protocol];
  if (!protocol) throw new UsageError(`tuna http: scheme ${url.protocol} is not supported; use http://, h2c:// or https://`);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return checkPort({ host: url.hostname.replace(/^\[|\]$/g, ''), port, protocol }, text);
}

function checkPort(target: LocalTarget, text: string): LocalTarget {
  if (target.port < 1 || target.port > 65535) throw new UsageError(`tuna http: ${text}: port must be between 1 and 65535`);
  return target;
}

/** httpCommand is `tuna http <port|url>`. */
export async function httpCommand(args: string[], io: CliIo, runtime: CliRuntime): Promise<number> {
  const parsed = parseFlags(args, options, 'http');
  // the help text imports every command's flags: loaded for --help only (it delays the first byte: docs/tunnel-performance.md §11)
  if (parsed.values.help === true) return (io.out((await import('../help.js')).commandHelp.http!), 0);
  if (parsed.positionals.length > 1) throw new UsageError(`tuna http: one <port|url> expected, got ${parsed.positionals.length}`);
  const target = parseLocalTarget(parsed.positionals[0]);
  const { host: hostFlag, binding, 'no-check': noCheck } = decodeFlags(HttpFlags, pick(parsed.values, ['host', 'binding', 'no-check']), 'http');
  const processes = pinnedProcesses(parsed.values.processes, io.env, 'http');
  const hostname = hostFlag ?? 'app.localhost';
  const log = createLogger(io, resolveLogFormat(parsed.values, io.env, 'http'));
  const agentOptions = await resolveAgentOptions(pick(parsed.values, Object.keys(agentFlagOptions)), io.env, 'http');
  const inspectOptions = resolveInspectOptions(pick(parsed.values, Object.keys(inspectFlagOptions)), io.env, 'http');
  const accessLogConfig = resolveAccessLog(pick(parsed.values, Object.keys(accessLogFlagOptions)), io.env, 'http');
  const traceConfig = resolveTracing(pick(parsed.values, Object.keys(traceFlagOptions)), io.env, 'http');
  const policies = await resolvePolicyFlags(pick(parsed.values, Object.keys(policyFlagOptions)), 'http', hashPassword);
  // each agent process would make its own random cookie key, and a session sealed by one would not open in another
  const hasOwnCookieKey = policies?.oidc !== undefined && parsed.values['oidc-cookie-secret-file'] === undefined;
  if (hasOwnCookieKey && processes !== undefined && processes > 1)
    throw new UsageError('tuna http: --processes with --oidc-issuer needs --oidc-cookie-secret-file (one cookie key for every process)');
  // one of process 0's others (AGENT_PROCESS_ENV; docs/cli.md "Processes"): it serves and reports
  // to process 0, which alone plans, prints the banner and runs the inspector. The cluster code is
  // loaded only in such a process, or in process 0 once there are others (agent-process-plan.ts).
  const asProcess = io.env.TUNA_AGENT_PROCESS !== undefined ? (await import('../agent-processes.js')).agentProcessOf(io.env, io.stopSignal) : undefined;
  const isFirst = asProcess === undefined;
  const plan: ProcessPlan = isFirst ? planProcesses(processes, singleProcessReasons(hasOwnCookieKey, policies?.rateLimit !== undefined)) : { count: 1, isPinned: processes !== undefined };
  if (plan.note !== undefined) log.info(`tuna http: ${plan.note}`, { processes: 1 });
  if (isFirst && noCheck !== true && !(await probePort(target.host, target.port)))
    log.warn(`warning: nothing accepts connections on ${target.host}:${target.port} yet; requests will get 502 until something does`, { target: `${target.host}:${target.port}` });
  const quick = httpTarget(hostname, { address: target.host, port: target.port }, target.protocol, binding);
  // The binding's defaults: every request of the published host gets them.
  if (policies !== undefined) for (const b of quick.graph.bindings) b.policies = policies;
  const endpoints = new StaticEndpointResolver();
  endpoints.set(quick.service.namespace, quick.service.name, quick.service.portName, [quick.service.endpoint]);
  // the request inspector listens on one port: the first agent process alone runs it, and prints
  // the banner; the others hand it the exchanges they served (src/inspector/shared-log.ts)
  const inspector = isFirst ? await startInspector(inspectOptions, log, 'http') : undefined;
  const handing = asProcess !== undefined && inspectOptions !== undefined ? handingObserver(inspectOptions.bodyLimit, asProcess.handExchange) : undefined;
  const accessLog = await openAccessLog(accessLogConfig, io, 'http');
  const tracing = await openTracing(traceConfig, log);
  try {
    const agent = runtime.createAgent(agentOptions, endpoints, undefined, (line) => log.warn(line), combineObservers([tracing?.observer, inspector?.observer ?? handing, accessLog?.observer]));
    inspector?.attach(agent.dataPlane);
    const banner = isFirst ? [`Forwarding ${hostname} → ${target.protocol}://${target.host}:${target.port}`, ...inspectorBanner(inspector)] : [];
    if (asProcess !== undefined) return await serveAsAgentProcess(() => serveUntilStopped(agent, quick.graph, io, log, banner, asProcess.ready, asProcess.stop), asProcess, plan.isPinned);
    const group = processGroupOf(plan, 'http', args, log, io.stopSignal, inspector === undefined ? undefined : (exchange) => addSharedExchange(inspector.log, exchange));
    const code = await serveUntilStopped(agent, quick.graph, io, log, banner, group.afterApply, group.stop);
    return code === 0 ? await group.finish() : code;
  } finally {
    await inspector?.close();
    await accessLog?.close();
    await tracing?.close();
  }
}

/**
 * singleProcessReasons names what `tuna http` was asked for that one process alone does as asked:
 * the default count (planProcesses) is then one.
 */
export function singleProcessReasons(hasOwnCookieKey: boolean, hasRateLimit: boolean): string[] {
  return [
    ...(hasOwnCookieKey ? ['--oidc-issuer without --oidc-cookie-secret-file (each process would seal sessions with a random key of its own)'] : []),
    ...(hasRateLimit ? ['--rate-limit counts per process (N processes would let N times the limit through)'] : []),
  ];
}

/** hashPassword hashes a --basic-auth password with bcrypt (cost 10), loaded only when needed. */
async function hashPassword(password: string): Promise<string> {
  const { default: bcrypt } = await import('bcryptjs');
  return bcrypt.hash(password, 10);
}

/** pick copies the listed keys of a record. */
export function pick(values: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (values[k] !== undefined) out[k] = values[k];
  return out;
}
