import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import * as t from 'io-ts';
import { accessLogFlagOptions, openAccessLog, resolveAccessLog } from '../access-log-options.js';
import { ACCESS_LOG_OBSERVER, TRACE_OBSERVER, CONTROL_CLIENT, KUBE_CONFIG, OPERATOR_CONFIG, OPERATOR_LOG, OperatorProcess, PooledKubeConfig, learnEdge, registerOperator } from '../../operator/index.js';
import type { OperatorConfig } from '../../operator/index.js';
import { agentFlagOptions, resolveAgentOptions } from '../agent-options.js';
import { ControlClient } from '../../control-api/index.js';
import { UsageError } from '../errors.js';
import { HostnameString, ListenAddressString, PositiveIntString, SecondsString, decodeFlags, parseFlags } from '../flags.js';
import { commandHelp } from '../help.js';
import type { CliIo } from '../io.js';
import { createLogger, logFlagOptions, resolveLogFormat } from '../log.js';
import type { CliRuntime } from '../runtime.js';
import { openTracing, resolveTracing, traceFlagOptions } from '../trace-options.js';
import { pick } from './http.js';

const options = {
  ...agentFlagOptions,
  ...logFlagOptions,
  ...accessLogFlagOptions,
  ...traceFlagOptions,
  kubeconfig: { type: 'string' },
  'cluster-id': { type: 'string' },
  'base-domain': { type: 'string' },
  'no-status': { type: 'boolean' },
  'keys-namespace': { type: 'string' },
  'secret-refresh': { type: 'string' },
  'health-addr': { type: 'string' },
  'key-connections': { type: 'string' },
} as const;

const OperatorFlags = t.partial({ kubeconfig: t.string, 'cluster-id': t.string, 'base-domain': HostnameString, 'no-status': t.boolean, 'keys-namespace': t.string, 'secret-refresh': SecondsString, 'health-addr': ListenAddressString, 'key-connections': PositiveIntString });

/**
 * operatorCommand is `tuna operator`: watch the cluster (KUBECONFIG, or the pod's service account
 * in a cluster), keep the edge's reservations and tunnel keys in line with what the cluster
 * publishes, hold the tunnels, serve their traffic and write the statuses, until SIGTERM.
 */
export async function operatorCommand(args: string[], io: CliIo, runtime: CliRuntime): Promise<number> {
  const parsed = parseFlags(args, options, 'operator');
  if (parsed.values.help === true) return (io.out(commandHelp.operator!), 0);
  if (parsed.positionals.length > 0) throw new UsageError(`tuna operator: unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  const flags = decodeFlags(OperatorFlags, pick(parsed.values, ['kubeconfig', 'cluster-id', 'base-domain', 'no-status', 'keys-namespace', 'secret-refresh', 'health-addr', 'key-connections']), 'operator');
  const log = createLogger(io, resolveLogFormat(parsed.values, io.env, 'operator'));
  const accessLogConfig = resolveAccessLog(pick(parsed.values, Object.keys(accessLogFlagOptions)), io.env, 'operator');
  const traceConfig = resolveTracing(pick(parsed.values, Object.keys(traceFlagOptions)), io.env, 'operator');
  const agent = await resolveAgentOptions(pick(parsed.values, Object.keys(agentFlagOptions)), io.env, 'operator');
  if (!agent.key.startsWith('tuna_ak_'))
    throw new UsageError('tuna operator: --key must be an account API key with the reservations scope (tuna_ak_…); the operator mints a tunnel key per binding itself');

  // one connection pool for every call to the apiserver (client-node makes a new one per call)
  const kube = new PooledKubeConfig();
  if (flags.kubeconfig !== undefined) kube.loadFromFile(flags.kubeconfig);
  else kube.loadFromDefault();
  const clusterId = flags['cluster-id'] ?? (await kubeSystemUid(kube));
  const scheme = agent.edge.tls ? 'https' : 'http';
  const host = agent.edge.host.includes(':') ? `[${agent.edge.host}]` : agent.edge.host;
  const ca = agent.edge.ca === undefined ? undefined : [agent.edge.ca].flat().join('\n');
  const controlUrl = new URL(`${scheme}://${host}:${agent.edge.port}`);
  const client = new ControlClient({ url: controlUrl, ...(ca !== undefined ? { ca } : {}) }, agent.key);
  // The base domain (and the pools) come from the edge; --base-domain only overrides it.
  const learned = await learnEdge(client, controlUrl, flags['base-domain']);

  // The operator's graph is built by its container, a child of the CLI's (src/operator/process.ts).
  const scope = runtime.container.createChildContainer();
  // In a pod, the keys live in a Secret of the operator's namespace and survive restarts.
  const keysNamespace = flags['keys-namespace'] ?? io.env.POD_NAMESPACE;
  const config: OperatorConfig = {
    clusterId,
    edge: agent.edge,
    connections: agent.connections,
    learned,
    ...(keysNamespace !== undefined ? { keysNamespace } : {}),
    ...(io.env.POD_NAME !== undefined ? { podName: io.env.POD_NAME } : {}),
    secretRefreshMs: (flags['secret-refresh'] ?? 30) * 1000,
    writeStatus: flags['no-status'] !== true,
    ...(flags['key-connections'] !== undefined ? { keyConnections: flags['key-connections'] } : {}),
    ...(flags['health-addr'] !== undefined ? { health: flags['health-addr'] } : {}),
  };
  scope.register(OPERATOR_CONFIG, { useValue: config });
  scope.register(KUBE_CONFIG, { useValue: kube });
  scope.register(CONTROL_CLIENT, { useValue: client });
  scope.register(OPERATOR_LOG, { useValue: log });
  const accessLog = await openAccessLog(accessLogConfig, io, 'operator');
  if (accessLog !== undefined) scope.register(ACCESS_LOG_OBSERVER, { useValue: accessLog.observer });
  const tracing = await openTracing(traceConfig, log);
  if (tracing !== undefined) scope.register(TRACE_OBSERVER, { useValue: tracing.observer });
  registerOperator(scope);
  await scope.resolve(OperatorProcess).run(io.stopSignal);
  await accessLog?.close();
  await tracing?.close();
  return 0;
}

/** kubeSystemUid is a stable identity of the cluster: the uid of its kube-system namespace. */
async function kubeSystemUid(kube: KubeConfig): Promise<string> {
  const ns = await kube.makeApiClient(CoreV1Api).readNamespace({ name: 'kube-system' });
  const uid = ns.metadata?.uid;
  if (uid === undefined) throw new UsageError('tuna operator: the cluster has no kube-system namespace uid; pass --cluster-id');
  return uid;
}
