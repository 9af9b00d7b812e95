/**
 * A listener port outside the edge's addressPortRange, end to end (store-mode edge with an address
 * pool and a port range, operator in process): the listener is Accepted=False PortUnavailable with a
 * Warning event and nothing listens on its port, while the Gateway's other listener and another
 * Gateway keep answering.
 */
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { EdgeReconciler, Operator, OperatorTunnels, TunnelKeys } from '../../src/operator/index.js';
import type { SyncResult } from '../../src/operator/index.js';
import { addressPortLimitsOf } from '../../src/operator/edge-settings.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import { TunnelManager } from '../../src/tunnel/manager.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { ListedObjects } from '../support/operator-fakes.js';

const GW = 'gateway.networking.k8s.io/v1';
const RANGE = { first: 18600, last: 18699 };
const PORT_IN = 18611;
const PORT_OTHER = 18612;
const PORT_FAR = 28611;

const obj = (o: Record<string, unknown>): KubernetesObject => o as KubernetesObject;
type Cond = { type: string; status: string; reason: string; message: string };

/** gatewayWithRoute is a Gateway with HTTP listeners on `ports` and an HTTPRoute on all of them to Service `service` (its endpoint on loopback `port`). */
function gatewayWithRoute(name: string, service: string, port: number, ports: Record<string, number>): KubernetesObject[] {
  const listeners = Object.entries(ports).map(([listener, p]) => ({ name: listener, protocol: 'HTTP', port: p }));
  return [
    obj({ apiVersion: GW, kind: 'Gateway', metadata: { name, namespace: 'shop', uid: `uid-${name}`, generation: 1 }, spec: { gatewayClassName: 'tuna', listeners } }),
    obj({
      apiVersion: GW,
      kind: 'HTTPRoute',
      metadata: { name: `${name}-route`, namespace: 'shop', uid: `uid-${name}-route`, generation: 1 },
      spec: { parentRefs: [{ name }], rules: [{ backendRefs: [{ name: service, port: 80 }] }] },
    }),
    obj({ apiVersion: 'v1', kind: 'Service', metadata: { name: service, namespace: 'shop' }, spec: { ports: [{ name: 'http', port: 80 }] } }),
    obj({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: service, namespace: 'shop', labels: { 'kubernetes.io/service-name': service } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port }],
      endpoints: [{ addresses: ['127.0.0.1'] }],
    }),
  ];
}

/** get sends one HTTP GET to address:port; rejects when the connection fails (ECONNREFUSED: nothing listens). */
function get(address: string, port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: address, port, path: '/', headers: { host: 'shop.example' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** backendOf waits (a bounded number of tries, 100 ms apart) until address:port answers other than 503 (no tunnel yet), and names the backend that answered. */
async function backendOf(address: string, port: number): Promise<string> {
  let last: unknown;
  for (let i = 0; i < 100; i++) {
    last = await get(address, port).catch((err: Error) => err.message);
    if (typeof last === 'object' && last !== null && (last as { status: number }).status === 200) return (JSON.parse((last as { body: string }).body) as EchoReply).backend;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${address}:${port} never answered 200: last ${JSON.stringify(last)}`);
}

describe('operator: a Gateway listener port outside the edge’s address port range (store-mode edge, end to end)', () => {
  let store: Store;
  let running: StoreEdge;
  let client: ControlClient;
  let backendA: TestBackend;
  let backendB: TestBackend;
  let objects: ListedObjects;
  let operator: Operator;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store, storeEdgeConfig('unused', { addressPorts: [], addressPortRange: RANGE }));
    const seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    backendA = await startHttpBackend('a');
    backendB = await startHttpBackend('b');
    objects = new ListedObjects();
    objects.items = [
      obj({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tuna', uid: 'uid-class', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } }),
      ...gatewayWithRoute('gw-a', 'web-a', backendA.port, { web: PORT_IN, far: PORT_FAR }),
      ...gatewayWithRoute('gw-b', 'web-b', backendB.port, { web: PORT_OTHER }),
    ];
    const learned = (await client.describeEdge()).edge;
    const keys = new TunnelKeys();
    const keyRefOf = (id: string): string | undefined => keys.forTunnel(id)?.keyId;
    const endpoints = new StaticEndpointResolver();
    const dataPlane = new DataPlane({ endpoints });
    const manager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, keys, {});
    operator = new Operator({
      objects,
      dataPlane,
      endpoints,
      tunnels: new OperatorTunnels(manager, [running.endpoint], 1, keyRefOf),
      reconciler: new EdgeReconciler(client, keys, { clusterId: 'east', addressPool: learned.addressPool?.range ?? null, addressPorts: addressPortLimitsOf(learned) }),
      keyRefOf,
      edgeIdOf: (id) => keys.edgeIdOf(id),
    });
  });

  afterEach(async () => {
    await operator.stop();
    await running.edge.close();
    await store.close();
    await backendA.close();
    await backendB.close();
  });

  const gatewayOf = (result: SyncResult, name: string) => result.state.statuses.find((s) => s.ref.kind === 'Gateway' && s.ref.name === name);
  const conditionsOf = (status: Record<string, unknown> | undefined): Cond[] => (status?.conditions as Cond[] | undefined) ?? [];
  const listenerOf = (status: Record<string, unknown> | undefined, name: string): Cond[] =>
    ((status?.listeners as { name: string; conditions: Cond[] }[] | undefined) ?? []).find((l) => l.name === name)?.conditions ?? [];
  const find = (list: Cond[], type: string): Cond | undefined => list.find((c) => c.type === type);

  it('holds back that listener alone as PortUnavailable with a Warning event; the Gateway’s other listener and another Gateway keep answering', async () => {
    await operator.start();
    // a port just asked for is Pending until the edge reports it listening: the next sync sees it
    const result = await operator.sync();
    const message = `port ${PORT_FAR} is not available: the edge serves ports ${RANGE.first}-${RANGE.last} on its addresses`;
    expect(result.edge?.pending).to.deep.equal([{ bindingId: 'binding/address/shop/gw-a', reason: 'PortUnavailable', message, port: PORT_FAR }]);

    const a = gatewayOf(result, 'gw-a');
    expect(find(listenerOf(a?.status, 'far'), 'Accepted')).to.include({ status: 'False', reason: 'PortUnavailable', message });
    expect(find(listenerOf(a?.status, 'far'), 'Programmed')).to.include({ status: 'False' });
    expect(find(listenerOf(a?.status, 'web'), 'Programmed')).to.include({ status: 'True' });
    expect(find(conditionsOf(a?.status), 'Programmed')).to.include({ status: 'True' });
    expect(find(conditionsOf(a?.status), 'Accepted')).to.include({ status: 'True', reason: 'ListenersNotValid' });
    expect(a?.events).to.deep.equal([{ type: 'Warning', reason: 'PortUnavailable', message }]);
    const b = gatewayOf(result, 'gw-b');
    expect(find(conditionsOf(b?.status), 'Programmed')).to.include({ status: 'True' });
    expect(b?.events).to.deep.equal([]);

    // the edge serves exactly the ports in range: gw-a's other listener and gw-b answer, the far port is not opened
    const addressA = result.edge?.addresses.get('binding/address/shop/gw-a');
    const addressB = result.edge?.addresses.get('binding/address/shop/gw-b');
    expect(addressA).to.match(/^127\.77\.\d+\.\d+$/);
    expect(addressB).to.match(/^127\.77\.\d+\.\d+$/);
    const reservations = (await client.listReservations({ 'tuna.dev/cluster': 'east' })).reservations;
    expect(reservations.map((r) => [r.value, r.ports]).sort()).to.deep.equal(
      [
        [addressA, [{ port: PORT_IN, protocol: 'http' }]],
        [addressB, [{ port: PORT_OTHER, protocol: 'http' }]],
      ].sort(),
    );
    expect(await backendOf(addressA!, PORT_IN)).to.equal('a');
    expect(await backendOf(addressB!, PORT_OTHER)).to.equal('b');
    const far = await get(addressA!, PORT_FAR).then(
      (r) => `answered ${r.status}`,
      (err: NodeJS.ErrnoException) => err.code,
    );
    expect(far).to.equal('ECONNREFUSED');
  });
});
