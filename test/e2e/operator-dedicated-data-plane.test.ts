/**
 * A dedicated data plane end to end, in process (docs/dedicated-data-plane.md): a Gateway whose
 * class's GatewayParameters say `dataPlane: Dedicated`. The shared operator (the leader) reserves
 * its address and mints its key at a store-mode edge, makes its objects (a recording DataPlaneApi
 * stands in for the apiserver), holds no tunnel for it, and says `Programmed=False Pending` until
 * the Deployment is available. A second operator in data-plane mode (what the Deployment's pods
 * run), given the key the Secret holds, keeps only that Gateway's fragment and serves the
 * HTTPRoute through the edge: every connection of the binding at the edge is its. The Gateway
 * going deletes the objects; becoming Shared gives the tunnels back to the shared operator.
 * The same in a cluster, with the image: test/cluster/dedicated-data-plane.test.ts.
 */
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import type { KubernetesObject, V1ClusterRoleBinding, V1Deployment, V1Secret, V1ServiceAccount } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { EdgeReconciler, Operator, OperatorTunnels, TunnelKeys } from '../../src/operator/index.js';
import type { SyncResult } from '../../src/operator/index.js';
import { APPLIED_ANNOTATION, DataPlanes, gatewayFragment } from '../../src/operator/data-planes.js';
import type { DataPlaneApi, NamespacedKind } from '../../src/operator/data-planes.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import { TunnelManager } from '../../src/tunnel/manager.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { ListedObjects } from '../support/operator-fakes.js';

const GW = 'gateway.networking.k8s.io/v1';
const PORT = 18094;
const BINDING = 'binding/address/shop/gw';
const obj = (o: Record<string, unknown>): KubernetesObject => o as KubernetesObject;
type Any = V1ServiceAccount | V1Secret | V1Deployment | V1ClusterRoleBinding;

/** RecordingApi is the apiserver as far as DataPlanes asks it: objects by kind/namespace/name, each call recorded. */
class RecordingApi implements DataPlaneApi {
  readonly objects = new Map<string, Any>();
  readonly calls: string[] = [];
  listDeployments(): Promise<V1Deployment[]> {
    return Promise.resolve([...this.objects.entries()].filter(([k]) => k.startsWith('Deployment/')).map(([, o]) => o as V1Deployment));
  }
  listClusterRoleBindings(): Promise<V1ClusterRoleBinding[]> {
    return Promise.resolve([...this.objects.entries()].filter(([k]) => k.startsWith('ClusterRoleBinding/')).map(([, o]) => o as V1ClusterRoleBinding));
  }
  appliedOf(kind: NamespacedKind | 'ClusterRoleBinding', namespace: string, name: string): Promise<string | null | undefined> {
    const o = this.objects.get(`${kind}/${namespace}/${name}`);
    return Promise.resolve(o === undefined ? undefined : (o.metadata?.annotations?.[APPLIED_ANNOTATION] ?? null));
  }
  apply(kind: NamespacedKind | 'ClusterRoleBinding', o: Any, exists: boolean): Promise<void> {
    const at = `${kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    this.calls.push(`${exists ? 'replace' : 'create'} ${at}`);
    // a replaced Deployment keeps its status, as the apiserver's does
    const status = (this.objects.get(at) as V1Deployment | undefined)?.status;
    this.objects.set(at, status === undefined ? o : ({ ...o, status } as Any));
    return Promise.resolve();
  }
  delete(kind: NamespacedKind | 'ClusterRoleBinding', namespace: string, name: string): Promise<void> {
    this.calls.push(`delete ${kind}/${namespace}/${name}`);
    this.objects.delete(`${kind}/${namespace}/${name}`);
    return Promise.resolve();
  }
  /** available makes the Deployment report `n` available pods, as the controller-manager would. */
  available(n: number): void {
    const d = this.objects.get('Deployment/shop/tuna-gw-gw') as V1Deployment;
    d.status = n > 0 ? { observedGeneration: 0, availableReplicas: n, updatedReplicas: n } : { conditions: [{ type: 'Available', status: 'False', message: 'Deployment does not have minimum availability.' }] };
  }
}

function objectsOf(backend: TestBackend, dataPlane: 'Dedicated' | 'Shared', labels: Record<string, string> = { team: 'web' }): KubernetesObject[] {
  return [
    obj({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tuna', uid: 'uid-class', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller', parametersRef: { group: 'tuna.dev', kind: 'GatewayParameters', name: 'own', namespace: 'tuna-system' } } }),
    obj({ apiVersion: 'tuna.dev/v1alpha1', kind: 'GatewayParameters', metadata: { name: 'own', namespace: 'tuna-system', uid: 'uid-p' }, spec: { dataPlane, ...(dataPlane === 'Dedicated' ? { deployment: { replicas: 1 } } : {}) } }),
    obj({ apiVersion: GW, kind: 'Gateway', metadata: { name: 'gw', namespace: 'shop', uid: 'uid-gw', generation: 1 }, spec: { gatewayClassName: 'tuna', infrastructure: { labels, annotations: { note: 'own pods' } }, listeners: [{ name: 'web', protocol: 'HTTP', port: PORT }] } }),
    obj({ apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'route', namespace: 'shop', uid: 'uid-route', generation: 1 }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] } }),
    obj({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' }, spec: { ports: [{ name: 'http', port: 80 }] } }),
    obj({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'web', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } }, addressType: 'IPv4', ports: [{ name: 'http', port: backend.port }], endpoints: [{ addresses: ['127.0.0.1'] }] }),
  ];
}

type Cond = { type: string; status: string; reason: string; message: string };
const programmed = (r: SyncResult): Cond | undefined => (r.state.statuses.find((s) => s.ref.kind === 'Gateway')?.status?.conditions as Cond[] | undefined)?.find((c) => c.type === 'Programmed');

/** get sends one GET through the Gateway's address; resolves with the status, or 0 when the connection fails. */
function get(address: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: address, port: PORT, path: '/', headers: { host: 'shop.example' }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** until retries `probe` (bounded: 100 tries, 50 ms apart) until it returns true. */
async function until(what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}

describe('operator: a dedicated data plane end to end (store-mode edge, recording apiserver)', () => {
  let store: Store;
  let running: StoreEdge;
  let backend: TestBackend;
  let objects: ListedObjects;
  let keys: TunnelKeys;
  let api: RecordingApi;
  let client: ControlClient;
  let sharedManager: TunnelManager;
  let shared: Operator;
  const stops: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store, storeEdgeConfig('unused', { addressPorts: [{ port: PORT, protocol: 'http' }] }));
    const seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    backend = await startHttpBackend('web');
    objects = new ListedObjects();
    keys = new TunnelKeys();
    api = new RecordingApi();
    const keyRefOf = (id: string): string | undefined => keys.forTunnel(id)?.keyId;
    const endpoints = new StaticEndpointResolver();
    const dataPlane = new DataPlane({ endpoints });
    sharedManager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, keys, {});
    const settings = { image: 'registry.test/tuna/operator:dev', clusterRole: 'tuna-data-plane', edge: `tcp://127.0.0.1:${running.endpoint.port}`, clusterId: 'east', baseDomain: 'tuna.test', connections: 1 };
    shared = new Operator({
      objects,
      dataPlane,
      endpoints,
      tunnels: new OperatorTunnels(sharedManager, [running.endpoint], 1, keyRefOf),
      reconciler: new EdgeReconciler(client, keys, { clusterId: 'east', addressPool: '127.77.0.0/16', maxConnections: 1, connectionsPerBinding: 1 }),
      keyRefOf,
      edgeIdOf: (id) => keys.edgeIdOf(id),
      dataPlanes: new DataPlanes(api, settings),
      keyOf: (id) => keys.get(id),
      dataPlaneRecheckMs: 60_000,
    });
    stops.push(() => shared.stop());
  });

  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    await running.edge.close();
    await store.close();
    await backend.close();
  });

  /** startDataPlane is what a pod of the Gateway's Deployment runs: its key read from the Secret the leader made. */
  async function startDataPlane(): Promise<{ manager: TunnelManager; operator: Operator }> {
    const secret = api.objects.get('Secret/shop/tuna-gw-gw-key') as V1Secret;
    const own = new TunnelKeys();
    own.set(BINDING, { keyId: secret.stringData!['key-id']!, token: secret.stringData!.token!, edgeBindingId: secret.stringData!.binding! });
    const keyRefOf = (id: string): string | undefined => own.forTunnel(id)?.keyId;
    const endpoints = new StaticEndpointResolver();
    const dataPlane = new DataPlane({ endpoints });
    const manager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, own, {});
    const operator = new Operator({
      objects,
      dataPlane,
      endpoints,
      tunnels: new OperatorTunnels(manager, [running.endpoint], 1, keyRefOf, true),
      keyRefOf,
      edgeIdOf: (id) => own.edgeIdOf(id),
      select: (graph) => gatewayFragment(graph, BINDING),
    });
    stops.push(() => operator.stop());
    await operator.start();
    return { manager, operator };
  }

  it('leaves the Gateway’s tunnels to its own pods, which serve its HTTPRoute through the edge; Programmed waits for their Deployment', async () => {
    objects.items = objectsOf(backend, 'Dedicated');
    const first = await shared.start();
    expect(first.edge?.pending).to.deep.equal([]);
    expect(keys.get(BINDING)).to.not.equal(undefined);
    // its key admits its replica's connections and a surge pod's: (1 + 1) × 1
    expect((await client.listTunnelKeys({ 'tuna.dev/cluster': 'east' })).tunnelKeys.filter((k) => k.revokedAt === null).map((k) => k.maxConnections)).to.deep.equal([2]);
    // the objects exist, the Deployment last
    expect(api.calls).to.deep.equal(['create ServiceAccount/shop/tuna-gw-gw', 'create ClusterRoleBinding//tuna-gw-shop-gw', 'create Secret/shop/tuna-gw-gw-key', 'create Deployment/shop/tuna-gw-gw']);
    expect((api.objects.get('Deployment/shop/tuna-gw-gw') as V1Deployment).spec!.template.metadata!.labels).to.include({ 'gateway.networking.k8s.io/gateway-name': 'gw', team: 'web' });
    // the shared operator holds no tunnel for it
    expect(sharedManager.status().map((s) => s.bindingId)).to.deep.equal([]);
    expect(programmed(first)).to.include({ status: 'False', reason: 'Pending', message: 'its data plane Deployment is being created' });

    api.available(0);
    expect(programmed(await shared.sync())).to.include({ status: 'False', reason: 'Pending', message: 'its data plane Deployment tuna-gw-gw is not available: Deployment does not have minimum availability.' });

    const address = first.edge!.addresses.get(BINDING)!;
    const pod = await startDataPlane();
    await until('the binding served through the edge', async () => (await get(address)) === 200);
    expect(backend.requests.length).to.be.greaterThan(0);
    // every connection of the binding at the edge is the Gateway pod's
    const edgeId = keys.edgeIdOf(BINDING);
    expect(pod.manager.status().map((s) => s.bindingId)).to.deep.equal([edgeId]);
    expect(running.edge.registry.count().get(edgeId)).to.equal(pod.manager.status()[0]!.open);
    expect(sharedManager.status()).to.deep.equal([]);

    api.available(1);
    const ready = await shared.sync();
    expect(programmed(ready)).to.include({ status: 'True' });
    // nothing changed: nothing is applied again
    expect(ready.dataPlanes).to.include({ applied: 0, deleted: 0 });
  });

  it('applies the objects again when the infrastructure labels change, and deletes them when the Gateway becomes Shared (its tunnels back to the shared operator)', async () => {
    objects.items = objectsOf(backend, 'Dedicated');
    await shared.start();
    api.calls.length = 0;
    objects.items = objectsOf(backend, 'Dedicated', { team: 'shop' });
    const relabelled = await shared.sync();
    expect(relabelled.dataPlanes?.applied).to.equal(4);
    for (const o of api.objects.values()) expect(o.metadata?.labels).to.include({ team: 'shop' });

    api.calls.length = 0;
    objects.items = objectsOf(backend, 'Shared');
    const back = await shared.sync();
    expect(back.dataPlanes?.deleted).to.be.greaterThan(0);
    expect([...api.objects.keys()]).to.deep.equal([]);
    await until('the shared operator holds the binding again', () => sharedManager.status().some((s) => s.bindingId === keys.edgeIdOf(BINDING) && s.open > 0));
    expect(programmed(back)).to.include({ status: 'True' });
  });

  it('deletes the ClusterRoleBinding when the Gateway goes (its namespaced objects go with it, by their owner reference)', async () => {
    objects.items = objectsOf(backend, 'Dedicated');
    await shared.start();
    expect((api.objects.get('Deployment/shop/tuna-gw-gw') as V1Deployment).metadata!.ownerReferences![0]).to.include({ kind: 'Gateway', name: 'gw', uid: 'uid-gw' });
    // the garbage collector's part: the Gateway's namespaced objects go with it
    for (const k of [...api.objects.keys()]) if (!k.startsWith('ClusterRoleBinding/')) api.objects.delete(k);
    objects.items = objectsOf(backend, 'Dedicated').filter((o) => o.kind !== 'Gateway');
    api.calls.length = 0;
    await shared.sync();
    expect(api.calls).to.deep.equal(['delete ClusterRoleBinding//tuna-gw-shop-gw']);
  });
});
