/**
 * GatewayParameters end to end: a Gateway's `spec.infrastructure.parametersRef` (or its class's
 * `parametersRef`) sets the tunnel connections its binding holds to a store-mode edge, the key the
 * reconciler mints allows them, and a change of the parameters resizes the binding; a reference to
 * a missing GatewayParameters leaves the Gateway Accepted=False InvalidParameters and unreserved.
 */
import { expect } from 'chai';
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

const GW = 'gateway.networking.k8s.io/v1';
const ADDRESS_PORT = 18092;
const BINDING = 'binding/address/shop/gw';
const obj = (o: Record<string, unknown>): KubernetesObject => o as KubernetesObject;

const gatewayClass = (parametersRef?: Record<string, string>) =>
  obj({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tuna', uid: 'uid-class', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller', ...(parametersRef ? { parametersRef } : {}) } });
const parameters = (name: string, namespace: string, tunnelConnections: number, generation = 1) =>
  obj({ apiVersion: 'tuna.dev/v1alpha1', kind: 'GatewayParameters', metadata: { name, namespace, uid: `uid-p-${name}`, generation }, spec: { tunnelConnections } });
const gateway = (parametersName?: string) =>
  obj({
    apiVersion: GW,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'shop', uid: 'uid-gw', generation: 1 },
    spec: {
      gatewayClassName: 'tuna',
      listeners: [{ name: 'web', protocol: 'HTTP', port: ADDRESS_PORT }],
      ...(parametersName ? { infrastructure: { parametersRef: { group: 'tuna.dev', kind: 'GatewayParameters', name: parametersName } } } : {}),
    },
  });

type Cond = { type: string; status: string; reason: string; message: string };
const accepted = (result: SyncResult): Cond | undefined =>
  (result.state.statuses.find((s) => s.ref.kind === 'Gateway')?.status?.conditions as Cond[] | undefined)?.find((c) => c.type === 'Accepted');

describe('operator: GatewayParameters tunnelConnections end to end (store-mode edge)', () => {
  let store: Store;
  let running: StoreEdge;
  let client: ControlClient;
  let objects: ListedObjects;
  let keys: TunnelKeys;
  let manager: TunnelManager;
  let operator: Operator;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store, storeEdgeConfig('unused', { addressPorts: [{ port: ADDRESS_PORT, protocol: 'http' }] }));
    const seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    objects = new ListedObjects();
    keys = new TunnelKeys();
    const keyRefOf = (id: string): string | undefined => keys.forTunnel(id)?.keyId;
    const endpoints = new StaticEndpointResolver();
    const dataPlane = new DataPlane({ endpoints });
    manager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, keys, {});
    operator = new Operator({
      objects,
      dataPlane,
      endpoints,
      // one replica holding one connection per binding by default: a key allows 1
      tunnels: new OperatorTunnels(manager, [running.endpoint], 1, keyRefOf),
      reconciler: new EdgeReconciler(client, keys, { clusterId: 'east', addressPool: '127.77.0.0/16', maxConnections: 1, connectionsPerBinding: 1 }),
      keyRefOf,
      edgeIdOf: (id) => keys.edgeIdOf(id),
    });
  });

  afterEach(async () => {
    await operator.stop();
    await running.edge.close();
    await store.close();
  });

  /** openFor waits (bounded: 100 tries, 50 ms apart) until the binding's wanted connections are all open, and returns its status. */
  async function openFor(wanted: number) {
    let last;
    for (let i = 0; i < 100; i++) {
      last = manager.status().find((s) => s.bindingId === keys.edgeIdOf(BINDING));
      if (last !== undefined && last.wanted === wanted && last.open === wanted) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`binding never had ${wanted} connections open: ${JSON.stringify(last)} (${String(last?.lastError)})`);
  }

  const liveKeys = async () => (await client.listTunnelKeys({ 'tuna.dev/cluster': 'east' })).tunnelKeys.filter((k) => k.revokedAt === null);

  it('holds the tunnelConnections of the Gateway’s own GatewayParameters, under a key that allows them, and resizes when they change', async () => {
    objects.items = [gatewayClass(), parameters('busy', 'shop', 3), gateway('busy')];
    const first = await operator.start();
    expect(accepted(first)).to.include({ status: 'True' });
    expect(first.edge?.pending).to.deep.equal([]);
    expect((await liveKeys()).map((k) => k.maxConnections)).to.deep.equal([3]);
    expect(await openFor(3)).to.include({ open: 3, wanted: 3 });

    // fewer: the same key (its cap is larger than needed), one connection
    objects.items = [gatewayClass(), parameters('busy', 'shop', 1, 2), gateway('busy')];
    const fewer = await operator.sync();
    expect(fewer.edge).to.include({ minted: 0, revoked: 0 });
    expect(await openFor(1)).to.include({ open: 1, wanted: 1 });

    // more than the key allows: a new key with the larger cap replaces it, and all four open
    objects.items = [gatewayClass(), parameters('busy', 'shop', 4, 3), gateway('busy')];
    const more = await operator.sync();
    expect(more.edge).to.include({ minted: 1, revoked: 1 });
    expect((await liveKeys()).map((k) => k.maxConnections)).to.deep.equal([4]);
    expect(await openFor(4)).to.include({ open: 4, wanted: 4 });
  });

  it('takes the class’s GatewayParameters as the default of a Gateway that names none', async () => {
    objects.items = [gatewayClass({ group: 'tuna.dev', kind: 'GatewayParameters', name: 'defaults', namespace: 'tuna-system' }), parameters('defaults', 'tuna-system', 2), gateway()];
    expect(accepted(await operator.start())).to.include({ status: 'True' });
    expect(await openFor(2)).to.include({ open: 2, wanted: 2 });
  });

  it('refuses a Gateway whose parametersRef names a missing GatewayParameters (Accepted=False InvalidParameters), reserving nothing, until it exists', async () => {
    objects.items = [gatewayClass(), gateway('missing')];
    const refused = await operator.start();
    expect(accepted(refused)).to.include({ status: 'False', reason: 'InvalidParameters' });
    expect((await client.listReservations({ 'tuna.dev/cluster': 'east' })).reservations).to.deep.equal([]);

    objects.items = [gatewayClass(), parameters('missing', 'shop', 2), gateway('missing')];
    expect(accepted(await operator.sync())).to.include({ status: 'True' });
    expect(await openFor(2)).to.include({ open: 2, wanted: 2 });
  });
});
