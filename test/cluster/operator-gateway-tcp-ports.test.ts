// operator-gateway-tcp-ports.test.ts — on a real apiserver: a Gateway with two TCP listeners on
// ports the edge's fixed list does not have, each routed by TCPRoute to an echo-basic pod, gets its
// own address serving exactly those two ports (the operator names them in the address reservation,
// inside the edge's addressPortRange); removing one listener closes that port only.
import { expect } from 'chai';
import { connect } from 'node:net';
import { ApiextensionsV1Api, AppsV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { EdgeReconciler, TunnelKeys } from '../../src/operator/edge-reconciler.js';
import { addressPortLimitsOf } from '../../src/operator/edge-settings.js';
import { KubeObjects } from '../../src/operator/kube-objects.js';
import { Operator, OperatorTunnels } from '../../src/operator/operator.js';
import { StatusWriter } from '../../src/operator/status-writer.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import { TunnelManager } from '../../src/tunnel/manager.js';
import { seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { clusterConfig, echoDeployment, runScript, waitFor } from './cluster-env.js';

const GW = 'gateway.networking.k8s.io';
/** the edge's fixed list: what an address whose reservation names no ports would serve */
const DEFAULT_PORT = 19080;
const PORT_A = 19300;
const PORT_B = 19301;
type Cond = { type: string; status: string; reason: string };
type Obj = { status?: { conditions?: Cond[]; listeners?: { name: string; conditions: Cond[] }[]; addresses?: { type: string; value: string }[] } };

/** httpOverTcp sends one HTTP/1.1 GET as raw bytes to address:port and resolves the status line (rejects on a refused or silent connection). */
function httpOverTcp(address: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port });
    const chunks: Buffer[] = [];
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer from ${address}:${port} in 5 s`)));
    socket.on('connect', () => socket.write('GET /tcp HTTP/1.1\r\nHost: echo.test\r\nConnection: close\r\n\r\n'));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text === '') reject(new Error(`${address}:${port} closed without an answer`));
      else resolve(text.split('\r\n')[0] ?? '');
    });
  });
}

/** refused tells whether a TCP connection to address:port is refused (nothing listens there). */
function refused(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port });
    socket.setTimeout(2000, () => (socket.destroy(), resolve(false)));
    socket.on('connect', () => (socket.destroy(), resolve(false)));
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('operator: a Gateway’s TCP listeners served on exactly their ports of its address (real apiserver)', function () {
  this.timeout(240_000);
  const namespace = `tuna-gtp-${process.pid}`;
  const className = `tuna-gtp-${process.pid}`;
  const clusterId = `gtp-${process.pid}`;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let tcpRouteVersion = 'v1';
  let store: Store;
  let edge: StoreEdge;
  let client: ControlClient;
  let operator: Operator;
  const errors: string[] = [];

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    custom = config.makeApiClient(CustomObjectsApi);
    const crds = config.makeApiClient(ApiextensionsV1Api);
    const readCrd = () => crds.readCustomResourceDefinition({ name: `tcproutes.${GW}` }).catch(() => undefined);
    if ((await readCrd()) === undefined) await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);
    const served = (await readCrd())?.spec.versions.filter((v) => v.served).map((v) => v.name) ?? [];
    tcpRouteVersion = served.includes('v1') ? 'v1' : 'v1alpha2';

    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
    const labels = { app: 'echo' };
    await config.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body: echoDeployment('echo', labels, 1) });
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'echo' }, spec: { selector: labels, ports: [{ name: 'tcp', port: 8080, targetPort: 'http' }] } } });
    await custom.createClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', body: { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: { name: className }, spec: { controllerName: 'tuna.dev/gateway-controller' } } });
    await custom.createNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'gateways',
      body: {
        apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: { name: 'gw' },
        spec: { gatewayClassName: className, listeners: [{ name: 'tcp-a', protocol: 'TCP', port: PORT_A }, { name: 'tcp-b', protocol: 'TCP', port: PORT_B }] },
      },
    });
    await custom.createNamespacedCustomObject({
      group: GW, version: tcpRouteVersion, namespace, plural: 'tcproutes',
      body: { apiVersion: `${GW}/${tcpRouteVersion}`, kind: 'TCPRoute', metadata: { name: 'echo' }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'echo', port: 8080 }] }] } },
    });
    const discovery = config.makeApiClient(DiscoveryV1Api);
    await waitFor('a ready echo endpoint', 90_000, async () => {
      const slices = await discovery.listNamespacedEndpointSlice({ namespace, labelSelector: 'kubernetes.io/service-name=echo' });
      return slices.items.flatMap((s) => s.endpoints ?? []).some((e) => e.conditions?.ready === true) ? true : undefined;
    });

    store = await openSqliteStore(':memory:');
    edge = await startStoreEdge(store, storeEdgeConfig('unused', { addressPorts: [{ port: DEFAULT_PORT, protocol: 'http' }], addressPortRange: { first: 19000, last: 19999 } }));
    const seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, seeded.reservationsToken);
    const learned = (await client.describeEdge()).edge;
    const keys = new TunnelKeys();
    const keyRefOf = (id: string): string | undefined => keys.forTunnel(id)?.keyId;
    const endpoints = new StaticEndpointResolver();
    const dataPlane = new DataPlane({ endpoints });
    operator = new Operator({
      objects: new KubeObjects(config, { debounceMs: 50, retryMs: 500 }),
      dataPlane,
      endpoints,
      tunnels: new OperatorTunnels(new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, keys, {}), [edge.endpoint], 1, keyRefOf),
      reconciler: new EdgeReconciler(client, keys, { clusterId, addressPool: learned.addressPool?.range ?? null, addressPorts: addressPortLimitsOf(learned) }),
      keyRefOf,
      edgeIdOf: (id) => keys.edgeIdOf(id),
      writer: new StatusWriter(config, { onError: (ref, err) => errors.push(`status ${ref.kind}/${ref.name}: ${String(err)}`) }),
      onError: (err) => errors.push(`sync: ${String(err)}`),
    });
    await operator.start();
  });

  after(async () => {
    await operator?.stop();
    await edge?.edge.close();
    await store?.close();
    await custom?.deleteClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', name: className }).catch(() => undefined);
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  const gateway = async (): Promise<Obj> => (await custom.getNamespacedCustomObjectStatus({ group: GW, version: 'v1', namespace, plural: 'gateways', name: 'gw' })) as Obj;
  const isProgrammed = (gw: Obj, name: string): boolean => gw.status?.listeners?.find((l) => l.name === name)?.conditions.some((c) => c.type === 'Programmed' && c.status === 'True') === true;
  let address = '';

  it('answers on both TCP ports of the Gateway’s address, and on no port of the edge’s default list', async () => {
    const gw = await waitFor('both listeners Programmed with an address', 60_000, async () => {
      const got = await gateway();
      return (got.status?.addresses?.length ?? 0) > 0 && isProgrammed(got, 'tcp-a') && isProgrammed(got, 'tcp-b') ? got : undefined;
    });
    address = gw.status?.addresses?.[0]?.value ?? '';
    expect(address).to.match(/^127\.77\.\d+\.\d+$/);
    const [reservation] = (await client.listReservations({ 'tuna.dev/cluster': clusterId })).reservations;
    expect(reservation?.ports).to.deep.equal([
      { port: PORT_A, protocol: 'tcp' },
      { port: PORT_B, protocol: 'tcp' },
    ]);
    expect(reservation?.status?.listeners.map((l) => [l.port, l.state])).to.deep.equal([
      [PORT_A, 'listening'],
      [PORT_B, 'listening'],
    ]);
    // the bytes reach the echo pod through the tunnel: an HTTP exchange carried as raw TCP
    expect(await waitFor(`an answer on ${PORT_A}`, 30_000, () => httpOverTcp(address, PORT_A).catch(() => undefined))).to.equal('HTTP/1.1 200 OK');
    expect(await httpOverTcp(address, PORT_B)).to.equal('HTTP/1.1 200 OK');
    expect(await refused(address, DEFAULT_PORT), 'the default list is not opened on an address that names its ports').to.equal(true);
    expect(errors).to.deep.equal([]);
  });

  it('closes only the port of a removed listener', async () => {
    await custom.patchNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'gateways', name: 'gw',
      body: [{ op: 'replace', path: '/spec/listeners', value: [{ name: 'tcp-a', protocol: 'TCP', port: PORT_A }] }],
    });
    await waitFor(`port ${PORT_B} closed`, 30_000, async () => ((await refused(address, PORT_B)) ? true : undefined));
    const [reservation] = (await client.listReservations({ 'tuna.dev/cluster': clusterId })).reservations;
    expect(reservation?.value, 'the same address').to.equal(address);
    expect(reservation?.ports).to.deep.equal([{ port: PORT_A, protocol: 'tcp' }]);
    expect(await httpOverTcp(address, PORT_A)).to.equal('HTTP/1.1 200 OK');
    const gw = await waitFor('one listener', 30_000, async () => {
      const got = await gateway();
      return got.status?.listeners?.length === 1 ? got : undefined;
    });
    expect(isProgrammed(gw, 'tcp-a')).to.equal(true);
    expect(errors).to.deep.equal([]);
  });
});
