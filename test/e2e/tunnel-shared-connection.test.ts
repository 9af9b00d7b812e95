import { expect } from 'chai';
import { connect as connectTcp, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import type { EdgeServer } from '../../src/edge/index.js';
import type { TunnelManager } from '../../src/tunnel/manager.js';
import type { TunnelSpec } from '../../src/tunnel/manager-options.js';
import type { TunnelRefusedError } from '../../src/tunnel/errors.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { startEdge } from '../../src/edge/index.js';
import { http1, newTunnelKey, openSession, startTestEdge, testEdgeConfig, waitUntil } from '../support/tunnel-harness.js';
import type { TestBinding, TestEdge } from '../support/tunnel-harness.js';
import { newTestManager } from '../support/tunnel-manager-fixture.js';

const N = 100;
const hostOf = (i: number): string => `h${i}.test`;
const idOf = (i: number): string => `binding/host/${hostOf(i)}`;
const indexes = Array.from({ length: N }, (_, i) => i);

/** edgeSockets is the set of distinct tunnel sockets the edge's registry serves bindings on. */
function edgeSockets(edge: EdgeServer): Set<Socket> {
  return new Set(edge.registry.all().map((t) => t.socket));
}

/** bindingOf asks the edge for a host and returns the binding the agent saw the request on (or the status). */
async function bindingOf(port: number, host: string): Promise<string | number> {
  const answer = await http1(port, host, '/');
  if (answer.status !== 200) return answer.status;
  return (JSON.parse(answer.body.toString('utf8')) as { context: { bindingId: string } }).context.bindingId;
}

describe('many bindings on one tunnel connection (protocol version 2)', function () {
  this.timeout(60_000);
  let t: TestEdge;
  let manager: TunnelManager;
  let keys: Map<string, string>;
  const sessions: TunnelSession[] = [];

  beforeEach(async () => {
    const bindings: TestBinding[] = indexes.map((i) => ({ id: idOf(i), kind: 'host', hostnames: [hostOf(i)] }));
    bindings.push({ id: 'binding/host/old.test', kind: 'host', hostnames: ['old.test'] });
    t = await startTestEdge(bindings, { limits: { tunnelWaitMs: 0 } });
    // every binding has a key of its own: reference `k<i>` resolves to binding i's key only
    keys = new Map(indexes.map((i) => [`k${i}`, t.keys.get(idOf(i))!]));
    manager = newTestManager(new TestStreamHandler(), keys, { sharedConnections: true, backoff: { baseMs: 100, maxMs: 400 } });
  });

  afterEach(async () => {
    manager.destroy();
    for (const s of sessions.splice(0)) s.destroy();
    await t.edge.close();
  });

  const specs = (which: number[], keyRef = (i: number) => `k${i}`): TunnelSpec[] =>
    which.map((i) => ({ bindingId: idOf(i), edges: [t.endpoint], keyRef: keyRef(i) }));
  const attached = (): number => t.edge.registry.all().length;

  it('serves 100 bindings on one connection, each attached with its own key', async () => {
    manager.apply(specs(indexes));
    await waitUntil(() => attached() === N, 20_000);
    expect(edgeSockets(t.edge).size).to.equal(1);
    expect(t.edge.registry.shared()).to.have.length(1);
    expect(manager.sharedConnectionCount).to.equal(1);
    expect(new Set(t.edge.registry.all().map((x) => x.keyId)).size).to.equal(N);
    for (const i of indexes) expect(await bindingOf(t.httpPort, hostOf(i))).to.equal(idOf(i));
    expect(await t.edge.metrics.render(t.edge.registry)).to.match(/result="granted"} 100\b/);
  });

  it('refuses an invalid key for one binding naming that binding, while the other 99 attach and serve', async () => {
    keys.set('k37', newTunnelKey());
    // binding 38 asks with binding 39's key: a real key, but not this binding's
    keys.set('k38', t.keys.get(idOf(39))!);
    const errors = new Map<string, TunnelRefusedError>();
    manager.on('tunnel-error', (id: string, err: Error) => errors.set(id, err as TunnelRefusedError));
    manager.apply(specs(indexes));
    await waitUntil(() => attached() === N - 2 && errors.size === 2, 20_000);
    expect([...errors.keys()].sort()).to.deep.equal([idOf(37), idOf(38)]);
    for (const [id, err] of errors) {
      expect(err.code).to.equal('TUNA_TUNNEL_REFUSED');
      expect(err.statusCode).to.equal(403);
      expect(err.bindingId).to.equal(id);
      expect(err.message).to.include(id).and.to.match(/not valid for this binding/);
      expect(err.message).to.not.include(keys.get('k37')!);
    }
    expect(edgeSockets(t.edge).size).to.equal(1);
    expect(await bindingOf(t.httpPort, hostOf(37))).to.equal(503);
    expect(await bindingOf(t.httpPort, hostOf(38))).to.equal(503);
    for (const i of indexes.filter((x) => x !== 37 && x !== 38)) expect(await bindingOf(t.httpPort, hostOf(i))).to.equal(idOf(i));
  });

  it('cuts only the binding the edge closes (as on revocation); the other 99 carry on over the same connection', async () => {
    manager.apply(specs(indexes));
    await waitUntil(() => attached() === N, 20_000);
    const [socket] = edgeSockets(t.edge);
    // what the key enforcer does with a revoked key's connections (TunnelKeyEnforcer.closeKeys)
    const victim = t.edge.registry.all().find((x) => x.bindingId === idOf(5))!;
    victim.destroy();
    expect(await bindingOf(t.httpPort, hostOf(5))).to.be.oneOf([503, idOf(5)]);
    for (const i of indexes.filter((x) => x !== 5)) expect(await bindingOf(t.httpPort, hostOf(i))).to.equal(idOf(i));
    expect([...edgeSockets(t.edge)]).to.deep.equal([socket]);
  });

  it('detaches a binding no longer wanted and keeps the connection for the rest', async () => {
    manager.apply(specs([0, 1, 2]));
    await waitUntil(() => attached() === 3);
    const [socket] = edgeSockets(t.edge);
    manager.apply(specs([0, 2]));
    await waitUntil(() => attached() === 2);
    expect(await bindingOf(t.httpPort, hostOf(1))).to.equal(503);
    expect(await bindingOf(t.httpPort, hostOf(0))).to.equal(idOf(0));
    expect(await bindingOf(t.httpPort, hostOf(2))).to.equal(idOf(2));
    expect([...edgeSockets(t.edge)]).to.deep.equal([socket]);
    manager.apply([]);
    await waitUntil(() => manager.sharedConnectionCount === 0 && t.edge.registry.shared().length === 0);
  });

  it('changes a binding key make-before-break on the same connection, failing no request', async () => {
    keys.set('k0-v2', t.keys.get(idOf(0))!);
    manager.apply(specs([0, 1]));
    await waitUntil(() => attached() === 2);
    const [socket] = edgeSockets(t.edge);
    const statuses: number[] = [];
    let isRunning = true;
    const load = (async () => {
      for (let i = 0; i < 200 && isRunning; i++) statuses.push((await http1(t.httpPort, hostOf(0), '/slow?ms=5')).status);
    })();
    await new Promise((r) => setTimeout(r, 50));
    manager.apply(specs([0, 1], (i) => (i === 0 ? 'k0-v2' : `k${i}`)));
    await waitUntil(() => manager.sessions(idOf(0)).length === 1 && manager.status().every((s) => s.open === 1));
    await new Promise((r) => setTimeout(r, 100));
    isRunning = false;
    await load;
    expect(statuses.length).to.be.greaterThan(0);
    expect(statuses.every((s) => s === 200)).to.equal(true);
    expect([...edgeSockets(t.edge)]).to.deep.equal([socket]);
    expect(attached()).to.equal(2);
  });

  it('keeps serving one-binding (version 1) agents beside a shared connection on the same edge', async () => {
    sessions.push(await openSession(t, 'binding/host/old.test', new TestStreamHandler()));
    manager.apply(specs([0, 1]));
    await waitUntil(() => attached() === 3);
    expect(edgeSockets(t.edge).size).to.equal(2);
    expect(await bindingOf(t.httpPort, 'old.test')).to.equal('binding/host/old.test');
    expect(await bindingOf(t.httpPort, hostOf(1))).to.equal(idOf(1));
  });

  it('falls back to one connection per binding, reporting nothing, when the edge predates shared connections', async () => {
    // An edge of protocol version 1 in front of this one: it answers the version 2 upgrade as
    // malformed (400) and passes a version 1 upgrade through.
    const oldEdge: Server = createServer((client) => {
      client.once('data', (first: Buffer) => {
        if (/^upgrade: tuna-tunnel\/2\r$/im.test(first.toString('latin1'))) {
          const body = 'tunnel refused: malformed upgrade request\n';
          client.end(`HTTP/1.1 400 Bad Request\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
          return;
        }
        const upstream = connectTcp(t.endpoint.port, '127.0.0.1', () => {
          upstream.write(first);
          client.pipe(upstream).pipe(client);
        });
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.on('close', () => upstream.destroy());
      });
    });
    await new Promise<void>((resolve) => oldEdge.listen(0, '127.0.0.1', resolve));
    try {
      const errors: Error[] = [];
      manager.on('tunnel-error', (_id: string, err: Error) => errors.push(err));
      const edge = { host: '127.0.0.1', port: (oldEdge.address() as AddressInfo).port, tls: false };
      manager.apply([0, 1, 2].map((i) => ({ bindingId: idOf(i), edges: [edge], keyRef: `k${i}` })));
      await waitUntil(() => attached() === 3);
      expect(edgeSockets(t.edge).size).to.equal(3);
      expect(t.edge.registry.all().every((x) => !x.isShared)).to.equal(true);
      expect(errors).to.deep.equal([]);
      for (const i of [0, 1, 2]) expect(await bindingOf(t.httpPort, hostOf(i))).to.equal(idOf(i));
    } finally {
      manager.destroy();
      oldEdge.close();
    }
  });

  it('holds one connection per edge node, every binding attached on each', async () => {
    // a second edge node with the same bindings and keys (several nodes share state)
    const same = new Map(indexes.map((i) => [idOf(i), t.keys.get(idOf(i))!]));
    const second = await startEdge(testEdgeConfig(indexes.map((i) => ({ id: idOf(i), kind: 'host' as const, hostnames: [hostOf(i)] })), {}, same));
    try {
      const edges = [t.endpoint, { host: '127.0.0.1', port: second.address().tunnel.port, tls: false }];
      manager.apply(indexes.slice(0, 10).map((i) => ({ bindingId: idOf(i), edges, keyRef: `k${i}` })));
      await waitUntil(() => attached() === 10 && second.registry.all().length === 10 && manager.status().every((s) => s.open === 2));
      expect(edgeSockets(t.edge).size).to.equal(1);
      expect(edgeSockets(second).size).to.equal(1);
      expect(manager.sharedConnectionCount).to.equal(2);
      expect(manager.status().every((s) => s.wanted === 2)).to.equal(true);
      expect(await bindingOf(second.address().http!.port, hostOf(3))).to.equal(idOf(3));
    } finally {
      manager.destroy();
      await second.close();
    }
  });

  it('opens `connections` shared connections per edge, every binding attached on each', async () => {
    manager.apply(indexes.slice(0, 3).map((i) => ({ bindingId: idOf(i), edges: [t.endpoint], connections: 2, keyRef: `k${i}` })));
    await waitUntil(() => attached() === 6 && manager.status().every((s) => s.open === 2));
    expect(edgeSockets(t.edge).size).to.equal(2);
    expect(manager.sharedConnectionCount).to.equal(2);
    for (const i of [0, 1, 2]) expect(t.edge.registry.count().get(idOf(i))).to.equal(2);
  });

  it('opens another connection beside a full one (bindingsPerConnection), so no connection reaches the edge limit', async () => {
    manager.destroy();
    manager = newTestManager(new TestStreamHandler(), keys, { sharedConnections: true, bindingsPerConnection: 40, backoff: { baseMs: 100, maxMs: 400 } });
    manager.apply(specs(indexes));
    await waitUntil(() => attached() === N, 20_000);
    expect(manager.sharedConnectionCount).to.equal(3);
    expect(edgeSockets(t.edge).size).to.equal(3);
    for (const i of [0, 50, 99]) expect(await bindingOf(t.httpPort, hostOf(i))).to.equal(idOf(i));
  });

  it('drains the shared connection on close, finishing a request in flight', async () => {
    manager.apply(specs([0]));
    await waitUntil(() => attached() === 1);
    const slow = http1(t.httpPort, hostOf(0), '/slow?ms=300');
    await new Promise((r) => setTimeout(r, 100));
    await manager.close();
    expect((await slow).status).to.equal(200);
    expect(t.edge.registry.all()).to.have.length(0);
  });
});

describe('a shared connection attaching a binding while requests wait for it', function () {
  this.timeout(60_000);

  it('serves the requests the new tunnel wakes, whose streams can reach the agent ahead of the edge\'s `attached`', async () => {
    const t = await startTestEdge([{ id: idOf(0), kind: 'host', hostnames: [hostOf(0)] }], { limits: { tunnelWaitMs: 5000 } });
    const manager = newTestManager(new TestStreamHandler(), new Map([['k0', t.keys.get(idOf(0))!]]), { sharedConnections: true });
    try {
      const waiting = Array.from({ length: 8 }, () => http1(t.httpPort, hostOf(0), '/'));
      await new Promise((r) => setTimeout(r, 50));
      manager.apply([{ bindingId: idOf(0), edges: [t.endpoint], keyRef: 'k0' }]);
      const statuses = (await Promise.all(waiting)).map((a) => a.status);
      expect(statuses).to.deep.equal(Array.from({ length: 8 }, () => 200));
    } finally {
      manager.destroy();
      await t.edge.close();
    }
  });
});
