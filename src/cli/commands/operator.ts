import { hostname } from 'node:os';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import * as t from 'io-ts';
import { DataPlane, StaticEndpointResolver, combineObservers } from '../../dataplane/index.js';
import { accessLogFlagOptions, openAccessLog, resolveAccessLog } from '../access-log-options.js';
import {
  AcceptedCertificates,
  CERTIFICATES,
  CoreSecretGetter,
  SECRET_READER,
  SecretReader,
  DATA_PLANE,
  EDGE_RECONCILER,
  ENDPOINTS,
  EVENT_RECORDER,
  OBJECT_SOURCE,
  OPERATOR_SETTINGS,
  STATUS_WRITER,
  TUNNEL_CONTROL,
  EdgeReconciler,
  addressPortLimitsOf,
  learnEdge,
  EventRecorder,
  FINALIZERS,
  Finalizers,
  KubeObjects,
  LeaderElector,
  OperatorHealth,
  PooledKubeConfig,
  RequestMetrics,
  startHealthServer,
  OperatorTunnels,
  SecretTunnelKeys,
  StatusWriter,
  TunnelKeys,
  isAbortError,
  operatorFrom,
} from '../../operator/index.js';
import type { OperatorSettings, SyncResult } from '../../operator/index.js';
import { agentFlagOptions, resolveAgentOptions } from '../agent-options.js';
import { ControlClient } from '../../control-api/index.js';
import { UsageError } from '../errors.js';
import { HostnameString, ListenAddressString, PositiveIntString, SecondsString, decodeFlags, parseFlags } from '../flags.js';
import { commandHelp } from '../help.js';
import type { CliIo } from '../io.js';
import { createLogger, logFlagOptions, resolveLogFormat } from '../log.js';
import type { CliRuntime } from '../runtime.js';
import { pick } from './http.js';

const options = {
  ...agentFlagOptions,
  ...logFlagOptions,
  ...accessLogFlagOptions,
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

  // In a pod, the keys live in a Secret of the operator's namespace and survive restarts.
  const keysNamespace = flags['keys-namespace'] ?? io.env.POD_NAMESPACE;
  const keys = keysNamespace === undefined || keysNamespace === '' ? new TunnelKeys() : new SecretTunnelKeys(kube, keysNamespace, undefined, (problem) => log.warn(`tunnel keys Secret: ${problem}`));
  if (keys instanceof SecretTunnelKeys) await keys.load();
  const keyRefOf = (bindingId: string): string | undefined => keys.forTunnel(bindingId)?.keyId;
  // What our own stop aborts (watches, a sync in flight) is not an error worth a line.
  let isStopping = false;
  const report = (msg: string, err: unknown, fields: Record<string, unknown> = {}): void => {
    if (!(isStopping && isAbortError(err))) log.warn(msg, { err, ...fields });
  };
  const endpoints = new StaticEndpointResolver();
  // HTTPS listeners terminate here with the Secrets they name, read by name (SecretReader) and
  // handed to the data plane only once the translators accepted them.
  const certificates = new AcceptedCertificates();
  const secrets = new SecretReader(new CoreSecretGetter(kube), { refreshMs: (flags['secret-refresh'] ?? 30) * 1000, onProblem: (line) => log.warn(line) });
  // /metrics counts the data plane's requests by binding and status (the observer adds one closure per request).
  const requests = new RequestMetrics();
  const accessLog = await openAccessLog(accessLogConfig, io, 'operator');
  const dataPlane = new DataPlane({ endpoints, certificates, observer: combineObservers([requests, accessLog?.observer]), onError: (err, context) => log.warn(`proxy error on ${context.bindingId} (request ${context.requestId})`, { err, bindingId: context.bindingId, requestId: context.requestId }) });
  const manager = runtime.createTunnelManager(dataPlane, keys);
  manager.on('tunnel-error', (bindingId: string, err: Error) => {
    health.countTunnelError();
    report(`tunnel for ${bindingId}`, err, { bindingId });
  });
  manager.on('reconnected', () => health.countReconnect());
  // Several replicas in a namespace elect one writer; all of them serve tunnels.
  const elector =
    keys instanceof SecretTunnelKeys && keysNamespace !== undefined
      ? new LeaderElector(kube, { namespace: keysNamespace, identity: io.env.POD_NAME ?? hostname(), onError: (err) => report('leader election', err) })
      : undefined;
  elector?.on('started-leading', () => log.info('tuna operator: leading (reconciling the edge, writing statuses)', { leading: true }));
  elector?.on('stopped-leading', () => {
    if (!isStopping) log.info('tuna operator: following (serving tunnels with the leader’s keys)', { leading: false });
  });
  elector?.start();
  let summary = '';
  // the health's queue depth reads the operator, which is assembled below from the parts registered here
  let isChangePending = (): boolean => false;
  // The operator's parts, each registered in a child container of the CLI's (src/operator/container.ts).
  const scope = runtime.container.createChildContainer();
  const objects = new KubeObjects(kube, { absentRetryMaxMs: 60_000, onError: (kind, err) => report(`watching ${kind.kind}`, err, { kind: kind.kind }) });
  scope.register(OBJECT_SOURCE, { useValue: objects });
  const health = new OperatorHealth(
    { hasSynced: () => objects.hasSynced(), tunnels: () => manager.status(), isLeader: () => elector?.isLeader() ?? true, hasPendingChange: () => isChangePending() },
    Date.now,
    [requests.registry],
  );
  scope.register(DATA_PLANE, { useValue: dataPlane });
  scope.register(ENDPOINTS, { useValue: endpoints });
  scope.register(SECRET_READER, { useValue: secrets });
  scope.register(CERTIFICATES, { useValue: certificates });
  scope.register(TUNNEL_CONTROL, { useValue: new OperatorTunnels(manager, [agent.edge], agent.connections === 1 ? 2 : agent.connections, keyRefOf) });
  scope.register(EDGE_RECONCILER, { useValue: new EdgeReconciler(client, keys, { clusterId, addressPool: learned.edge.addressPool?.range ?? null, addressPorts: addressPortLimitsOf(learned.edge), portPool: learned.edge.portPool, ...(learned.edge.tcpHost !== undefined ? { tcpHost: learned.edge.tcpHost } : {}), ...(flags['key-connections'] !== undefined ? { maxConnections: flags['key-connections'] } : {}) }) });
  scope.register(FINALIZERS, { useValue: new Finalizers(kube, { onError: (ref, err) => log.warn(`finalizer of ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`, { err }) }) });
  if (flags['no-status'] !== true) {
    scope.register(STATUS_WRITER, { useValue: new StatusWriter(kube, { onError: (ref, err) => log.warn(`status of ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`, { err }) }) });
    scope.register(EVENT_RECORDER, { useValue: new EventRecorder(kube, { onError: (ref, err) => log.warn(`event on ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`, { err }) }) });
  }
  const settings: OperatorSettings = {
    keyRefOf,
    edgeIdOf: (bindingId) => keys.edgeIdOf(bindingId),
    ...(elector !== undefined && keys instanceof SecretTunnelKeys ? { leader: elector, followKeys: () => keys.load() } : {}),
    translate: { baseDomain: learned.baseDomain },
    onError: (err) => {
      health.recordFailure();
      report('sync failed (retrying)', err);
    },
    onSyncEnded: (outcome, durationMs) => health.observeSync(outcome, durationMs),
    onSynced: (result) => {
      health.recordSync(result.state.graph.bindings.length, result.edge?.pending.length ?? 0, result.edge?.deferred?.length ?? 0);
      const line = describe(result);
      if (line !== summary) log.info(line);
      summary = line;
    },
  };
  scope.register(OPERATOR_SETTINGS, { useValue: settings });
  const operator = operatorFrom(scope);
  isChangePending = () => operator.hasPendingChange;
  // The probes answer from the start (liveness) and say ready once the first sync is done.
  const healthServer = flags['health-addr'] === undefined ? undefined : await startHealthServer(health, flags['health-addr'].port, flags['health-addr'].host);
  if (healthServer) log.info(`tuna operator: /healthz, /readyz and /metrics on port ${healthServer.address.port}`, { healthPort: healthServer.address.port });
  await operator.start();
  log.info(`tuna operator: watching the cluster (cluster id ${clusterId}); Ctrl-C or SIGTERM stops`, { clusterId });
  const signal = await io.stopSignal;
  log.notice(`${signal}: closing tunnels (in-flight requests finish first)`, { signal });
  isStopping = true;
  await operator.stop();
  await elector?.stop();
  await healthServer?.close();
  await accessLog?.close();
  return 0;
}

/** kubeSystemUid is a stable identity of the cluster: the uid of its kube-system namespace. */
async function kubeSystemUid(kube: KubeConfig): Promise<string> {
  const ns = await kube.makeApiClient(CoreV1Api).readNamespace({ name: 'kube-system' });
  const uid = ns.metadata?.uid;
  if (uid === undefined) throw new UsageError('tuna operator: the cluster has no kube-system namespace uid; pass --cluster-id');
  return uid;
}

/** describe is one line saying what a sync publishes and what it holds back. */
function describe(result: SyncResult): string {
  const bindings = result.state.graph.bindings.length;
  const ready = result.edge?.ready.size ?? bindings;
  const pending = result.edge?.pending.map((p) => `${p.bindingId} (${p.reason})`) ?? [];
  const deferred = result.edge?.deferred?.length ?? 0;
  return `synced: ${bindings} binding(s), ${ready} with a tunnel key${pending.length > 0 ? `; held back: ${pending.join(', ')}` : ''}${deferred > 0 ? `; ${deferred} left to the next sync` : ''}`;
}
