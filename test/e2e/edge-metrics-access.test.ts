import { expect } from 'chai';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { http1 } from '../support/tunnel-harness.js';
import { api, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';

/** `/metrics` lists live bindings (hostnames): not for anonymous clients. */
describe('edge hardening: who may read /metrics', function () {
  this.timeout(30_000);
  let store: Store;
  let running: StoreEdge | undefined;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
  });
  afterEach(async () => {
    await running?.edge.close();
    running = undefined;
    await store.close();
  });

  it('asks for an admin API key on the tunnel listener of a store-mode edge (401 anonymous or with a reservations key)', async () => {
    running = await startStoreEdge(store);
    const seeded = await seedAccount(store);
    await api(running.controlPort, 'POST', '/v1/reservations', seeded.reservationsToken, { kind: 'domain', hostname: 'secret-shop.tuna.test' });
    const anonymous = await http1(running.controlPort, 'edge', '/metrics');
    expect(anonymous.status).to.equal(401);
    expect(anonymous.body.toString()).not.to.include('tuna_edge_');
    const tenant = await http1(running.controlPort, 'edge', '/metrics', { headers: { authorization: `Bearer ${seeded.reservationsToken}` } });
    expect(tenant.status).to.equal(401);
    const admin = await http1(running.controlPort, 'edge', '/metrics', { headers: { authorization: `Bearer ${seeded.adminToken}` } });
    expect(admin.status).to.equal(200);
    expect(admin.body.toString()).to.include('tuna_edge_public_connections_total');
    expect((await http1(running.controlPort, 'edge', '/healthz')).status).to.equal(200);
  });

  it('counts control API requests by method (what the operator costs the edge), and nothing else', async () => {
    const config = storeEdgeConfig('unused');
    config.listen.metrics = { host: '127.0.0.1', port: 0 };
    running = await startStoreEdge(store, config);
    const seeded = await seedAccount(store);
    await api(running.controlPort, 'POST', '/v1/reservations', seeded.reservationsToken, { kind: 'domain', hostname: 'counted.tuna.test' });
    await api(running.controlPort, 'GET', '/v1/reservations', seeded.reservationsToken);
    await api(running.controlPort, 'GET', '/v1/reservations', seeded.reservationsToken);
    await http1(running.controlPort, 'edge', '/healthz');
    const text = (await http1(running.edge.address().metrics?.port ?? 0, 'edge', '/metrics')).body.toString();
    const counted = text.split('\n').filter((line) => line.startsWith('tuna_edge_control_requests_total{'));
    expect(counted).to.deep.equal(['tuna_edge_control_requests_total{method="GET"} 2', 'tuna_edge_control_requests_total{method="POST"} 1']);
  });

  it('serves /metrics only on listen.metrics when it is set, and refuses to reserve that port', async () => {
    const config = storeEdgeConfig('unused', { portPool: { first: 1024, last: 65535 } });
    config.listen.metrics = { host: '127.0.0.1', port: 0 };
    running = await startStoreEdge(store, config);
    const seeded = await seedAccount(store);
    const metricsPort = running.edge.address().metrics?.port ?? 0;
    expect(metricsPort).to.be.greaterThan(0);
    const own = await http1(metricsPort, 'edge', '/metrics');
    expect(own.status).to.equal(200);
    expect(own.body.toString()).to.include('tuna_edge_public_connections_total');
    expect((await http1(metricsPort, 'edge', '/v1/edge')).status).to.equal(404);
    const onTunnel = await http1(running.controlPort, 'edge', '/metrics', { headers: { authorization: `Bearer ${seeded.adminToken}` } });
    expect(onTunnel.status).to.equal(404);
    const reserve = await api(running.controlPort, 'POST', '/v1/reservations', seeded.reservationsToken, { kind: 'tcp-port', port: metricsPort });
    expect(reserve.status).to.equal(400);
    expect(reserve.body['error']).to.include({ field: 'port' });
  });
});
