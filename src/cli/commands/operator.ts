import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import * as t from 'io-ts';
import { accessLogFlagOptions, openAccessLog, resolveAccessLog } from '../access-log-options.js';
import { ACCESS_LOG_OBSERVER, TRACE_OBSERVER, CONTROL_CLIENT, KUBE_CONFIG, OPERATOR_CONFIG, OPERATOR_LOG, OperatorProcess, PooledKubeConfig, learnEdge, registerOperator } from '../../operator/index.js';
import type { DataPlaneFor, OperatorConfig } from '../../operator/index.js';
import type { EdgeEndpoint } from '../../tunnel/index.js';
import type { DependencyContainer } from 'tsyringe';
import { agentFlagOptions, parseEdgeAddress, resolveAgentOptions } from '../agent-options.js';
import { ControlClient } from '../../control-api/index.js';
import { UsageError } from '../errors.js';
import { HostnameString, ListenAddressString, PositiveIntString, SecondsString, decodeFlags, parseFlags } from '../flags.js';
import { commandHelp } from '../help.js';
import type { CliIo } from '../io.js';
import { createLogger, logFlagOptions, resolveLogFormat } from '../log.js';
import type { Logger } from '../log.js';
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
  'data-plane-image': { type: 'string' },
  'data-plane-edge': { type: 'string' },
  'data-plane-cluster-role': { type: 'string' },
  'data-plane-for': { type: 'string' },
} as const;

const OperatorFlags = t.partial({
  kubeconfig: t.string,
  'cluster-id': t.string,
  'base-domain': HostnameString,
  'no-status': t.boolean,
  'keys-namespace': t.string,
  'secret-refresh': SecondsString,
  'health-addr': ListenAddressString,
  'key-connections': PositiveIntString,
  'data-plane-image': t.string,
  'data-plane-edge': t.string,
  'data-plane-cluster-role': t.string,
  'data-plane-for': t.string,
});

/** NAME is a Kubernetes object name (DNS-1123 subdomain). */
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * operatorCommand is `tuna operator`: watch the cluster (KUBECONFIG, or the pod's service account
 * in a cluster), keep the edge's reservations and tunnel keys in line with what the cluster
 * publishes, hold the tunnels, serve their traffic and write the statuses, until SIGTERM.
 */
export async function operatorCommand(args: string[], io: CliIo, runtime: CliRuntime): Promise<number> {
  const parsed = parseFlags(args, options, 'operator');
  if (parsed.values.help === true) return (io.out(commandHelp.operator!), 0);
  if (parsed.positionals.length > 0) throw new UsageError(`tuna operator: unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  const flags = decodeFlags(OperatorFlags, pick(parsed.values, Object.keys(OperatorFlags.props)), 'operator');
  const log = createLogger(io, resolveLogFormat(parsed.values, io.env, 'operator'));
  const accessLogConfig = resolveAccessLog(pick(parsed.values, Object.keys(accessLogFlagOptions)), io.env, 'operator');
  const traceConfig = resolveTracing(pick(parsed.values, Object.keys(traceFlagOptions)), io.env, 'operator');
  const agent = await resolveAgentOptions(pick(parsed.values, Object.keys(agentFlagOptions)), io.env, 'operator');
  const dataPlaneFor = flags['data-plane-for'] === undefined ? undefined : dataPlaneForOf(flags['data-plane-for'], flags, agent.key, io.env);
  if (dataPlaneFor === undefined && !agent.key.startsWith('tuna_ak_'))
    throw new UsageError('tuna operator: --key must be an account API key with the reservations scope (tuna_ak_…); the operator mints a tunnel key per binding itself');

  // one connection pool for every call to the apiserver (client-node makes a new one per call)
  const kube = new PooledKubeConfig();
  if (flags.kubeconfig !== undefined) kube.loadFromFile(flags.kubeconfig);
  else kube.loadFromDefault();
  const clusterId = flags['cluster-id'] ?? (await kubeSystemUid(kube));
  const scope = runtime.container.createChildContainer();
  const common = {
    clusterId,
    edge: agent.edge,
    connections: agent.connections,
    ...(io.env.POD_NAME !== undefined ? { podName: io.env.POD_NAME } : {}),
    secretRefreshMs: (flags['secret-refresh'] ?? 30) * 1000,
    ...(flags['health-addr'] !== undefined ? { health: flags['health-addr'] } : {}),
  };
  if (dataPlaneFor !== undefined) {
    // A Gateway's own pods: no edge control API, no keys Secret, no status (docs/dedicated-data-plane.md).
    scope.register(OPERATOR_CONFIG, { useValue: { ...common, writeStatus: false, dataPlaneFor } satisfies OperatorConfig });
    return runOperator(scope, kube, log, { accessLog: accessLogConfig, trace: traceConfig }, io);
  }
  const scheme = agent.edge.tls ? 'https' : 'http';
  const host = agent.edge.host.includes(':') ? `[${agent.edge.host}]` : agent.edge.host;
  const ca = agent.edge.ca === undefined ? undefined : [agent.edge.ca].flat().join('\n');
  const controlUrl = new URL(`${scheme}://${host}:${agent.edge.port}`);
  const client = new ControlClient({ url: controlUrl, ...(ca !== undefined ? { ca } : {}) }, agent.key);
  // The base domain (and the pools) come from the edge; --base-domain only overrides it.
  const learned = await learnEdge(client, controlUrl, flags['base-domain']);

  // The operator's graph is built by its container, a child of the CLI's (src/operator/process.ts).
  // In a pod, the keys live in a Secret of the operator's namespace and survive restarts.
  const keysNamespace = flags['keys-namespace'] ?? io.env.POD_NAMESPACE;
  const image = flags['data-plane-image'];
  const config: OperatorConfig = {
    ...common,
    learned,
    ...(keysNamespace !== undefined ? { keysNamespace } : {}),
    writeStatus: flags['no-status'] !== true,
    ...(flags['key-connections'] !== undefined ? { keyConnections: flags['key-connections'] } : {}),
    ...(image !== undefined && image !== '' ? { dataPlanes: dataPlaneSettingsOf(image, flags, agent.edge, ca) } : {}),
  };
  scope.register(OPERATOR_CONFIG, { useValue: config });
  scope.register(CONTROL_CLIENT, { useValue: client });
  return runOperator(scope, kube, log, { accessLog: accessLogConfig, trace: traceConfig }, io);
}

/** runOperator registers what every operator shares, then runs it until the stop signal. */
async function runOperator(
  scope: DependencyContainer,
  kube: PooledKubeConfig,
  log: Logger,
  observers: { accessLog: ReturnType<typeof resolveAccessLog>; trace: ReturnType<typeof resolveTracing> },
  io: CliIo,
): Promise<number> {
  scope.register(KUBE_CONFIG, { useValue: kube });
  scope.register(OPERATOR_LOG, { useValue: log });
  const accessLog = await openAccessLog(observers.accessLog, io, 'operator');
  if (accessLog !== undefined) scope.register(ACCESS_LOG_OBSERVER, { useValue: accessLog.observer });
  const tracing = await openTracing(observers.trace, log);
  if (tracing !== undefined) scope.register(TRACE_OBSERVER, { useValue: tracing.observer });
  registerOperator(scope);
  await scope.resolve(OperatorProcess).run(io.stopSignal);
  await accessLog?.close();
  await tracing?.close();
  return 0;
}

type Flags = t.TypeOf<typeof OperatorFlags>;

/** dataPlaneForOf reads `--data-plane-for NS/GATEWAY` and the key its Deployment put in the environment. */
function dataPlaneForOf(target: string, flags: Flags, token: string, env: NodeJS.ProcessEnv): DataPlaneFor {
  const [namespace, name, ...rest] = target.split('/');
  if (namespace === undefined || name === undefined || rest.length > 0 || !NAME.test(namespace) || !NAME.test(name))
    throw new UsageError(`tuna operator: --data-plane-for ${JSON.stringify(target)} is not NAMESPACE/GATEWAY`);
  const keyId = env.TUNA_DATA_PLANE_KEY_ID ?? '';
  const edgeBindingId = env.TUNA_DATA_PLANE_BINDING ?? '';
  if (keyId === '' || edgeBindingId === '') throw new UsageError('tuna operator: --data-plane-for needs $TUNA_DATA_PLANE_KEY_ID and $TUNA_DATA_PLANE_BINDING (its Deployment sets them from its key Secret)');
  if (flags['cluster-id'] === undefined || flags['base-domain'] === undefined) throw new UsageError('tuna operator: --data-plane-for needs --cluster-id and --base-domain (it does not ask the edge or the cluster)');
  if (flags['data-plane-image'] !== undefined) throw new UsageError('tuna operator: --data-plane-for and --data-plane-image do not go together (a Gateway\'s pods run no data plane of their own)');
  return { namespace, name, key: { keyId, token, edgeBindingId }, baseDomain: flags['base-domain'] };
}

/** dataPlaneSettingsOf is how the shared operator runs dedicated data planes. */
function dataPlaneSettingsOf(image: string, flags: Flags, edge: EdgeEndpoint, ca: string | undefined): NonNullable<OperatorConfig['dataPlanes']> {
  const address = flags['data-plane-edge'] ?? `${edge.tls ? 'tls' : 'tcp'}://${edge.host.includes(':') ? `[${edge.host}]` : edge.host}:${edge.port}`;
  // checked as the pods will read it
  parseEdgeAddress(address);
  const clusterRole = flags['data-plane-cluster-role'] ?? 'tuna-data-plane';
  if (!NAME.test(clusterRole)) throw new UsageError(`tuna operator: --data-plane-cluster-role ${JSON.stringify(clusterRole)} is not a ClusterRole name`);
  return { image, clusterRole, edge: address, ...(ca !== undefined ? { ca } : {}) };
}

/** kubeSystemUid is a stable identity of the cluster: the uid of its kube-system namespace. */
async function kubeSystemUid(kube: KubeConfig): Promise<string> {
  const ns = await kube.makeApiClient(CoreV1Api).readNamespace({ name: 'kube-system' });
  const uid = ns.metadata?.uid;
  if (uid === undefined) throw new UsageError('tuna operator: the cluster has no kube-system namespace uid; pass --cluster-id');
  return uid;
}
