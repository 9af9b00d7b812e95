import { expect } from 'chai';
import { once } from 'node:events';
import { startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import type { TunnelManager } from '../../src/tunnel/manager.js';
import type { TunnelError } from '../../src/tunnel/errors.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, newTunnelKey, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';
import { newTestManager } from '../support/tunnel-manager-fixture.js';

const A = 'binding/host/a.test';
const B = 'binding/host/b.test';

describe('tunnel manager against a real edge', () => {
  let t: TestEdge;
  let manager: TunnelManager;
  let keys: Map<string, string>;
  let restarted: EdgeServer | undefined;

  beforeEach(async () => {
    t = await startTestEdge([
      { id: A, kind: 'host', hostnames: ['a.test'] },
      { id: B, kind: 'host', hostnames: ['b.test'] },
    ]);
    keys = new Map([
      ['a-v1', t.keys.get(A)!],
      ['b-v1', t.keys.get(B)!],
      ['wrong', newTunnelKey()],
    ]);
    manager = newTestManager(new TestStreamHandler(), keys, { backoff: { baseMs: 100, maxMs: 400 } });
  });

  afterEach(async () => {
    manager.destroy();
    await t.edge.close();
    await restarted?.close();
    restarted = undefined;
  });

  const live = (id: string): number => t.edge.registry.count().get(id) ?? 0;

  it('holds N connections per binding and touches none when the same set is applied again', async () => {
    manager.apply([
      { bindingId: A, edges: [t.endpoint], connections: 2, keyRef: 'a-v1' },
      { bindingId: B, edges: [t.endpoint], keyRef: 'b-v1' },
    ]);
    await waitUntil(() => live(A) === 2 && live(B) === 1);
    const sockets = manager.sessions().map((s) => s.socket);
    const handshakes = (await t.edge.metrics.render(t.edge.registry)).match(/result="granted"} (\d+)/)?.[1];
    manager.apply([
      { bindingId: B, edges: [{ ...t.endpoint }], keyRef: 'b-v1' },
      { bindingId: A, edges: [{ ...t.endpoint }], connections: 2, keyRef: 'a-v1' },
    ]);
    await new Promise((r) => setTimeout(r, 200));
    expect(manager.sessions().map((s) => s.socket)).to.have.members(sockets);
    expect(manager.sessions()).to.have.length(3);
    expect((await t.edge.metrics.render(t.edge.registry)).match(/result="granted"} (\d+)/)?.[1]).to.equal(handshakes);
    expect(live(A)).to.equal(2);
  });

  it('replaces connections make-before-break when the key changes, failing no request', async () => {
    keys.set('a-v2', t.keys.get(A)!);
    manager.apply([{ bindingId: A, edges: [t.endpoint], keyRef: 'a-v1' }]);
    await waitUntil(() => live(A) === 1);
    const before = manager.sessions(A)[0]!.socket;
    const statuses: number[] = [];
    let isRunning = true;
    const load = (async () => {
      for (let i = 0; i < 200 && isRunning; i++) statuses.push((await http1(t.httpPort, 'a.test', '/slow?ms=5')).status);
    })();
    await new Promise((r) => setTimeout(r, 50));
    manager.apply([{ bindingId: A, edges: [t.endpoint], keyRef: 'a-v2' }]);
    await waitUntil(() => manager.sessions(A).length === 1 && manager.sessions(A)[0]!.socket !== before && live(A) === 1);
    isRunning = false;
    await load;
    expect(statuses.length).to.be.greaterThan(0);
    expect(statuses.every((s) => s === 200)).to.equal(true);
  });

  it('drains the connections of a binding that is no longer wanted', async () => {
    manager.apply([
      { bindingId: A, edges: [t.endpoint], keyRef: 'a-v1' },
      { bindingId: B, edges: [t.endpoint], keyRef: 'b-v1' },
    ]);
    await waitUntil(() => live(A) === 1 && live(B) === 1);
    manager.apply([{ bindingId: B, edges: [t.endpoint], keyRef: 'b-v1' }]);
    await waitUntil(() => live(A) === 0);
    expect(live(B)).to.equal(1);
    expect((await http1(t.httpPort, 'a.test', '/')).status).to.equal(503);
  });

  it('reports a refused key as TUNA_TUNNEL_REFUSED with the HTTP status', async () => {
    manager.apply([{ bindingId: A, edges: [t.endpoint], keyRef: 'wrong' }]);
    const [bindingId, err] = (await once(manager, 'tunnel-error')) as [string, TunnelError & { statusCode: number }];
    expect(bindingId).to.equal(A);
    expect(err.code).to.equal('TUNA_TUNNEL_REFUSED');
    expect(err.statusCode).to.equal(403);
    expect(err.message).to.match(/not valid for this binding/);
    expect(err.message).to.not.include(keys.get('wrong')!);
  });

  it('refuses a key for host A when it asks to serve host B', async () => {
    keys.set('a-key-for-b', t.keys.get(A)!);
    manager.apply([{ bindingId: B, edges: [t.endpoint], keyRef: 'a-key-for-b' }]);
    const [, err] = (await once(manager, 'tunnel-error')) as [string, TunnelError];
    expect(err.code).to.equal('TUNA_TUNNEL_REFUSED');
    expect(live(B)).to.equal(0);
    expect((await http1(t.httpPort, 'b.test', '/')).status).to.equal(503);
  });

  it('reports an edge nobody listens on as TUNA_EDGE_UNREACHABLE', async () => {
    const port = t.endpoint.port;
    await t.edge.close();
    t = await startTestEdge([]);
    manager.apply([{ bindingId: A, edges: [{ host: '127.0.0.1', port, tls: false }], keyRef: 'a-v1' }]);
    const [, err] = (await once(manager, 'tunnel-error')) as [string, TunnelError];
    expect(err.code).to.equal('TUNA_EDGE_UNREACHABLE');
  });

  it('is back within 2 s after an edge restart and loses no request after', async () => {
    manager.apply([{ bindingId: A, edges: [t.endpoint], keyRef: 'a-v1' }]);
    await waitUntil(() => live(A) === 1);
    const config = { ...t.config, listen: { tunnel: { host: '127.0.0.1', port: t.endpoint.port }, http: { host: '127.0.0.1', port: t.httpPort } } };
    await t.edge.close();
    restarted = await startEdge(config);
    await waitUntil(() => (restarted!.registry.count().get(A) ?? 0) === 1, 2000);
    for (let i = 0; i < 50; i++) expect((await http1(t.httpPort, 'a.test', '/')).status).to.equal(200);
  });
});
