import { expect } from 'chai';
import 'reflect-metadata';
import type { Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { container as rootContainer } from 'tsyringe';
import type { DependencyContainer } from 'tsyringe';
import { createContainer } from '../../src/cli/container.js';
import type { ControlClient } from '../../src/control-api/index.js';
import type { RouteGraph } from '../../src/model/index.js';
import {
  CONTROL_CLIENT,
  DATA_PLANES,
  EDGE_RECONCILER,
  EVENT_RECORDER,
  FINALIZERS,
  KUBE_CONFIG,
  LeaderElector,
  OBJECT_SOURCE,
  OPERATOR_CONFIG,
  OPERATOR_LOG,
  OperatorProcess,
  STATUS_WRITER,
  SecretTunnelKeys,
  TUNNEL_CONTROL,
  TunnelKeys,
  registerOperator,
} from '../../src/operator/index.js';
import type { EdgeSettings, FinalizerReport, OperatorConfig, OperatorLog, ReconcileReport } from '../../src/operator/index.js';
import { EDGE_DIALER, TunnelManager } from '../../src/tunnel/index.js';
import { DataPlanes } from '../../src/operator/data-planes.js';
import { ListedObjects, RecordingTunnels } from '../support/operator-fakes.js';

// The graph of `tuna operator` (src/operator/process.ts) resolves from its container with test doubles for the seams.
describe('operator process container: the graph of tuna operator', () => {
  const learned = { edge: { baseDomain: 'tuna.test', portPool: null, addressPool: null }, baseDomain: 'tuna.test' } as unknown as EdgeSettings;
  const base: OperatorConfig = { clusterId: 'c1', edge: { host: '127.0.0.1', port: 1, tls: false }, connections: 1, learned, secretRefreshMs: 0, writeStatus: true };
  const lines: string[] = [];
  const log: OperatorLog = { info: (m) => lines.push(`info ${m}`), notice: (m) => lines.push(`notice ${m}`), warn: (m) => lines.push(`warn ${m}`) };
  const kube = new KubeConfig();
  kube.loadFromOptions({ clusters: [{ name: 'c', server: 'http://127.0.0.1:1' }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
  const dialer = { dial: (): Promise<Socket> => Promise.reject(new Error('a double: no edge here')) };

  /** scopeWith is the command's part: the config values in a child of the CLI's container, with an edge dialer double. */
  function scopeWith(config: OperatorConfig, parent: DependencyContainer = createContainer()): DependencyContainer {
    const scope = parent.createChildContainer();
    scope.register(EDGE_DIALER, { useValue: dialer });
    scope.register(OPERATOR_CONFIG, { useValue: config });
    scope.register(KUBE_CONFIG, { useValue: kube });
    scope.register(CONTROL_CLIENT, { useValue: {} as ControlClient });
    scope.register(OPERATOR_LOG, { useValue: log });
    return scope;
  }

  it('resolves OperatorProcess from registerOperator and the config values: keys in memory, no elector, a status writer', () => {
    const scope = scopeWith(base);
    registerOperator(scope);
    const process = scope.resolve(OperatorProcess);
    expect(process.keys).to.be.instanceOf(TunnelKeys).and.not.instanceOf(SecretTunnelKeys);
    expect(process.elector).to.equal(undefined);
    expect(process.manager).to.be.instanceOf(TunnelManager);
    expect(scope.isRegistered(STATUS_WRITER)).to.equal(true);
    expect(scope.isRegistered(EVENT_RECORDER)).to.equal(true);
    expect(scope.resolve(OperatorProcess).operator, 'one operator per container').to.equal(process.operator);
  });

  it('keeps the keys in a Secret and elects a leader when a keys namespace is set; writes no status with writeStatus false', () => {
    const scope = scopeWith({ ...base, keysNamespace: 'tuna-system', podName: 'p0', writeStatus: false });
    registerOperator(scope);
    const process = scope.resolve(OperatorProcess);
    expect(process.keys).to.be.instanceOf(SecretTunnelKeys);
    expect(process.elector).to.be.instanceOf(LeaderElector);
    expect(scope.isRegistered(STATUS_WRITER)).to.equal(false);
  });

  it('is one Gateway\'s data plane with dataPlaneFor: its one key in memory, even with a keys namespace; no elector, reconciler, finalizers or status writer', () => {
    const { learned: _learned, ...shared } = base;
    const key = { keyId: 'k1', token: 'tuna_tk_x', edgeBindingId: 'binding/address/127.77.0.1' };
    const scope = scopeWith({ ...shared, keysNamespace: 'shop', writeStatus: false, dataPlaneFor: { namespace: 'shop', name: 'gw', key, baseDomain: 'tuna.test' } });
    registerOperator(scope);
    const process = scope.resolve(OperatorProcess);
    expect(process.keys).to.be.instanceOf(TunnelKeys).and.not.instanceOf(SecretTunnelKeys);
    expect(process.keys.forTunnel('binding/address/127.77.0.1')).to.deep.equal(key);
    expect(process.keys.edgeIdOf('binding/address/shop/gw')).to.equal('binding/address/127.77.0.1');
    expect(process.elector).to.equal(undefined);
    const tokens: symbol[] = [EDGE_RECONCILER, FINALIZERS, STATUS_WRITER, EVENT_RECORDER, DATA_PLANES] as symbol[];
    for (const token of tokens) expect(scope.isRegistered(token), token.toString()).to.equal(false);
  });

  it('runs the leader\'s data planes in the shared operator', () => {
    const scope = scopeWith(base);
    registerOperator(scope);
    expect(scope.resolve(DATA_PLANES)).to.be.instanceOf(DataPlanes);
  });

  it('runs on the doubles a test registered before registerOperator: one sync, its line, then the stop', async () => {
    lines.length = 0;
    const scope = scopeWith({ ...base, writeStatus: false });
    const objects = new ListedObjects();
    objects.items = [
      { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'tuna' }, spec: { controller: 'tuna.dev/ingress-controller' } },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80 }] } },
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'web', namespace: 'default', uid: 'u1', generation: 1 },
        spec: { ingressClassName: 'tuna', rules: [{ host: 'web.tuna.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
      },
    ] as unknown as KubernetesObject[];
    const tunnels = new RecordingTunnels();
    scope.register(OBJECT_SOURCE, { useValue: objects });
    scope.register(TUNNEL_CONTROL, { useValue: tunnels });
    const finalized: number[] = [];
    scope.register(FINALIZERS, { useValue: { apply: (live: readonly KubernetesObject[]) => (finalized.push(live.length), Promise.resolve({} as FinalizerReport)) } });
    scope.register(EDGE_RECONCILER, {
      useValue: {
        reconcile: (graph: RouteGraph): Promise<ReconcileReport> =>
          Promise.resolve({ ready: new Set(graph.bindings.map((b) => b.id)), addresses: new Map(), pending: [], reserved: 0, minted: 0, released: 0, revoked: 0, kept: 0 }),
      },
    });
    registerOperator(scope);
    await scope.resolve(OperatorProcess).run(Promise.resolve('SIGTERM'));
    expect(tunnels.applied).to.deep.equal([['binding/host/web.tuna.test']]);
    expect(lines).to.include('info synced: 1 binding(s), 1 with a tunnel key');
    expect(lines.at(-1)).to.equal('notice SIGTERM: closing tunnels (in-flight requests finish first)');
  });

  it('fails to resolve when a registration is missing: a config value, or the CLI’s tunnel parts', () => {
    const noClient = createContainer().createChildContainer();
    noClient.register(OPERATOR_CONFIG, { useValue: base });
    noClient.register(KUBE_CONFIG, { useValue: kube });
    noClient.register(OPERATOR_LOG, { useValue: log });
    registerOperator(noClient);
    expect(() => noClient.resolve(OperatorProcess)).to.throw(/tuna\.operator\.ControlClient/);
    const noCli = scopeWith(base, rootContainer.createChildContainer());
    registerOperator(noCli);
    expect(() => noCli.resolve(OperatorProcess)).to.throw(/tuna\.tunnel\.Clock/);
  });
});
