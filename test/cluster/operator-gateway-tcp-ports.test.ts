// operator-gateway-tcp-ports.test.ts — on a real apiserver: a Gateway with two TCP listeners and a
// UDP one on ports the edge's fixed list does not have, routed by TCPRoute to an echo-basic pod and
// by UDPRoute to an echo-basic UDP echo pod (UDP_ECHO_SERVER), gets its own address serving exactly
// those three ports (the operator names them in the address reservation, inside the edge's
// addressPortRange); removing one listener closes that port only, the others still answer.
import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { ApiextensionsV1Api, AppsV1Api, CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import type { Reservation } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { addressPortLimitsOf } from '../../src/operator/edge-settings.js';
import type { Operator } from '../../src/operator/operator.js';
import { seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { clusterConfig, echoDeployment, runScript, waitFor } from './cluster-env.js';
import { inProcessOperator } from './in-process-operator.js';

const GW = 'gateway.networking.k8s.io';
/** the edge's fixed list: what an address whose reservation names no ports would serve */
const DEFAULT_PORT = 19080;
const PORT_A = 19300;
const PORT_B = 19301;
const PORT_UDP = 19302;
const tcpA = { name: 'tcp-a', protocol: 'TCP', port: PORT_A };
const tcpB = { name: 'tcp-b', protocol: 'TCP', port: PORT_B };
const udpC = { name: 'udp-c', protocol: 'UDP', port: PORT_UDP };
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

/**
 * udpExchange sends one datagram from a connected UDP socket to address:port and resolves the
 * answer, `refused` when the kernel reports the port unreachable (ICMP, ECONNREFUSED: nothing is
 * bound there), or `silent` after 2 s without either.
 */
function udpExchange(address: string, port: number, payload: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    let done = false;
    const finish = (answer: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.close();
      resolve(answer);
    };
    const timer = setTimeout(() => finish('silent'), 2000);
    socket.on('message', (msg: Buffer) => finish(msg.toString('utf8')));
    socket.on('error', (err: NodeJS.ErrnoException) => finish(err.code === 'ECONNREFUSED' ? 'refused' : `error ${err.code ?? err.message}`));
    socket.connect(port, address, () => socket.send(payload));
  });
}

/** udpEchoes waits until address:port answers a datagram with the UDP echo's JSON, and resolves the `service` it names. */
async function udpEchoes(address: string, port: number, timeoutMs: number): Promise<string> {
  let n = 0;
  return waitFor(`a UDP answer on ${port}`, timeoutMs, async () => {
    const probe = `probe-${n++}`;
    const answer = await udpExchange(address, port, probe);
    if (answer === 'silent' || answer === 'refused' || answer.startsWith('error ')) return undefined;
    const parsed = JSON.parse(answer) as { request?: string; service?: string };
    return parsed.request === probe ? parsed.service : undefined;
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
  let udpRouteVersion = 'v1';
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
    const readUdpCrd = () => crds.readCustomResourceDefinition({ name: `udproutes.${GW}` }).catch(() => undefined);
    if ((await readCrd()) === undefined || (await readUdpCrd()) === undefined) await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);
    const udpServed = (await readUdpCrd())?.spec.versions.filter((v) => v.served).map((v) => v.name) ?? [];
    udpRouteVersion = udpServed.includes('v1') ? 'v1' : 'v1alpha2';
    const served = (await readCrd())?.spec.versions.filter((v) => v.served).map((v) => v.name) ?? [];
    tcpRouteVersion = served.includes('v1') ? 'v1' : 'v1alpha2';

    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
    const labels = { app: 'echo' };
    await config.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body: echoDeployment('echo', labels, 1) });
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'echo' }, spec: { selector: labels, ports: [{ name: 'tcp', port: 8080, targetPort: 'http' }] } } });
    const udpLabels = { app: 'udp-echo' };
    await config.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body: echoDeployment('udp-echo', udpLabels, 1, { udp: true }) });
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'udp-echo' }, spec: { selector: udpLabels, ports: [{ name: 'udp', protocol: 'UDP', port: 8080, targetPort: 'udp' }] } } });
    await custom.createClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', body: { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: { name: className }, spec: { controllerName: 'tuna.dev/gateway-controller' } } });
    await custom.createNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'gateways',
      body: {
        apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: { name: 'gw' },
        spec: { gatewayClassName: className, listeners: [tcpA, tcpB, udpC] },
      },
    });
    await custom.createNamespacedCustomObject({
      group: GW, version: tcpRouteVersion, namespace, plural: 'tcproutes',
      body: { apiVersion: `${GW}/${tcpRouteVersion}`, kind: 'TCPRoute', metadata: { name: 'echo' }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'echo', port: 8080 }] }] } },
    });
    await custom.createNamespacedCustomObject({
      group: GW, version: udpRouteVersion, namespace, plural: 'udproutes',
      body: { apiVersion: `${GW}/${udpRouteVersion}`, kind: 'UDPRoute', metadata: { name: 'udp-echo' }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'udp-echo', port: 8080 }] }] } },
    });
    const discovery = config.makeApiClient(DiscoveryV1Api);
    for (const service of ['echo', 'udp-echo']) {
      await waitFor(`a ready ${service} endpoint`, 90_000, async () => {
        const slices = await discovery.listNamespacedEndpointSlice({ namespace, labelSelector: `kubernetes.io/service-name=${service}` });
        return slices.items.flatMap((s) => s.endpoints ?? []).some((e) => e.conditions?.ready === true) ? true : undefined;
      });
    }

    store = await openSqliteStore(':memory:');
    edge = await startStoreEdge(store, storeEdgeConfig('unused', { addressPorts: [{ port: DEFAULT_PORT, protocol: 'http' }], addressPortRange: { first: 19000, last: 19999 } }));
    const seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, seeded.reservationsToken);
    const learned = (await client.describeEdge()).edge;
    ({ operator } = inProcessOperator(config, edge, client, {
      reconciler: { clusterId, addressPool: learned.addressPool?.range ?? null, addressPorts: addressPortLimitsOf(learned) },
      errors,
    }));
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

  const portsOf = (r: Reservation | undefined) => (r?.ports ?? []).map((p) => `${p.port}/${p.protocol}`).sort();
  const listenersOf = (r: Reservation | undefined) =>
    (r?.status?.listeners ?? []).map((l) => `${l.port}/${l.protocol} ${l.state}`).sort();

  it('answers on both TCP ports and the UDP port of the Gateway’s address, and on no port of the edge’s default list', async () => {
    const gw = await waitFor('the three listeners Programmed with an address', 60_000, async () => {
      const got = await gateway();
      return (got.status?.addresses?.length ?? 0) > 0 && isProgrammed(got, 'tcp-a') && isProgrammed(got, 'tcp-b') && isProgrammed(got, 'udp-c') ? got : undefined;
    });
    address = gw.status?.addresses?.[0]?.value ?? '';
    expect(address).to.match(/^127\.77\.\d+\.\d+$/);
    const [reservation] = (await client.listReservations({ 'tuna.dev/cluster': clusterId })).reservations;
    expect(portsOf(reservation)).to.deep.equal([`${PORT_A}/tcp`, `${PORT_B}/tcp`, `${PORT_UDP}/udp`]);
    expect(listenersOf(reservation)).to.deep.equal([`${PORT_A}/tcp listening`, `${PORT_B}/tcp listening`, `${PORT_UDP}/udp listening`]);
    // the bytes reach the echo pod through the tunnel: an HTTP exchange carried as raw TCP
    expect(await waitFor(`an answer on ${PORT_A}`, 30_000, () => httpOverTcp(address, PORT_A).catch(() => undefined))).to.equal('HTTP/1.1 200 OK');
    expect(await httpOverTcp(address, PORT_B)).to.equal('HTTP/1.1 200 OK');
    // a datagram reaches the UDP echo pod through the tunnel and its answer comes back (a new pod's first answers can be slow: docs/conformance.md)
    expect(await udpEchoes(address, PORT_UDP, 90_000)).to.equal('udp-echo');
    expect(await refused(address, DEFAULT_PORT), 'the default list is not opened on an address that names its ports').to.equal(true);
    expect(errors).to.deep.equal([]);
  });

  const setListeners = (listeners: unknown[]) =>
    custom.patchNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'gateways', name: 'gw',
      body: [{ op: 'replace', path: '/spec/listeners', value: listeners }],
    });

  it('closes only the port of a removed TCP listener: the other TCP port and the UDP port still answer', async () => {
    await setListeners([tcpA, udpC]);
    await waitFor(`port ${PORT_B} closed`, 30_000, async () => ((await refused(address, PORT_B)) ? true : undefined));
    const [reservation] = (await client.listReservations({ 'tuna.dev/cluster': clusterId })).reservations;
    expect(reservation?.value, 'the same address').to.equal(address);
    expect(portsOf(reservation)).to.deep.equal([`${PORT_A}/tcp`, `${PORT_UDP}/udp`]);
    expect(await httpOverTcp(address, PORT_A)).to.equal('HTTP/1.1 200 OK');
    expect(await udpEchoes(address, PORT_UDP, 30_000)).to.equal('udp-echo');
    const gw = await waitFor('two listeners', 30_000, async () => {
      const got = await gateway();
      return got.status?.listeners?.length === 2 ? got : undefined;
    });
    expect(isProgrammed(gw, 'tcp-a')).to.equal(true);
    expect(isProgrammed(gw, 'udp-c')).to.equal(true);
    expect(errors).to.deep.equal([]);
  });

  it('closes only the port of a removed UDP listener: the TCP port still answers', async () => {
    await setListeners([tcpA]);
    await waitFor(`UDP port ${PORT_UDP} closed`, 30_000, async () => ((await udpExchange(address, PORT_UDP, 'closed?')) === 'refused' ? true : undefined));
    const [reservation] = (await client.listReservations({ 'tuna.dev/cluster': clusterId })).reservations;
    expect(reservation?.value, 'the same address').to.equal(address);
    expect(portsOf(reservation)).to.deep.equal([`${PORT_A}/tcp`]);
    expect(await httpOverTcp(address, PORT_A)).to.equal('HTTP/1.1 200 OK');
    const gw = await waitFor('one listener', 30_000, async () => {
      const got = await gateway();
      return got.status?.listeners?.length === 1 ? got : undefined;
    });
    expect(isProgrammed(gw, 'tcp-a')).to.equal(true);
    expect(errors).to.deep.equal([]);
  });
});
