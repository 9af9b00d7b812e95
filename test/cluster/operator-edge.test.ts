// operator-edge.test.ts — the operator with only a `reservations` API key: it reserves the
// Ingress's hostname at a store-mode edge, mints the binding's tunnel key, serves the pods through
// the tunnel, and releases and revokes both when the Ingress goes.
import { expect } from 'chai';
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { EdgeReconciler, TunnelKeys } from '../../src/operator/edge-reconciler.js';
import { KubeObjects } from '../../src/operator/kube-objects.js';
import { Operator, OperatorTunnels } from '../../src/operator/operator.js';
import type { SyncResult } from '../../src/operator/operator.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import { TunnelManager } from '../../src/tunnel/manager.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { http1 } from '../support/tunnel-harness.js';
import { clusterConfig, deployEchoBehindIngress, waitFor } from './cluster-env.js';

describe('operator: reservations and tunnel keys at a store-mode edge', function () {
  this.timeout(180_000);
  const namespace = `tuna-edge-${process.pid}`;
  const host = `echo-${process.pid}.${BASE_DOMAIN}`;
  const bindingId = `binding/host/${host}`;
  const clusterLabel = { 'tuna.dev/cluster': `test-${process.pid}` };
  let store: Store;
  let edge: StoreEdge;
  let client: ControlClient;
  let networking: NetworkingV1Api;
  let core: CoreV1Api;
  let operator: Operator;
  let last: SyncResult | undefined;
  const errors: string[] = [];

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    networking = config.makeApiClient(NetworkingV1Api);
    await deployEchoBehindIngress(config, namespace, host, 1);

    store = await openSqliteStore(':memory:');
    edge = await startStoreEdge(store);
    const seeded = await seedAccount(store);
    // the operator holds a `reservations` key only: it cannot start a tunnel with it
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, seeded.reservationsToken);
    const keys = new TunnelKeys();
    const keyRefOf = (id: string): string | undefined => keys.get(id)?.keyId;
    const endpoints = new StaticEndpointResolver();
    const dataPlane = new DataPlane({ endpoints, onError: (err) => errors.push(`data plane: ${String(err)}`) });
    const manager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, keys, {});
    operator = new Operator({
      objects: new KubeObjects(config, { debounceMs: 50, retryMs: 1000 }),
      dataPlane,
      endpoints,
      tunnels: new OperatorTunnels(manager, [edge.endpoint], 2, keyRefOf),
      reconciler: new EdgeReconciler(client, keys, { clusterId: clusterLabel['tuna.dev/cluster'] }),
      keyRefOf,
      onError: (err) => errors.push(`sync: ${String(err)}`),
      onSynced: (result) => (last = result),
    });
    await operator.start();
  });

  after(async () => {
    await operator?.stop();
    await edge?.edge.close();
    await store?.close();
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('reserves the hostname, mints one key, and serves the pod through the tunnel', async () => {
    expect(last?.edge?.ready.has(bindingId)).to.equal(true);
    // Other tests' Ingresses may still be there while their namespaces terminate: look at ours.
    const reservations = (await client.listReservations(clusterLabel)).reservations.filter((r) => r.value === host);
    expect(reservations.map((r) => r.kind)).to.deep.equal(['domain']);
    const keys = (await client.listTunnelKeys(clusterLabel)).tunnelKeys.filter((k) => k.revokedAt === null && k.reservationId === reservations[0]?.id);
    expect(keys).to.have.length(1);
    await waitFor('2 tunnel connections at the edge', 30_000, async () => (edge.edge.registry.count().get(bindingId) === 2 ? true : undefined));
    const res = await http1(edge.httpPort, host, '/through-the-edge');
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.body.toString()) as { namespace: string; path: string }).to.include({ namespace, path: '/through-the-edge' });
  });

  it('mints nothing more on a sync that changes nothing', async () => {
    const again = await operator.sync();
    expect(again.edge).to.include({ reserved: 0, minted: 0 });
  });

  it('releases the reservation and revokes the key when the Ingress is deleted', async () => {
    await networking.deleteNamespacedIngress({ name: 'echo', namespace });
    const held = (await client.listReservations(clusterLabel)).reservations.find((r) => r.value === host);
    await waitFor('the reservation released', 30_000, async () => ((await client.listReservations(clusterLabel)).reservations.some((r) => r.value === host) ? undefined : true));
    const live = (await client.listTunnelKeys(clusterLabel)).tunnelKeys.filter((k) => k.revokedAt === null && k.reservationId === held?.id);
    expect(live).to.deep.equal([]);
    await waitFor('no tunnel connection at the edge', 30_000, async () => ((edge.edge.registry.count().get(bindingId) ?? 0) === 0 ? true : undefined));
    expect(errors).to.deep.equal([]);
  });
});
