import { expect } from 'chai';
import { startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { OperatorHealth, RequestMetrics } from '../../src/operator/index.js';
import type { TunnelManager } from '../../src/tunnel/manager.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { defaultContext, startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';
import { newTestManager } from '../support/tunnel-manager-fixture.js';

/** The operator's /metrics fed by the real parts: the data plane's requests, the tunnel manager's reconnects. */
describe('operator metrics from the data plane and the tunnel manager', function () {
  this.timeout(20_000);

  describe('requests by binding and status (RequestMetrics as the data plane observer)', () => {
    let backend: TestBackend | undefined;
    let harness: TunnelHarness | undefined;
    let plane: DataPlane | undefined;

    afterEach(async () => {
      await harness?.close();
      plane?.close();
      await backend?.close();
    });

    it('counts a proxied 200, the service’s own 503 and the data plane’s local 404, by binding id', async () => {
      backend = await startHttpBackend('web', (req, res) => {
        res.statusCode = req.url === '/down' ? 503 : 200;
        res.end('ok');
      });
      const endpoints = new StaticEndpointResolver();
      endpoints.set('default', 'web', 'http', [{ address: '127.0.0.1', port: backend.port }]);
      const requests = new RequestMetrics();
      plane = new DataPlane({ endpoints, observer: requests });
      plane.update(hostGraph([{ hostname: 'app.test', routes: [httpRoute('app', [serviceBackend('web')], { match: { path: { type: 'Prefix', value: '/app' } } }), httpRoute('down', [serviceBackend('web')], { match: { path: { type: 'Exact', value: '/down' } } })] }]));
      harness = await startTunnelHarness(plane);
      expect((await harness.request({ ':path': '/app/x' })).status).to.equal(200);
      expect((await harness.request({ ':path': '/app/y' })).status).to.equal(200);
      expect((await harness.request({ ':path': '/down' })).status).to.equal(503);
      expect((await harness.request({ ':path': '/nowhere' })).status).to.equal(404);
      const health = new OperatorHealth({ hasSynced: () => true, tunnels: () => [], isLeader: () => true }, Date.now, [requests.registry]);
      const expected = [200, 503, 404].map((code) => `tuna_operator_requests_total{binding="${defaultContext.bindingId}",code="${code}"}`);
      let text: string[] = [];
      // the count is taken when the exchange closes, which may follow the client's end by a tick
      for (let i = 0; i < 100; i++) {
        text = (await health.metrics()).split('\n');
        if (expected.every((prefix) => text.some((l) => l.startsWith(`${prefix} `)))) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(text).to.include.members([`${expected[0]} 2`, `${expected[1]} 1`, `${expected[2]} 1`]);
      // the path is never a label
      expect(text.join('\n')).not.to.match(/\/app\/x|\/nowhere/);
    });
  });

  describe('reconnects (TunnelManager "reconnected")', () => {
    const A = 'binding/host/a.test';
    let t: TestEdge;
    let manager: TunnelManager | undefined;
    let restarted: EdgeServer | undefined;

    afterEach(async () => {
      manager?.destroy();
      await t.edge.close();
      await restarted?.close();
      restarted = undefined;
    });

    it('counts the connection that replaces one lost to an edge restart, and not the first ones nor a new key’s', async () => {
      t = await startTestEdge([{ id: A, kind: 'host', hostnames: ['a.test'] }]);
      const keys = new Map([
        ['a-v1', t.keys.get(A)!],
        ['a-v2', t.keys.get(A)!],
      ]);
      manager = newTestManager(new TestStreamHandler(), keys, { backoff: { baseMs: 100, maxMs: 400 } });
      const health = new OperatorHealth({ hasSynced: () => true, tunnels: () => manager!.status(), isLeader: () => true });
      manager.on('reconnected', () => health.countReconnect());
      const reconnects = async (): Promise<string | undefined> => (await health.metrics()).split('\n').find((l) => l.startsWith('tuna_operator_tunnel_reconnects_total '));
      manager.apply([{ bindingId: A, edges: [t.endpoint], connections: 2, keyRef: 'a-v1' }]);
      await waitUntil(() => (t.edge.registry.count().get(A) ?? 0) === 2);
      const first = new Set(manager.sessions(A).map((s) => s.socket));
      manager.apply([{ bindingId: A, edges: [t.endpoint], connections: 2, keyRef: 'a-v2' }]);
      await waitUntil(() => manager!.sessions(A).length === 2 && manager!.sessions(A).every((s) => !first.has(s.socket)) && (t.edge.registry.count().get(A) ?? 0) === 2);
      expect(await reconnects()).to.equal('tuna_operator_tunnel_reconnects_total 0');
      const config = { ...t.config, listen: { tunnel: { host: '127.0.0.1', port: t.endpoint.port }, http: { host: '127.0.0.1', port: t.httpPort } } };
      await t.edge.close();
      restarted = await startEdge(config);
      await waitUntil(() => (restarted!.registry.count().get(A) ?? 0) === 2, 5_000);
      expect(await reconnects()).to.equal('tuna_operator_tunnel_reconnects_total 2');
      expect((await health.metrics()).split('\n')).to.include('tuna_operator_tunnels{state="up"} 1');
    });
  });
});
