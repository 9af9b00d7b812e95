import { expect } from 'chai';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { BINDING, hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { newTestManager } from '../support/tunnel-manager-fixture.js';
import { http1, openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

// the data plane's graph names the binding the edge serves (BINDING of backend-graph.ts)
const APP = BINDING;

/**
 * The compact stream context (docs/protocol.md §4): the edge sends one
 * `tuna-meta` field to an agent that announced it, and the agent adds the X-Forwarded-* and
 * x-request-id the backend sees; an agent that did not announce it gets today's nine headers.
 * Either way the backend sees the same values.
 */
describe('tunnel: the compact stream context', () => {
  let t: TestEdge;
  let backend: TestBackend;
  let plane: DataPlane;
  let sessions: TunnelSession[] = [];

  beforeEach(async () => {
    // per-request streams carry the context on every request; a spliced connection carries it once (edge-http1-splice.test.ts)
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }], { limits: { tunnelWaitMs: 0 }, http1Forwarding: 'per-request' });
    backend = await startHttpBackend('api');
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'api', 'http', [{ address: '127.0.0.1', port: backend.port }]);
    plane = new DataPlane({ endpoints });
    plane.update(hostGraph([{ hostname: 'app.test', routes: [httpRoute('api', [serviceBackend('api')])] }]));
  });

  afterEach(async () => {
    for (const s of sessions) s.destroy();
    sessions = [];
    await t.edge.close();
    plane.close();
    await backend.close();
  });

  async function backendSees(compactMeta: boolean, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
    sessions.push(await openSession(t, APP, plane, { compactMeta }));
    const res = await http1(t.httpPort, 'App.Test:8080', '/who?x=1', { headers: { 'x-forwarded-for': '203.0.113.9', ...headers } });
    expect(res.status).to.equal(200);
    return (JSON.parse(res.body.toString()) as EchoReply).headers;
  }

  function expectForwarded(seen: Record<string, unknown>): void {
    expect(seen['x-forwarded-for']).to.equal('203.0.113.9, 127.0.0.1');
    expect(seen['x-forwarded-proto']).to.equal('http');
    expect(seen['x-forwarded-host']).to.equal('app.test');
    expect(seen['x-forwarded-port']).to.equal(String(t.httpPort));
    expect(seen['x-request-id']).to.be.a('string').and.match(/^[0-9a-f]{12}-[0-9a-z]+$/);
    expect(Object.keys(seen).filter((k) => k.startsWith('tuna-'))).to.deep.equal([]);
  }

  it('is what the edge sends to an agent that announced it, and the backend sees the forwarded headers', async () => {
    const seen = await backendSees(true);
    expect(t.edge.registry.all().map((tunnel) => tunnel.connection.readsCompactMeta)).to.deep.equal([true]);
    expectForwarded(seen);
  });

  it('is expanded into the nine headers for an agent that did not announce it: the backend sees the same', async () => {
    const seen = await backendSees(false);
    expect(t.edge.registry.all().map((tunnel) => tunnel.connection.readsCompactMeta)).to.deep.equal([false]);
    expectForwarded(seen);
  });

  it('replaces client-sent X-Forwarded-Proto, -Host, -Port and x-request-id in both forms', async () => {
    const forged = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.test', 'x-forwarded-port': '1', 'x-request-id': 'mine' };
    for (const compactMeta of [true, false]) {
      const seen = await backendSees(compactMeta, forged);
      expectForwarded(seen);
      expect(seen['x-request-id']).to.not.equal('mine');
      sessions.pop()?.destroy();
    }
  });

  it('drops a client-sent tuna-meta at the edge: the stream context cannot be forged', async () => {
    const handler = new TestStreamHandler();
    sessions.push(await openSession(t, APP, handler));
    const res = await http1(t.httpPort, 'app.test', '/', { headers: { 'tuna-meta': '1,https,forged-1,10.0.0.1,evil.test' } });
    const body = JSON.parse(res.body.toString()) as { headers: Record<string, string>; context: Record<string, unknown> };
    expect(body.context).to.deep.include({ publicPort: t.httpPort, publicProtocol: 'http', clientAddress: '127.0.0.1' });
    expect(body.context.requestId).to.not.equal('forged-1');
    expect(body.headers['x-forwarded-host']).to.equal('app.test');
    expect(body.headers['x-forwarded-for']).to.equal('127.0.0.1');
    expect(Object.keys(body.headers).filter((k) => k.startsWith('tuna-'))).to.deep.equal([]);
  });

  it('is negotiated on a shared (version 2) connection too, for every binding on it', async () => {
    const manager = newTestManager(plane, new Map([['k', t.keys.get(APP)!]]), { sharedConnections: true });
    try {
      manager.apply([{ bindingId: APP, edges: [t.endpoint], keyRef: 'k' }]);
      await waitUntil(() => t.edge.registry.all().length === 1);
      expect(t.edge.registry.shared().map((c) => c.readsCompactMeta)).to.deep.equal([true]);
      const res = await http1(t.httpPort, 'App.Test:8080', '/who?x=1', { headers: { 'x-forwarded-for': '203.0.113.9' } });
      expect(res.status).to.equal(200);
      expectForwarded((JSON.parse(res.body.toString()) as EchoReply).headers);
    } finally {
      manager.destroy();
    }
  });
});
