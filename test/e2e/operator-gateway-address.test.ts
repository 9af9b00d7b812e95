import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { EdgeReconciler, Operator, OperatorTunnels, TunnelKeys } from '../../src/operator/index.js';
import type { SyncResult } from '../../src/operator/index.js';
import type { EdgeReconcilerOptions } from '../../src/operator/edge-reconciler.js';
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
const ADDRESS_PORT = 18090;


const obj = (o: Record<string, unknown>): KubernetesObject => o as KubernetesObject;

/** gatewayWithRoute is a Gateway with one HTTP listener (on `hostname`, if given) and an HTTPRoute to Service `service`. */
function gatewayWithRoute(name: string, service: string, port: number, hostname?: string, addresses?: string[]): KubernetesObject[] {
  const listener = { name: 'web', protocol: 'HTTP', port: ADDRESS_PORT, ...(hostname !== undefined ? { hostname } : {}) };
  return gatewayObjects(name, service, port, [listener], addresses);
}

/** gatewayObjects is a Gateway with `listeners`, an HTTPRoute on all of them to Service `service`, and its endpoint on loopback `port`. */
function gatewayObjects(name: string, service: string, port: number, listeners: Record<string, unknown>[], addresses?: string[]): KubernetesObject[] {
  const spec = { gatewayClassName: 'tuna', listeners, ...(addresses !== undefined ? { addresses: addresses.map((value) => ({ type: 'IPAddress', value })) } : {}) };
  return [
    obj({ apiVersion: GW, kind: 'Gateway', metadata: { name, namespace: 'shop', uid: `uid-${name}`, generation: 1 }, spec }),
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

/** get sends one HTTP GET to address:port with a Host header; rejects when the connection fails (ECONNREFUSED: nothing listens). */
function get(address: string, host: string, port = ADDRESS_PORT): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: address, port, path: '/', headers: { host }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** served waits (a bounded number of tries, 100 ms apart) until address:port answers other than 503 (no tunnel yet). */
async function served(address: string, host: string, port = ADDRESS_PORT): Promise<{ status: number; body: string }> {
  let last: { status: number; body: string } | undefined;
  for (let i = 0; i < 100; i++) {
    last = await get(address, host, port).catch(() => undefined);
    if (last !== undefined && last.status !== 503) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${address} never answered: last ${JSON.stringify(last)}`);
}

/** startOperator is an in-process operator on `objects`, serving through the store-mode edge `running`, reconciled with `options` (clusterId east). */
function startOperator(running: StoreEdge, client: ControlClient, objects: ListedObjects, keys: TunnelKeys, options: Omit<EdgeReconcilerOptions, 'clusterId'>): Operator {
  const keyRefOf = (id: string): string | undefined => keys.forTunnel(id)?.keyId;
  const endpoints = new StaticEndpointResolver();
  const dataPlane = new DataPlane({ endpoints });
  const manager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, keys, {});
  return new Operator({
    objects,
    dataPlane,
    endpoints,
    tunnels: new OperatorTunnels(manager, [running.endpoint], 1, keyRefOf),
    reconciler: new EdgeReconciler(client, keys, { clusterId: 'east', ...options }),
    keyRefOf,
    edgeIdOf: (id) => keys.edgeIdOf(id),
  });
}

/** Fixture is a store-mode edge on an in-memory store, a control client of a seeded account's reservations key, and two HTTP backends. */
interface Fixture {
  store: Store;
  running: StoreEdge;
  client: ControlClient;
  backendA: TestBackend;
  backendB: TestBackend;
}

async function startFixture(edge: Parameters<typeof storeEdgeConfig>[1]): Promise<Fixture> {
  const store = await openSqliteStore(':memory:');
  const running = await startStoreEdge(store, storeEdgeConfig('unused', edge));
  const seeded = await seedAccount(store);
  const client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
  return { store, running, client, backendA: await startHttpBackend('a'), backendB: await startHttpBackend('b') };
}

/** stopAll stops the operator, then what the fixture started. */
async function stopAll(operator: Operator, f: Fixture): Promise<void> {
  await operator.stop();
  await f.running.edge.close();
  await f.store.close();
  await f.backendA.close();
  await f.backendB.close();
}

describe('operator: Gateway addresses end to end (store-mode edge with an address pool)', () => {
  let store: Store;
  let running: StoreEdge;
  let client: ControlClient;
  let backendA: TestBackend;
  let backendB: TestBackend;
  let objects: ListedObjects;
  let keys: TunnelKeys;
  let operator: Operator;

  beforeEach(async () => {
    ({ store, running, client, backendA, backendB } = await startFixture({ addressPorts: [{ port: ADDRESS_PORT, protocol: 'http' }] }));
    objects = new ListedObjects();
    objects.items = [
      obj({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tuna', uid: 'uid-class', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } }),
      ...gatewayWithRoute('gw-a', 'web-a', backendA.port),
      ...gatewayWithRoute('gw-b', 'web-b', backendB.port, 'b.example'),
    ];
    keys = new TunnelKeys();
    operator = startOperator(running, client, objects, keys, { addressPool: '127.77.0.0/16' });
  });

  afterEach(() => stopAll(operator, { store, running, client, backendA, backendB }));

  const gatewayStatus = (result: SyncResult, name: string) => result.state.statuses.find((s) => s.ref.kind === 'Gateway' && s.ref.name === name)?.status;
  const programmed = (status: Record<string, unknown> | undefined) => (status?.conditions as { type: string; status: string; reason: string }[]).find((c) => c.type === 'Programmed');

  it('gives each Gateway its own address and key, lists it in status.addresses, and serves only that Gateway’s listeners on it', async () => {
    const result = await operator.start();
    expect(result.edge?.pending).to.deep.equal([]);
    const a = result.edge?.addresses.get('binding/address/shop/gw-a');
    const b = result.edge?.addresses.get('binding/address/shop/gw-b');
    expect(a).to.match(/^127\.77\.\d+\.\d+$/);
    expect(b).to.match(/^127\.77\.\d+\.\d+$/);
    expect(a).to.not.equal(b);
    expect(gatewayStatus(result, 'gw-a')?.addresses).to.deep.equal([{ type: 'IPAddress', value: a }]);
    expect(programmed(gatewayStatus(result, 'gw-a'))).to.include({ status: 'True' });
    // one reservation of kind address and one key each, labelled with the graph's binding id
    const reservations = (await client.listReservations({ 'tuna.dev/cluster': 'east' })).reservations;
    expect(reservations.map((r) => [r.kind, r.value, r.labels['tuna.dev/binding']]).sort()).to.deep.equal(
      [
        ['address', a, 'binding/address/shop/gw-a'],
        ['address', b, 'binding/address/shop/gw-b'],
      ].sort(),
    );
    expect(keys.get('binding/address/shop/gw-a')?.edgeBindingId).to.equal(`binding/address/${a}`);
    expect(keys.get('binding/address/shop/gw-a')?.keyId).to.not.equal(keys.get('binding/address/shop/gw-b')?.keyId);

    // any Host on gw-a's address reaches gw-a's route, even a host gw-b's listener names
    const any = await served(a!, 'anything.example');
    expect(any.status).to.equal(200);
    expect((JSON.parse(any.body) as EchoReply).backend).to.equal('a');
    const other = await served(a!, 'b.example');
    expect((JSON.parse(other.body) as EchoReply).backend).to.equal('a');
    // gw-b's address serves only its own listener's hostname
    const own = await served(b!, 'b.example');
    expect((JSON.parse(own.body) as EchoReply).backend).to.equal('b');
    expect((await served(b!, 'anything.example')).status).to.equal(404);
    expect(backendB.requests.length).to.equal(1);

    // a second sync changes nothing at the edge
    expect((await operator.sync()).edge).to.include({ reserved: 0, minted: 0, released: 0, revoked: 0 });
  });

  it('releases the address and revokes the key when the Gateway goes', async () => {
    await operator.start();
    const before = (await client.listTunnelKeys({ 'tuna.dev/cluster': 'east' })).tunnelKeys.filter((k) => k.revokedAt === null);
    expect(before).to.have.length(2);
    objects.items = objects.items.filter((o) => !(o.kind === 'Gateway' && o.metadata?.name === 'gw-b'));
    const after = await operator.sync();
    expect(after.edge).to.include({ released: 1, revoked: 1 });
    expect((await client.listReservations({ 'tuna.dev/cluster': 'east' })).reservations.map((r) => r.labels['tuna.dev/binding'])).to.deep.equal(['binding/address/shop/gw-a']);
    expect(keys.get('binding/address/shop/gw-b')).to.equal(undefined);
  });

  it('honours spec.addresses inside the pool, and holds back one outside it as AddressNotUsable until it is changed', async () => {
    const asked = (addresses: string[]) => [
      ...objects.items.filter((o) => o.kind === 'GatewayClass'),
      ...gatewayWithRoute('gw-a', 'web-a', backendA.port, undefined, addresses),
    ];
    objects.items = asked(['10.9.9.9']);
    const outside = await operator.start();
    expect(outside.edge?.pending.map((p) => [p.bindingId, p.reason, p.message])).to.deep.equal([
      ['binding/address/shop/gw-a', 'AddressNotUsable', "spec.addresses 10.9.9.9 is not usable: it is not in the edge's address pool 127.77.0.0/16"],
    ]);
    expect(programmed(gatewayStatus(outside, 'gw-a'))).to.include({ status: 'False', reason: 'AddressNotUsable' });
    expect(gatewayStatus(outside, 'gw-a')?.addresses).to.deep.equal([]);
    expect((await client.listReservations({ 'tuna.dev/cluster': 'east' })).reservations).to.deep.equal([]);

    objects.items = asked(['127.77.3.3']);
    const inside = await operator.sync();
    expect(inside.edge?.pending).to.deep.equal([]);
    expect(gatewayStatus(inside, 'gw-a')?.addresses).to.deep.equal([{ type: 'IPAddress', value: '127.77.3.3' }]);
    expect(programmed(gatewayStatus(inside, 'gw-a'))).to.include({ status: 'True' });
    expect((JSON.parse((await served('127.77.3.3', 'anything.example')).body) as EchoReply).backend).to.equal('a');

    // asking for another address moves the Gateway there and releases the old one
    objects.items = asked(['127.77.3.4']);
    const moved = await operator.sync();
    expect(moved.edge).to.include({ reserved: 1, released: 1 });
    expect((await client.listReservations({ 'tuna.dev/cluster': 'east' })).reservations.map((r) => r.value)).to.deep.equal(['127.77.3.4']);
    expect((JSON.parse((await served('127.77.3.4', 'anything.example')).body) as EchoReply).backend).to.equal('a');

    // asking for one outside the pool again lets go of the address and its key
    objects.items = asked(['10.9.9.9']);
    const again = await operator.sync();
    expect(again.edge).to.include({ released: 1 });
    expect(again.edge?.pending.map((p) => p.reason)).to.deep.equal(['AddressNotUsable']);
    expect(keys.get('binding/address/shop/gw-a')).to.equal(undefined);
    expect((await client.listTunnelKeys({ 'tuna.dev/cluster': 'east' })).tunnelKeys.filter((k) => k.revokedAt === null)).to.deep.equal([]);
  });

  it('holds back a second Gateway asking for an address another Gateway holds as AddressNotUsable, with a Warning event, and the first keeps serving', async () => {
    const first = [...objects.items.filter((o) => o.kind === 'GatewayClass'), ...gatewayWithRoute('gw-a', 'web-a', backendA.port, undefined, ['127.77.5.5'])];
    objects.items = first;
    const alone = await operator.start();
    expect(alone.edge?.pending).to.deep.equal([]);
    expect((JSON.parse((await served('127.77.5.5', 'anything.example')).body) as EchoReply).backend).to.equal('a');

    objects.items = [...first, ...gatewayWithRoute('gw-b', 'web-b', backendB.port, undefined, ['127.77.5.5'])];
    const both = await operator.sync();
    expect(both.edge?.pending.map((p) => [p.bindingId, p.reason])).to.deep.equal([['binding/address/shop/gw-b', 'AddressNotUsable']]);
    expect(both.edge?.pending[0]?.message).to.match(/^spec\.addresses 127\.77\.5\.5 is not usable: /);
    const b = both.state.statuses.find((s) => s.ref.kind === 'Gateway' && s.ref.name === 'gw-b');
    expect(programmed(b?.status)).to.include({ status: 'False', reason: 'AddressNotUsable' });
    expect(b?.status?.addresses).to.deep.equal([]);
    expect(b?.events.filter((e) => e.type === 'Warning').map((e) => e.reason)).to.deep.equal(['AddressNotUsable']);
    // the first Gateway keeps its address, its status and its traffic; nothing of gw-b reaches the edge
    expect(gatewayStatus(both, 'gw-a')?.addresses).to.deep.equal([{ type: 'IPAddress', value: '127.77.5.5' }]);
    expect(programmed(gatewayStatus(both, 'gw-a'))).to.include({ status: 'True' });
    expect((await client.listReservations({ 'tuna.dev/cluster': 'east' })).reservations.map((r) => [r.value, r.labels['tuna.dev/binding']])).to.deep.equal([['127.77.5.5', 'binding/address/shop/gw-a']]);
    expect(keys.get('binding/address/shop/gw-b')).to.equal(undefined);
    expect((JSON.parse((await served('127.77.5.5', 'anything.example')).body) as EchoReply).backend).to.equal('a');
    expect(backendB.requests).to.deep.equal([]);
    // a later sync keeps it that way
    const again = await operator.sync();
    expect(again.edge?.pending.map((p) => [p.bindingId, p.reason])).to.deep.equal([['binding/address/shop/gw-b', 'AddressNotUsable']]);
    expect(programmed(gatewayStatus(again, 'gw-a'))).to.include({ status: 'True' });
    // once the first Gateway goes, the second gets the address
    objects.items = [...objects.items.filter((o) => o.kind === 'GatewayClass'), ...gatewayWithRoute('gw-b', 'web-b', backendB.port, undefined, ['127.77.5.5'])];
    const after = await operator.sync();
    expect(after.edge?.pending).to.deep.equal([]);
    expect(programmed(gatewayStatus(after, 'gw-b'))).to.include({ status: 'True' });
    expect((JSON.parse((await served('127.77.5.5', 'anything.example')).body) as EchoReply).backend).to.equal('b');
    expect(keys.get('binding/address/shop/gw-a')).to.equal(undefined);
    expect((await client.listTunnelKeys({ 'tuna.dev/cluster': 'east' })).tunnelKeys.filter((k) => k.revokedAt === null).map((k) => k.id)).to.deep.equal([keys.get('binding/address/shop/gw-b')?.keyId]);
  });
});

describe('operator: a Gateway listener port outside the edge’s address port range (store-mode edge, end to end)', () => {
  const RANGE = { first: 18600, last: 18699 };
  const PORT_IN = 18611;
  const PORT_OTHER = 18612;
  const PORT_FAR = 28611;
  let store: Store;
  let running: StoreEdge;
  let client: ControlClient;
  let backendA: TestBackend;
  let backendB: TestBackend;
  let operator: Operator;

  beforeEach(async () => {
    ({ store, running, client, backendA, backendB } = await startFixture({ addressPorts: [], addressPortRange: RANGE }));
    const objects = new ListedObjects();
    objects.items = [
      obj({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tuna', uid: 'uid-class', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } }),
      ...gatewayObjects('gw-a', 'web-a', backendA.port, [
        { name: 'web', protocol: 'HTTP', port: PORT_IN },
        { name: 'far', protocol: 'HTTP', port: PORT_FAR },
      ]),
      ...gatewayObjects('gw-b', 'web-b', backendB.port, [{ name: 'web', protocol: 'HTTP', port: PORT_OTHER }]),
    ];
    const learned = (await client.describeEdge()).edge;
    operator = startOperator(running, client, objects, new TunnelKeys(), { addressPool: learned.addressPool?.range ?? null, addressPorts: addressPortLimitsOf(learned) });
  });

  afterEach(() => stopAll(operator, { store, running, client, backendA, backendB }));

  type Cond = { type: string; status: string; reason: string; message: string };
  const gatewayOf = (result: SyncResult, name: string) => result.state.statuses.find((s) => s.ref.kind === 'Gateway' && s.ref.name === name);
  const conditionsOf = (status: Record<string, unknown> | undefined): Cond[] => (status?.conditions as Cond[] | undefined) ?? [];
  const listenerOf = (status: Record<string, unknown> | undefined, name: string): Cond[] =>
    ((status?.listeners as { name: string; conditions: Cond[] }[] | undefined) ?? []).find((l) => l.name === name)?.conditions ?? [];
  const find = (list: Cond[], type: string): Cond | undefined => list.find((c) => c.type === type);
  const backendOf = async (address: string, port: number): Promise<string> => (JSON.parse((await served(address, 'shop.example', port)).body) as EchoReply).backend;

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
    const far = await get(addressA!, 'shop.example', PORT_FAR).then(
      (r) => `answered ${r.status}`,
      (err: NodeJS.ErrnoException) => err.code,
    );
    expect(far).to.equal('ECONNREFUSED');
  });
});
