// dedicated-data-plane.test.ts — on the test cluster: a Gateway whose class's GatewayParameters say
// dataPlane: Dedicated, with spec.infrastructure labels and annotations. The operator (in process,
// as the leader) makes its ServiceAccount, ClusterRoleBinding, key Secret and Deployment; the
// Deployment's pods run the tuna image from the cluster's registry as `tuna operator
// --data-plane-for`, dial the edge's tunnel listener on the pods' bridge, and answer the
// Gateway's HTTPRoute through the edge while the operator holds no tunnel for it: every
// connection of the binding at the edge comes from one of those pods. The Gateway is Programmed
// once they are available. Deleting the Gateway deletes the objects (the namespaced ones by their
// owner reference, the ClusterRoleBinding by the operator). docs/dedicated-data-plane.md.
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiextensionsV1Api, AppsV1Api, CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1ClusterRole } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { ControlClient } from '../../src/control-api/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { DataPlanes, KubeDataPlaneApi } from '../../src/operator/data-planes.js';
import { EdgeReconciler, TunnelKeys } from '../../src/operator/edge-reconciler.js';
import { KubeObjects } from '../../src/operator/kube-objects.js';
import { Operator, OperatorTunnels } from '../../src/operator/operator.js';
import { StatusWriter } from '../../src/operator/status-writer.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import { TunnelManager } from '../../src/tunnel/manager.js';
import { seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { REPO_ROOT, clusterConfig, echoDeployment, installTunaCrds, runScript, waitFor } from './cluster-env.js';
import { pushTunaImage } from './tuna-image.js';
import type { PushedImage } from './tuna-image.js';

const GW = 'gateway.networking.k8s.io';
/** BRIDGE_IP is the host's address on the pods' bridge: the edge's tunnel listener, as pods see it. */
const BRIDGE_IP = '198.18.0.1';
const PORT = 18096;
const LABEL = 'gateway.networking.k8s.io/gateway-name=gw';
type Cond = { type: string; status: string; reason: string; message: string };

/** get sends one GET to address:PORT; resolves with status and body, or status 0 when the connection fails. */
function get(address: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: address, port: PORT, path: '/', headers: { host: 'shop.example' }, agent: false, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

/** dataPlaneRole is config/rbac's read-only ClusterRole of the data planes, under a name of this run's. */
function dataPlaneRole(name: string): V1ClusterRole {
  const docs = parseAllDocuments(readFileSync(path.join(REPO_ROOT, 'config/rbac/operator.yaml'), 'utf8')).map((d) => d.toJS() as V1ClusterRole);
  const role = docs.find((d) => d.kind === 'ClusterRole' && d.metadata?.name === 'tuna-data-plane');
  if (role === undefined) throw new Error('config/rbac/operator.yaml has no ClusterRole tuna-data-plane');
  return { ...role, metadata: { name } };
}

describe('operator: a dedicated data plane, its pods from the tuna image (test cluster)', function () {
  this.timeout(1_200_000);
  const namespace = `tuna-dp-${process.pid}`;
  const className = `tuna-dp-${process.pid}`;
  const clusterId = `dp-${process.pid}`;
  const roleName = `tuna-data-plane-${process.pid}`;
  const bindingId = `binding/address/${namespace}/gw`;
  let config: KubeConfig;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  let rbac: RbacAuthorizationV1Api;
  let custom: CustomObjectsApi;
  let image: PushedImage;
  let store: Store;
  let edge: StoreEdge;
  let keys: TunnelKeys;
  let manager: TunnelManager;
  let operator: Operator;
  const errors: string[] = [];
  const figures: string[] = [];

  before(async () => {
    config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    apps = config.makeApiClient(AppsV1Api);
    rbac = config.makeApiClient(RbacAuthorizationV1Api);
    custom = config.makeApiClient(CustomObjectsApi);
    const crds = config.makeApiClient(ApiextensionsV1Api);
    if (!(await crds.readCustomResourceDefinition({ name: `httproutes.${GW}` }).then(() => true, () => false))) await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);
    await installTunaCrds(crds);
    image = await pushTunaImage(`dp-${process.pid}`);
    figures.push(`image: ${image.summary}`);
    await rbac.createClusterRole({ body: dataPlaneRole(roleName) });

    // the edge: its tunnel (and control) listener on the bridge, where the pods dial it; its fronts on loopback
    store = await openSqliteStore(':memory:');
    const base = storeEdgeConfig('unused', { addressPorts: [{ port: PORT, protocol: 'http' }] });
    edge = await startStoreEdge(store, { ...base, listen: { ...base.listen, tunnel: { host: BRIDGE_IP, port: 0 } } });
    const client = new ControlClient({ url: new URL(`http://${BRIDGE_IP}:${edge.controlPort}`) }, (await seedAccount(store)).reservationsToken);

    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
    await apps.createNamespacedDeployment({ namespace, body: echoDeployment('web', { app: 'web' }, 1) });
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] } } });
    await custom.createNamespacedCustomObject({
      group: 'tuna.dev', version: 'v1alpha1', namespace, plural: 'gatewayparameters',
      body: { apiVersion: 'tuna.dev/v1alpha1', kind: 'GatewayParameters', metadata: { name: 'own' }, spec: { dataPlane: 'Dedicated', deployment: { replicas: 1 } } },
    });
    await custom.createClusterCustomObject({
      group: GW, version: 'v1', plural: 'gatewayclasses',
      body: { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: { name: className }, spec: { controllerName: 'tuna.dev/gateway-controller', parametersRef: { group: 'tuna.dev', kind: 'GatewayParameters', name: 'own', namespace } } },
    });
    await custom.createNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'gateways',
      body: {
        apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: { name: 'gw' },
        spec: { gatewayClassName: className, infrastructure: { labels: { 'tuna.test/team': 'web' }, annotations: { 'tuna.test/note': 'own pods' } }, listeners: [{ name: 'web', protocol: 'HTTP', port: PORT }] },
      },
    });
    await custom.createNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'httproutes',
      body: { apiVersion: `${GW}/v1`, kind: 'HTTPRoute', metadata: { name: 'route' }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 8080 }] }] } },
    });

    keys = new TunnelKeys();
    const keyRefOf = (id: string): string | undefined => keys.forTunnel(id)?.keyId;
    const endpoints = new StaticEndpointResolver();
    const dataPlane = new DataPlane({ endpoints });
    manager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, keys, {});
    const settings = { image: image.reference, clusterRole: roleName, edge: `tcp://${BRIDGE_IP}:${edge.controlPort}`, clusterId, baseDomain: 'tuna.test', connections: 2 };
    operator = new Operator({
      objects: new KubeObjects(config, { debounceMs: 50, retryMs: 500 }),
      dataPlane,
      endpoints,
      tunnels: new OperatorTunnels(manager, [edge.endpoint], 2, keyRefOf),
      reconciler: new EdgeReconciler(client, keys, { clusterId, addressPool: '127.77.0.0/16' }),
      keyRefOf,
      edgeIdOf: (id) => keys.edgeIdOf(id),
      dataPlanes: new DataPlanes(new KubeDataPlaneApi(config), settings),
      keyOf: (id) => keys.get(id),
      // only this test's namespace counts: the shared cluster's others may refuse writes
      writer: new StatusWriter(config, { onError: (ref, err) => (ref.namespace === namespace ? errors.push(`status ${ref.kind}/${ref.name}: ${String(err)}`) : undefined) }),
      onError: (err) => errors.push(`sync: ${String(err)}`),
    });
    await operator.start();
  });

  after(async () => {
    if (figures.length > 0) console.log(`      figures:\n${figures.map((f) => `        ${f}`).join('\n')}`);
    await operator?.stop();
    await edge?.edge.close();
    await store?.close();
    await custom?.deleteClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', name: className }).catch(() => undefined);
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
    await rbac?.deleteClusterRole({ name: roleName }).catch(() => undefined);
    await rbac?.deleteClusterRoleBinding({ name: `tuna-gw-${namespace}-gw` }).catch(() => undefined);
  });

  const programmed = async (): Promise<Cond | undefined> => {
    const gw = (await custom.getNamespacedCustomObjectStatus({ group: GW, version: 'v1', namespace, plural: 'gateways', name: 'gw' })) as { status?: { conditions?: Cond[] } };
    return gw.status?.conditions?.find((c) => c.type === 'Programmed');
  };

  it('runs the Gateway’s own pods, labelled and annotated with its infrastructure, and is Programmed once they are available', async () => {
    const started = Date.now();
    const pending = await waitFor('Programmed=False Pending while the pods start', 60_000, async () => {
      const c = await programmed();
      return c?.status === 'False' && c.reason === 'Pending' ? c : undefined;
    });
    expect(pending.message).to.match(/data plane Deployment/);
    await waitFor('Programmed=True', 300_000, async () => ((await programmed())?.status === 'True' ? true : undefined), 1000);
    figures.push(`Gateway created → Programmed=True with its own pod: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const pods = (await core.listNamespacedPod({ namespace, labelSelector: LABEL })).items;
    const accounts = (await core.listNamespacedServiceAccount({ namespace, labelSelector: LABEL })).items;
    expect(pods.length).to.equal(1);
    expect(accounts.map((a) => a.metadata?.name)).to.deep.equal(['tuna-gw-gw']);
    for (const meta of [...pods, ...accounts].map((o) => o.metadata!)) {
      expect(meta.labels).to.include({ 'tuna.test/team': 'web', 'gateway.networking.k8s.io/gateway-name': 'gw' });
      expect(meta.annotations).to.include({ 'tuna.test/note': 'own pods' });
    }
    expect(pods[0]!.spec?.containers[0]?.image).to.equal(image.reference);
    expect(pods[0]!.spec?.containers[0]?.args).to.include(`--data-plane-for=${namespace}/gw`);
    expect(pods[0]!.spec?.serviceAccountName).to.equal('tuna-gw-gw');
  });

  it('answers the HTTPRoute through the edge from the Gateway’s pod, the operator holding no tunnel for it', async () => {
    const address = keys.edgeIdOf(bindingId).replace('binding/address/', '');
    const answer = await waitFor('200 through the edge', 120_000, async () => {
      const got = await get(address);
      return got.status === 200 ? got : undefined;
    }, 500);
    expect(JSON.parse(answer.body)).to.deep.include({ namespace });
    const podIps = new Set((await core.listNamespacedPod({ namespace, labelSelector: LABEL })).items.map((p) => p.status?.podIP));
    const remotes = edge.edge.registry.all().filter((t) => t.bindingId === keys.edgeIdOf(bindingId)).map((t) => t.socket.remoteAddress?.replace(/^::ffff:/, ''));
    figures.push(`the binding's connections at the edge come from ${[...new Set(remotes)].join(', ')} (the data plane pod: ${[...podIps].join(', ')})`);
    expect(remotes.length).to.be.greaterThan(0);
    for (const r of remotes) expect(podIps.has(r), `connection from ${r}`).to.equal(true);
    expect(manager.status().map((s) => s.bindingId)).to.not.include(keys.edgeIdOf(bindingId));
    expect(errors).to.deep.equal([]);
  });

  it('deletes its objects when the Gateway goes: the namespaced ones with it, the ClusterRoleBinding by the operator', async () => {
    await custom.deleteNamespacedCustomObject({ group: GW, version: 'v1', namespace, plural: 'gateways', name: 'gw' });
    await waitFor('the data plane gone', 120_000, async () => {
      const [d, s, sa, crb] = await Promise.all([
        apps.listNamespacedDeployment({ namespace, labelSelector: LABEL }),
        core.listNamespacedSecret({ namespace, labelSelector: LABEL }),
        core.listNamespacedServiceAccount({ namespace, labelSelector: LABEL }),
        rbac.listClusterRoleBinding({ labelSelector: `tuna.dev/gateway-namespace=${namespace}` }),
      ]);
      return d.items.length + s.items.length + sa.items.length + crb.items.length === 0 ? true : undefined;
    }, 1000);
  });
});
