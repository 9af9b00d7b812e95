// operator-replicas.test.ts — two operator replicas: one leader mints the key and writes, both hold
// tunnels with that key (the follower reads it from the Secret), and when the leader stops the
// other takes over without minting again.
import { expect } from 'chai';
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { EdgeReconciler } from '../../src/operator/edge-reconciler.js';
import { KubeObjects } from '../../src/operator/kube-objects.js';
import { LeaderElector } from '../../src/operator/leader-elector.js';
import { Operator, OperatorTunnels } from '../../src/operator/operator.js';
import { SecretTunnelKeys } from '../../src/operator/secret-tunnel-keys.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import { TunnelManager } from '../../src/tunnel/manager.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { clusterConfig, waitFor } from './cluster-env.js';

describe('operator: two replicas, one writer', function () {
  this.timeout(120_000);
  const namespace = `tuna-ha-${process.pid}`;
  const host = `ha-${process.pid}.${BASE_DOMAIN}`;
  const bindingId = `binding/host/${host}`;
  const label = { 'tuna.dev/cluster': `ha-${process.pid}` };
  let core: CoreV1Api;
  let store: Store;
  let edge: StoreEdge;
  let client: ControlClient;
  const replicas: { operator: Operator; elector: LeaderElector }[] = [];
  const errors: string[] = [];

  async function replica(identity: string): Promise<{ operator: Operator; elector: LeaderElector }> {
    const config = clusterConfig();
    const keys = new SecretTunnelKeys(config, namespace);
    await keys.load();
    const endpoints = new StaticEndpointResolver();
    const dataPlane = new DataPlane({ endpoints });
    const manager = new TunnelManager(new NetEdgeDialer({ connectTimeoutMs: 2000 }), new SystemClock(), dataPlane, keys, { backoff: { baseMs: 100, maxMs: 500 } });
    const keyRefOf = (id: string): string | undefined => keys.get(id)?.keyId;
    const elector = new LeaderElector(config, { namespace, identity, leaseDurationSeconds: 2, retryMs: 200, onError: (err) => errors.push(`${identity}: ${String(err)}`) });
    elector.start();
    const operator = new Operator({
      objects: new KubeObjects(config, { debounceMs: 50, retryMs: 500 }),
      dataPlane,
      endpoints,
      tunnels: new OperatorTunnels(manager, [edge.endpoint], 1, keyRefOf),
      reconciler: new EdgeReconciler(client, keys, { clusterId: label['tuna.dev/cluster'], maxConnections: 4 }),
      keyRefOf,
      leader: elector,
      followKeys: () => keys.load(),
      onError: (err) => errors.push(`${identity} sync: ${String(err)}`),
    });
    await operator.start();
    const r = { operator, elector };
    replicas.push(r);
    return r;
  }

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
    await config.makeApiClient(NetworkingV1Api).createNamespacedIngress({
      namespace,
      body: {
        metadata: { name: 'web' },
        spec: { ingressClassName: 'tuna', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
      },
    });
    store = await openSqliteStore(':memory:');
    edge = await startStoreEdge(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, (await seedAccount(store)).reservationsToken);
  });

  after(async () => {
    for (const r of replicas) {
      await r.operator.stop();
      await r.elector.stop();
    }
    await edge?.edge.close();
    await store?.close();
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  const liveKeys = async () => (await client.listTunnelKeys(label)).tunnelKeys.filter((k) => k.revokedAt === null);

  it('holds a tunnel on each replica with the one key the leader minted, and hands over without minting again', async () => {
    const a = await replica('replica-a');
    await waitFor('replica-a to lead', 10_000, async () => (a.elector.isLeader() ? true : undefined));
    await a.operator.sync();
    await waitFor('the leader’s tunnel', 20_000, async () => (edge.edge.registry.count().get(bindingId) === 1 ? true : undefined));
    const b = await replica('replica-b');
    expect(b.elector.isLeader()).to.equal(false);
    await b.operator.sync();
    await waitFor('a tunnel from each replica', 20_000, async () => (edge.edge.registry.count().get(bindingId) === 2 ? true : undefined));
    const minted = await liveKeys();
    expect(minted, 'one key, minted by the leader').to.have.length(1);

    await a.operator.stop();
    await a.elector.stop();
    await waitFor('replica-b to lead', 10_000, async () => (b.elector.isLeader() ? true : undefined));
    await b.operator.sync();
    expect((await liveKeys()).map((k) => k.id)).to.deep.equal(minted.map((k) => k.id));
    expect(edge.edge.registry.count().get(bindingId)).to.equal(1);
    expect(errors).to.deep.equal([]);
  });
});
