import 'reflect-metadata';
import { hostname } from 'node:os';
import { inject, injectable, instancePerContainerCachingFactory } from 'tsyringe';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { KubeConfig } from '@kubernetes/client-node';
import type { ControlClient } from '../control-api/index.js';
import type { RouteGraph } from '../model/index.js';
import { DataPlane, StaticEndpointResolver, combineObservers } from '../dataplane/index.js';
import type { ExchangeObserver } from '../dataplane/index.js';
import { TUNNEL_KEY_SOURCE, TUNNEL_STREAM_HANDLER, TunnelManager } from '../tunnel/index.js';
import type { EdgeEndpoint } from '../tunnel/index.js';
import { AcceptedCertificates } from './accepted-certificates.js';
import {
  CERTIFICATES,
  DATA_PLANE,
  EDGE_RECONCILER,
  ENDPOINTS,
  EVENT_RECORDER,
  FINALIZERS,
  OBJECT_SOURCE,
  OPERATOR_SETTINGS,
  SECRET_READER,
  STATUS_WRITER,
  TUNNEL_CONTROL,
  operatorFrom,
} from './container.js';
import type { OperatorSettings } from './container.js';
import { EdgeReconciler } from './edge-reconciler.js';
import { DataPlanes, KubeDataPlaneApi, gatewayFragment } from './data-planes.js';
import type { DataPlaneSettings } from './data-plane-objects.js';
import type { HeldKey } from './tunnel-keys.js';
import { addressPortLimitsOf } from './edge-settings.js';
import type { EdgeSettings } from './edge-settings.js';
import { EventRecorder } from './event-recorder.js';
import { Finalizers } from './finalizers.js';
import { startHealthServer } from './health-server.js';
import { OperatorHealth } from './health.js';
import { KubeObjects } from './kube-objects.js';
import { LeaderElector } from './leader-elector.js';
import { isAbortError } from './log-line.js';
import { OperatorTunnels } from './operator.js';
import type { Operator } from './operator.js';
import type { SyncResult } from './operator.js';
import { RequestMetrics } from './request-metrics.js';
import { UdpMetrics } from './udp-metrics.js';
import { CoreSecretGetter, SecretReader } from './secret-reader.js';
import { SecretTunnelKeys } from './secret-tunnel-keys.js';
import { StatusWriter } from './status-writer.js';
import { TunnelKeys } from './tunnel-keys.js';

/**
 * The graph of the `tuna operator` process (docs/architecture.md, "Wiring"). The command
 * registers the values it parsed or looked up (OPERATOR_CONFIG, KUBE_CONFIG, CONTROL_CLIENT,
 * OPERATOR_LOG) in a child of the CLI's container, calls `registerOperator`, resolves
 * `OperatorProcess` and runs it. Every other part is built here by the container, once per
 * container (`instancePerContainerCachingFactory`), so a test registers a double for any token
 * before resolving and that double is what the rest is built on.
 */

/** OperatorLog is what the operator's parts log through (the CLI's Logger). */
export interface OperatorLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  notice(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** OperatorConfig is what the command decided from its flags, the environment, the cluster and the edge. */
export interface OperatorConfig {
  clusterId: string;
  /** the edge's tunnel endpoint and how many connections each binding keeps */
  edge: EdgeEndpoint;
  connections: number;
  /** what the edge said of itself (base domain, pools); absent in a Gateway's own pods (`dataPlaneFor`), which do not ask it */
  learned?: EdgeSettings;
  /**
   * `--data-plane-for`: this process is the data plane of one Gateway (docs/dedicated-data-plane.md):
   * it serves that Gateway's fragment with the key of its address, and reconciles, reserves and
   * writes nothing
   */
  dataPlaneFor?: DataPlaneFor;
  /** the shared operator: how it runs dedicated data planes (`--data-plane-image`); absent: it runs none, and says so on their Gateways */
  dataPlanes?: Pick<DataPlaneSettings, 'image' | 'clusterRole' | 'edge' | 'ca'>;
  /** the namespace of the tunnel keys Secret; absent: the keys live in memory */
  keysNamespace?: string;
  /** this replica's name in leader election */
  podName?: string;
  secretRefreshMs: number;
  writeStatus: boolean;
  keyConnections?: number;
  health?: { host?: string; port: number };
}

/** DataPlaneFor is the Gateway a data-plane process serves, and what it was given for it. */
export interface DataPlaneFor {
  namespace: string;
  name: string;
  /** the key of its address binding (the graph's binding id is `binding/address/<namespace>/<name>`) */
  key: HeldKey & { edgeBindingId: string };
  baseDomain: string;
}

/** DATA_PLANES resolves the leader's reconciler of dedicated data planes; not registered in a Gateway's own pods. */
export const DATA_PLANES: InjectionToken<DataPlanes> = Symbol.for('tuna.operator.DataPlanes');

export const OPERATOR_CONFIG: InjectionToken<OperatorConfig> = Symbol.for('tuna.operator.Config');
/** KUBE_CONFIG resolves the apiserver client config (one pooled connection for every call in production). */
export const KUBE_CONFIG: InjectionToken<KubeConfig> = Symbol.for('tuna.operator.KubeConfig');
/** CONTROL_CLIENT resolves the client of the edge's control API (the reservations key). */
export const CONTROL_CLIENT: InjectionToken<ControlClient> = Symbol.for('tuna.operator.ControlClient');
export const OPERATOR_LOG: InjectionToken<OperatorLog> = Symbol.for('tuna.operator.Log');
/** TUNNEL_KEYS resolves the binding keys (a Secret in a pod, memory otherwise). */
export const TUNNEL_KEYS: InjectionToken<TunnelKeys> = Symbol.for('tuna.operator.TunnelKeys');
export const TUNNEL_MANAGER: InjectionToken<TunnelManager> = Symbol.for('tuna.operator.TunnelManager');
/** LEADER_ELECTOR resolves the elector of the one writer, or undefined when the keys are not in a Secret (one replica). */
export const LEADER_ELECTOR: InjectionToken<LeaderElector | undefined> = Symbol.for('tuna.operator.LeaderElector');
export const REQUEST_METRICS: InjectionToken<RequestMetrics> = Symbol.for('tuna.operator.RequestMetrics');
/** UDP_METRICS resolves what the data plane's UDP flows lost, by reason (datagrams dropped, flows refused). */
export const UDP_METRICS: InjectionToken<UdpMetrics> = Symbol.for('tuna.operator.UdpMetrics');
export const OPERATOR_HEALTH: InjectionToken<OperatorHealth> = Symbol.for('tuna.operator.Health');
export const OPERATOR_REPORTER: InjectionToken<Reporter> = Symbol.for('tuna.operator.Reporter');
/** ACCESS_LOG_OBSERVER resolves the access log's observer of the data plane; not registered: no access log. */
export const ACCESS_LOG_OBSERVER: InjectionToken<ExchangeObserver> = Symbol.for('tuna.operator.AccessLogObserver');
/** TRACE_OBSERVER resolves the tracer's observer of the data plane; not registered: no spans. */
export const TRACE_OBSERVER: InjectionToken<ExchangeObserver> = Symbol.for('tuna.operator.TraceObserver');
export const OPERATOR: InjectionToken<Operator> = Symbol.for('tuna.operator.Operator');

/** Reporter logs a problem, except what our own stop aborts (watches, a sync in flight): not an error worth a line. */
export class Reporter {
  isStopping = false;
  constructor(private readonly log: OperatorLog) {}
  report(msg: string, err: unknown, fields: Record<string, unknown> = {}): void {
    if (!(this.isStopping && isAbortError(err))) this.log.warn(msg, { err, ...fields });
  }
}

/** registerOperator registers the parts of one operator; OPERATOR_CONFIG must be registered first (it says whether statuses are written). */
export function registerOperator(c: DependencyContainer): void {
  const once = <T>(token: InjectionToken<T>, make: (deps: DependencyContainer) => T): void => {
    if (!c.isRegistered(token)) c.register(token, { useFactory: instancePerContainerCachingFactory(make) });
  };
  const config = (deps: DependencyContainer): OperatorConfig => deps.resolve(OPERATOR_CONFIG);
  const log = (deps: DependencyContainer): OperatorLog => deps.resolve(OPERATOR_LOG);
  const kube = (deps: DependencyContainer): KubeConfig => deps.resolve(KUBE_CONFIG);
  const report = (deps: DependencyContainer) => deps.resolve(OPERATOR_REPORTER);
  once(OPERATOR_REPORTER, (deps) => new Reporter(log(deps)));
  // In a pod, the keys live in a Secret of the operator's namespace and survive restarts.
  const dataPlaneFor = c.resolve(OPERATOR_CONFIG).dataPlaneFor;
  const ownBinding = dataPlaneFor === undefined ? undefined : `binding/address/${dataPlaneFor.namespace}/${dataPlaneFor.name}`;
  once(TUNNEL_KEYS, (deps) => {
    // A Gateway's own pods hold the one key their Secret gave them.
    if (dataPlaneFor !== undefined && ownBinding !== undefined) {
      const keys = new TunnelKeys();
      keys.set(ownBinding, dataPlaneFor.key);
      return keys;
    }
    const ns = config(deps).keysNamespace;
    return ns === undefined || ns === '' ? new TunnelKeys() : new SecretTunnelKeys(kube(deps), ns, undefined, (problem) => log(deps).warn(`tunnel keys Secret: ${problem}`));
  });
  once(ENDPOINTS, () => new StaticEndpointResolver());
  // HTTPS listeners terminate here with the Secrets they name, read by name (SecretReader) and
  // handed to the data plane only once the translators accepted them.
  once(CERTIFICATES, () => new AcceptedCertificates());
  once(SECRET_READER, (deps) => new SecretReader(new CoreSecretGetter(kube(deps)), { refreshMs: config(deps).secretRefreshMs, onProblem: (line) => log(deps).warn(line) }));
  // /metrics counts the data plane's requests by binding and status (the observer adds one closure per request).
  once(REQUEST_METRICS, () => new RequestMetrics());
  once(UDP_METRICS, () => new UdpMetrics());
  once(DATA_PLANE, (deps) =>
    new DataPlane({
      endpoints: deps.resolve(ENDPOINTS),
      certificates: deps.resolve(CERTIFICATES),
      observer: combineObservers([optional(deps, TRACE_OBSERVER), deps.resolve(REQUEST_METRICS), optional(deps, ACCESS_LOG_OBSERVER)]),
      udpObserver: deps.resolve(UDP_METRICS),
      onError: (err, context) => log(deps).warn(`proxy error on ${context.bindingId} (request ${context.requestId})`, { err, bindingId: context.bindingId, requestId: context.requestId }),
      onJwksError: (url, err) => log(deps).warn(`JWT key set ${url} could not be fetched (the last good keys, if any, stay in force)`, { err }),
      onOidcError: (issuer, err) => log(deps).warn(`OpenID provider ${issuer}: a fetch failed (the last good configuration, if any, stays in force)`, { err }),
    }),
  );
  // one tunnel manager, in a child container holding the data plane and the keys (the clock and dialer are the CLI's)
  once(TUNNEL_MANAGER, (deps) => {
    const scope = deps.createChildContainer();
    scope.register(TUNNEL_STREAM_HANDLER, { useValue: deps.resolve(DATA_PLANE) });
    scope.register(TUNNEL_KEY_SOURCE, { useValue: deps.resolve(TUNNEL_KEYS) });
    return scope.resolve(TunnelManager);
  });
  // Several replicas in a namespace elect one writer; all of them serve tunnels.
  once(LEADER_ELECTOR, (deps) => {
    const { keysNamespace, podName } = config(deps);
    return deps.resolve(TUNNEL_KEYS) instanceof SecretTunnelKeys && keysNamespace !== undefined
      ? new LeaderElector(kube(deps), { namespace: keysNamespace, identity: podName ?? hostname(), onError: (err) => report(deps).report('leader election', err) })
      : undefined;
  });
  once(OBJECT_SOURCE, (deps) => new KubeObjects(kube(deps), { absentRetryMaxMs: 60_000, onError: (kind, err) => report(deps).report(`watching ${kind.kind}`, err, { kind: kind.kind }) }));
  once(OPERATOR_HEALTH, (deps) =>
    new OperatorHealth(
      {
        hasSynced: () => deps.resolve(OBJECT_SOURCE).hasSynced(),
        tunnels: () => deps.resolve(TUNNEL_MANAGER).status(),
        isLeader: () => deps.resolve(LEADER_ELECTOR)?.isLeader() ?? true,
        // the queue depth reads the operator, which is built from the health's hooks: read when asked
        hasPendingChange: () => deps.resolve(OPERATOR).hasPendingChange,
        certificates: () => deps.resolve(CERTIFICATES).expiries(),
      },
      Date.now,
      [deps.resolve(REQUEST_METRICS).registry, deps.resolve(UDP_METRICS).registry],
    ),
  );
  once(TUNNEL_CONTROL, (deps) => {
    const { edge, connections } = config(deps);
    const keys = deps.resolve(TUNNEL_KEYS);
    return new OperatorTunnels(deps.resolve(TUNNEL_MANAGER), [edge], connectionsPerBinding(connections), (bindingId) => keys.forTunnel(bindingId)?.keyId, dataPlaneFor !== undefined);
  });
  const learnedOf = (deps: DependencyContainer): EdgeSettings => {
    const { learned } = config(deps);
    if (learned === undefined) throw new Error('the operator was configured without what the edge said of itself (learned)');
    return learned;
  };
  if (dataPlaneFor === undefined) once(EDGE_RECONCILER, (deps) => {
    const { clusterId, keyConnections, connections } = config(deps);
    const learned = learnedOf(deps);
    return new EdgeReconciler(deps.resolve(CONTROL_CLIENT), deps.resolve(TUNNEL_KEYS), {
      clusterId,
      connectionsPerBinding: connectionsPerBinding(connections),
      addressPool: learned.edge.addressPool?.range ?? null,
      addressPorts: addressPortLimitsOf(learned.edge),
      portPool: learned.edge.portPool,
      ...(learned.edge.tcpHost !== undefined ? { tcpHost: learned.edge.tcpHost } : {}),
      ...(keyConnections !== undefined ? { maxConnections: keyConnections } : {}),
    });
  });
  if (dataPlaneFor === undefined) {
    once(DATA_PLANES, (deps) => {
      const { dataPlanes, clusterId, connections } = config(deps);
      const settings: DataPlaneSettings | undefined = dataPlanes === undefined ? undefined : { ...dataPlanes, clusterId, baseDomain: learnedOf(deps).baseDomain, connections: connectionsPerBinding(connections) };
      return new DataPlanes(new KubeDataPlaneApi(kube(deps)), settings);
    });
  }
  if (dataPlaneFor === undefined) once(FINALIZERS, (deps) => new Finalizers(kube(deps), { onError: (ref, err) => log(deps).warn(`finalizer of ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`, { err }) }));
  if (c.resolve(OPERATOR_CONFIG).writeStatus) {
    once(STATUS_WRITER, (deps) => new StatusWriter(kube(deps), { onError: (ref, err) => log(deps).warn(`status of ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`, { err }) }));
    once(EVENT_RECORDER, (deps) => new EventRecorder(kube(deps), { onError: (ref, err) => log(deps).warn(`event on ${ref.kind} ${ref.namespace ?? ''}/${ref.name}`, { err }) }));
  }
  once(OPERATOR_SETTINGS, (deps) => {
    const keys = deps.resolve(TUNNEL_KEYS);
    const elector = deps.resolve(LEADER_ELECTOR);
    const health = deps.resolve(OPERATOR_HEALTH);
    let summary = '';
    const settings: OperatorSettings = {
      keyRefOf: (bindingId) => keys.forTunnel(bindingId)?.keyId,
      edgeIdOf: (bindingId) => keys.edgeIdOf(bindingId),
      // a key the edge refuses (revoked, its reservation released out of band) makes a sync that lists the edge again
      tunnelErrors: deps.resolve(TUNNEL_MANAGER),
      ...(elector !== undefined && keys instanceof SecretTunnelKeys ? { leader: elector, followKeys: () => keys.load() } : {}),
      translate: { baseDomain: dataPlaneFor?.baseDomain ?? learnedOf(deps).baseDomain },
      ...(dataPlaneFor === undefined
        ? { dataPlanes: deps.resolve(DATA_PLANES), keyOf: (bindingId: string) => keys.get(bindingId) }
        : { select: (graph: RouteGraph) => gatewayFragment(graph, ownBinding!) }),
      onError: (err) => {
        health.recordFailure(err);
        report(deps).report('sync failed (retrying)', err);
      },
      onSyncEnded: (outcome, durationMs) => health.observeSync(outcome, durationMs),
      onSynced: (result) => {
        health.recordSync(result.state.graph.bindings.length, result.edge?.pending.length ?? 0, result.edge?.deferred?.length ?? 0);
        health.observePhases(result.phases);
        const line = describeSync(result);
        if (line !== summary) log(deps).info(line);
        summary = line;
      },
    };
    return settings;
  });
  once(OPERATOR, (deps) => operatorFrom(deps));
}

/** OperatorProcess is the root of the operator's graph: it runs one operator until the stop signal. */
@injectable()
export class OperatorProcess {
  constructor(
    @inject(OPERATOR_CONFIG) readonly config: OperatorConfig,
    @inject(OPERATOR_LOG) private readonly log: OperatorLog,
    @inject(TUNNEL_KEYS) readonly keys: TunnelKeys,
    @inject(TUNNEL_MANAGER) readonly manager: TunnelManager,
    @inject(LEADER_ELECTOR) readonly elector: LeaderElector | undefined,
    @inject(OPERATOR_HEALTH) readonly health: OperatorHealth,
    @inject(OPERATOR_REPORTER) private readonly reporter: Reporter,
    @inject(OPERATOR) readonly operator: Operator,
  ) {}

  /** run starts the operator, waits for the stop signal, then stops it (in-flight requests finish first). */
  async run(stopSignal: Promise<string>): Promise<void> {
    const { keys, manager, elector, health, log } = this;
    if (keys instanceof SecretTunnelKeys) await keys.load();
    manager.on('tunnel-error', (bindingId: string, err: Error) => {
      health.countTunnelError(err);
      this.reporter.report(`tunnel for ${bindingId}`, err, { bindingId });
    });
    manager.on('reconnected', () => health.countReconnect());
    elector?.on('started-leading', () => log.info('tuna operator: leading (reconciling the edge, writing statuses)', { leading: true }));
    elector?.on('stopped-leading', () => {
      if (!this.reporter.isStopping) log.info('tuna operator: following (serving tunnels with the leader’s keys)', { leading: false });
    });
    elector?.start();
    // The probes answer from the start (liveness) and say ready once the first sync is done.
    const healthAddr = this.config.health;
    const healthServer = healthAddr === undefined ? undefined : await startHealthServer(health, healthAddr.port, healthAddr.host);
    if (healthServer) log.info(`tuna operator: /healthz, /readyz and /metrics on port ${healthServer.address.port}`, { healthPort: healthServer.address.port });
    await this.operator.start();
    log.info(`tuna operator: watching the cluster (cluster id ${this.config.clusterId}); Ctrl-C or SIGTERM stops`, { clusterId: this.config.clusterId });
    const signal = await stopSignal;
    log.notice(`${signal}: closing tunnels (in-flight requests finish first)`, { signal });
    this.reporter.isStopping = true;
    await this.operator.stop();
    await elector?.stop();
    await healthServer?.close();
  }
}

/** describeSync is one line saying what a sync publishes and what it holds back. */
export function describeSync(result: SyncResult): string {
  const bindings = result.state.graph.bindings.length;
  const ready = result.edge?.ready.size ?? bindings;
  const pending = result.edge?.pending.map((p) => `${p.bindingId} (${p.reason})`) ?? [];
  const deferred = result.edge?.deferred?.length ?? 0;
  return `synced: ${bindings} binding(s), ${ready} with a tunnel key${pending.length > 0 ? `; held back: ${pending.join(', ')}` : ''}${deferred > 0 ? `; ${deferred} left to the next sync` : ''}`;
}

/** connectionsPerBinding is the tunnel connections per edge a binding holds by default: the agent's `--connections`, where the default of 1 becomes 2 for the operator. */
/** optional resolves a token that may not be registered (an observer that is off). */
function optional<T>(deps: DependencyContainer, token: InjectionToken<T>): T | undefined {
  return deps.isRegistered(token, true) ? deps.resolve(token) : undefined;
}

function connectionsPerBinding(connections: number): number {
  return connections === 1 ? 2 : connections;
}
