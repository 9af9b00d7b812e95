/**
 * TCP ports end to end: the operator's loop (translators, edge reconciler,
 * tunnels, data plane) in the test process against a store-mode edge on 127.0.0.1 with a port pool.
 * A LoadBalancer Service of class tuna in front of a TCP echo server gets a port of the pool, a
 * `tcp` key for `binding/tcp-port/<port>`, and its status names `127.0.0.1` and that port, through
 * which the echo answers; a tcp Tunnel is served the same way; a departed Service's port is released.
 */
import { expect } from 'chai';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
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
import { seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { ListedObjects } from '../support/operator-fakes.js';

const obj = (o: Record<string, unknown>): KubernetesObject => o as KubernetesObject;
const cluster = { 'tuna.dev/cluster': 'east' };

/** loadBalancer is a Service `type: LoadBalancer`, class tuna, with one TCP port, and its EndpointSlice on the echo server. */
function loadBalancer(name: string, port: number, echoPort: number): KubernetesObject[] {
  return [
    obj({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'shop', uid: `uid-${name}`, generation: 1 },
      spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', ports: [{ name: 'echo', port, protocol: 'TCP', targetPort: 'echo' }] },
    }),
    obj({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, namespace: 'shop', labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: 'echo', port: echoPort }],
      endpoints: [{ addresses: ['127.0.0.1'] }],
    }),
  ];
}

/** echoOnce connects to host:port, sends `text` and resolves with what came back once the echo is complete (or '' if the connection failed). */
function echoOnce(host: string, port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let got = '';
    const timer = setTimeout(() => socket.destroy(), 3000);
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(text));
    socket.on('data', (chunk: string) => {
      got += chunk;
      if (got.length >= text.length) socket.end();
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    socket.on('error', () => undefined);
  });
}

/** echoed waits (a bounded number of tries, 100 ms apart) until host:port echoes `text`: the listener and the tunnel open after the sync. */
async function echoed(host: string, port: number, text: string): Promise<string> {
  let last = '';
  for (let i = 0; i < 100; i++) {
    last = await echoOnce(host, port, text);
    if (last === text) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  return last;
}

describe('operator: LoadBalancer Service TCP ports end to end (store-mode edge with a port pool)', function () {
  this.timeout(60_000);
  let store: Store;
  let running: StoreEdge;
  let client: ControlClient;
  let echo: Server;
  let echoPort: number;
  let objects: ListedObjects;
  let keys: TunnelKeys;
  let operator: Operator;
  let lastSynced: SyncResult | undefined;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store, storeEdgeConfig('unused', { portPool: { first: 21100, last: 21101 } }));
    const seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    echo = createServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoPort = (echo.address() as AddressInfo).port;
    objects = new ListedObjects();
    objects.items = loadBalancer('echo', 7, echoPort);
    keys = new TunnelKeys();
    const keyRefOf = (id: string): string | undefined => keys.forTunnel(id)?.keyId;
    const endpoints = new StaticEndpointResolver();
    const dataPlane = new DataPlane({ endpoints });
    const manager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, keys, {});
    const edge = (await client.describeEdge()).edge;
    operator = new Operator({
      objects,
      dataPlane,
      endpoints,
      tunnels: new OperatorTunnels(manager, [running.endpoint], 1, keyRefOf),
      // what `tuna operator` takes from GET /v1/edge
      reconciler: new EdgeReconciler(client, keys, { clusterId: 'east', portPool: edge.portPool, ...(edge.tcpHost !== undefined ? { tcpHost: edge.tcpHost } : {}) }),
      keyRefOf,
      edgeIdOf: (id) => keys.edgeIdOf(id),
      recheckMs: 100,
      onSynced: (result) => (lastSynced = result),
    });
  });

  afterEach(async () => {
    await operator.stop();
    await running.edge.close();
    await store.close();
    await new Promise((resolve) => echo.close(resolve));
  });

  const statusOf = (result: SyncResult, kind: string, name: string) => result.state.statuses.find((s) => s.ref.kind === kind && s.ref.name === name);

  it('gives the Service a port of the pool and a tcp key, writes 127.0.0.1 and that port into status.loadBalancer, and the echo answers through it', async () => {
    const result = await operator.start();
    expect(result.edge?.pending).to.deep.equal([]);
    const bindingId = 'binding/tcp-port/shop/echo/7';
    const port = result.edge?.ports?.get(bindingId)?.port ?? 0;
    expect(port).to.be.within(21100, 21101);
    const service = statusOf(result, 'Service', 'echo');
    expect(service?.status?.loadBalancer).to.deep.equal({ ingress: [{ ip: '127.0.0.1', ports: [{ port, protocol: 'TCP' }] }] });
    expect(service?.conditions.find((c) => c.type === 'Published')).to.include({ status: 'True', reason: 'Published' });

    const [reservation] = (await client.listReservations(cluster)).reservations;
    expect(reservation).to.deep.include({ kind: 'tcp-port', value: String(port) });
    expect(reservation?.labels['tuna.dev/binding']).to.equal(bindingId);
    const live = (await client.listTunnelKeys(cluster)).tunnelKeys.filter((k) => k.revokedAt === null);
    expect(live.map((k) => [k.reservationId, k.protocol])).to.deep.equal([[reservation?.id, 'tcp']]);
    expect(keys.get(bindingId)?.edgeBindingId).to.equal(`binding/tcp-port/${port}`);

    // through the address and port the status names, to the echo server, through the tunnel
    expect(await echoed('127.0.0.1', port, 'hello through the edge\n')).to.equal('hello through the edge\n');
    expect(running.edge.registry.count().get(`binding/tcp-port/${port}`)).to.equal(1);

    // a second sync changes nothing at the edge
    expect((await operator.sync()).edge).to.include({ reserved: 0, minted: 0, released: 0, revoked: 0 });
  });

  it('serves a tcp Tunnel on a port of the pool, with the port and address in its status', async () => {
    objects.items = [
      obj({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ssh', namespace: 'shop' }, spec: { ports: [{ name: 'ssh', port: 22 }] } }),
      obj({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'ssh', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'ssh' } },
        addressType: 'IPv4',
        ports: [{ name: 'ssh', port: echoPort }],
        endpoints: [{ addresses: ['127.0.0.1'] }],
      }),
      obj({ apiVersion: 'tuna.dev/v1alpha1', kind: 'Tunnel', metadata: { name: 'ssh', namespace: 'shop', uid: 'uid-t', generation: 1 }, spec: { protocol: 'tcp', service: { name: 'ssh', port: 22 } } }),
    ];
    const result = await operator.start();
    expect(result.edge?.pending).to.deep.equal([]);
    const port = result.edge?.ports?.get('binding/tcp-port/tunnel/shop/ssh/0')?.port ?? 0;
    expect(port).to.be.within(21100, 21101);
    expect(statusOf(result, 'Tunnel', 'ssh')?.status).to.deep.include({ port, address: '127.0.0.1' });
    expect(await echoed('127.0.0.1', port, 'ssh?\n')).to.equal('ssh?\n');
  });

  it('holds the Service back as PortNotAssigned once the pool is exhausted, and serves it when a port is released', async () => {
    objects.items = [...loadBalancer('a', 7, echoPort), ...loadBalancer('b', 7, echoPort), ...loadBalancer('c', 7, echoPort)];
    const full = await operator.start();
    const held = full.edge?.pending ?? [];
    expect(held.map((p) => p.reason)).to.deep.equal(['PortNotAssigned']);
    expect(held[0]?.message).to.match(/^TCP port 7 is not served: the edge assigned no port from its pool: no free TCP port in 21100-21101/);
    const name = /binding\/tcp-port\/shop\/(\w)\/7/.exec(held[0]?.bindingId ?? '')?.[1] ?? '';
    const refused = statusOf(full, 'Service', name);
    expect(refused?.status?.loadBalancer).to.deep.equal({});
    expect(refused?.conditions.find((c) => c.type === 'Published')).to.include({ status: 'False', reason: 'PortNotAssigned' });
    expect(refused?.events.map((e) => [e.type, e.reason])).to.deep.include(['Warning', 'PortNotAssigned']);
    expect(full.edge?.ready.size).to.equal(2);

    // another Service goes: its port is released and its key revoked, and the held-back one gets it
    const gone = name === 'a' ? 'b' : 'a';
    objects.items = objects.items.filter((o) => o.metadata?.name !== gone);
    const released = await operator.sync();
    expect(released.edge).to.include({ released: 1, revoked: 1 });
    // the port is freed after the bindings were looked at: the recheck that a PortNotAssigned
    // schedules takes it, with no change in the cluster
    expect(released.edge?.pending.map((p) => p.reason)).to.deep.equal(['PortNotAssigned']);
    for (let i = 0; i < 50 && lastSynced?.edge?.pending.length !== 0; i++) await new Promise((r) => setTimeout(r, 100));
    const after = lastSynced!;
    expect(after.edge?.pending).to.deep.equal([]);
    const port = after.edge?.ports?.get(`binding/tcp-port/shop/${name}/7`)?.port ?? 0;
    expect(statusOf(after, 'Service', name)?.status?.loadBalancer).to.deep.equal({ ingress: [{ ip: '127.0.0.1', ports: [{ port, protocol: 'TCP' }] }] });
    expect(await echoed('127.0.0.1', port, 'late\n')).to.equal('late\n');
  });
});
