import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { EdgeReconciler, Operator, OperatorTunnels, TunnelKeys } from '../../src/operator/index.js';
import type { SyncResult } from '../../src/operator/index.js';
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
  const spec = { gatewayClassName: 'tuna', listeners: [listener], ...(addresses !== undefined ? { addresses: addresses.map((value) => ({ type: 'IPAddress', value })) } : {}) };
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

/** get sends one HTTP GET to address:ADDRESS_PORT with a Host header. */
function get(address: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: address, port: ADDRESS_PORT, path: '/', headers: { host }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** served waits (a bounded number of tries, 100 ms apart) until the address answers other than 503 (no tunnel yet). */
async function served(address: string, host: string): Promise<{ status: number; body: string }> {
  let last: { status: number; body: string } | undefined;
  for (let i = 0; i < 100; i++) {
    last = await get(address, host).catch(() => undefined);
    if (last !== undefined && last.status !== 503) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${address} never answered: last ${JSON.stringify(last)}`);
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
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store, storeEdgeConfig('unused', { addressPorts: [{ port: ADDRESS_PORT, protocol: 'http' }] }));
    const seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    backendA = await startHttpBackend('a');
    backendB = await startHttpBackend('b');
    objects = new ListedObjects();
    objects.items = [
      obj({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tuna', uid: 'uid-class', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } }),
      ...gatewayWithRoute('gw-a', 'web-a', backendA.port),
      ...gatewayWithRoute('gw-b', 'web-b', backendB.port, 'b.example'),
    ];
    keys = new TunnelKeys();
    const keyRefOf = (id: string): string | undefined => keys.forTunnel(id)?.keyId;
    const endpoints = new StaticEndpointResolver();
    const dataPlane = new DataPlane({ endpoints });
    const manager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, keys, {});
    operator = new Operator({
      objects,
      dataPlane,
      endpoints,
      tunnels: new OperatorTunnels(manager, [running.endpoint], 1, keyRefOf),
      reconciler: new EdgeReconciler(client, keys, { clusterId: 'east', addressPool: '127.77.0.0/16' }),
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
