import { expect } from 'chai';
import { translateObjects } from '../../src/agent/state.js';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { EdgeReconciler, OperatorEdgeUnreachableError, TunnelKeys, learnEdge } from '../../src/operator/index.js';
import { seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';

const meta = (name: string, namespace: string) => ({ name, namespace, uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });
const service = { apiVersion: 'v1', kind: 'Service', metadata: meta('web', 'shop'), spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', ports: [{ name: 'http', port: 8080, appProtocol: 'http' }] } };

describe('operator: the base domain comes from the edge (GET /v1/edge)', () => {
  let store: Store;
  let running: StoreEdge;
  let client: ControlClient;
  const controlUrl = () => new URL(`http://127.0.0.1:${running.controlPort}`);

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store, storeEdgeConfig('unused', { baseDomain: 'learned.test' }));
    const seeded = await seedAccount(store);
    client = new ControlClient({ url: controlUrl() }, seeded.reservationsToken);
  });

  afterEach(async () => {
    await running.edge.close();
    await store.close();
  });

  it('generates hostnames under the edge’s base domain with no flag, and the edge reserves them', async () => {
    const learned = await learnEdge(client, controlUrl());
    expect(learned.baseDomain).to.equal('learned.test');
    const state = translateObjects([service], { baseDomain: learned.baseDomain });
    expect(state.graph.bindings.map((b) => b.hostnames).flat()).to.deep.equal(['web-shop.learned.test']);
    const report = await new EdgeReconciler(client, new TunnelKeys(), { clusterId: 'east' }).reconcile(state.graph);
    expect(report.pending).to.deep.equal([]);
    expect([...report.ready]).to.deep.equal(['binding/host/web-shop.learned.test']);
  });

  it('lets --base-domain override the edge’s, and still asks the edge', async () => {
    expect((await learnEdge(client, controlUrl(), 'other.test')).baseDomain).to.equal('other.test');
  });

  it('fails with one clear error when the edge cannot be asked', async () => {
    const port = running.controlPort;
    await running.edge.close();
    const error = await learnEdge(new ControlClient({ url: new URL(`http://127.0.0.1:${port}`) }, 'tuna_ak_x'), new URL(`http://127.0.0.1:${port}`)).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).to.be.instanceOf(OperatorEdgeUnreachableError);
    expect((error as Error).message).to.include(`cannot ask the edge at http://127.0.0.1:${port} what it serves (GET /v1/edge)`);
    running = await startStoreEdge(store);
  });
});
