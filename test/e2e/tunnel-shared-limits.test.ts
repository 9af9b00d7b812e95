import { expect } from 'chai';
import type { ServerHttp2Stream } from 'node:http2';
import { hashTunnelKey, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import type { TunnelManager } from '../../src/tunnel/manager.js';
import type { TunnelRefusedError } from '../../src/tunnel/errors.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import { TunnelSession } from '../../src/tunnel/session.js';
import { CONTROL_PATH } from '../../src/wire/index.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { newTunnelKey, openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';
import { newTestManager } from '../support/tunnel-manager-fixture.js';

const CAPPED = 'binding/host/capped.test';
const FREE = 'binding/host/free.test';

/**
 * rawSharedConnection is a version 2 connection that does nothing by itself: a TunnelSession whose
 * router hands the test the control stream (answered 200) and refuses everything else.
 */
async function rawSharedConnection(t: TestEdge): Promise<{ session: TunnelSession; control: Promise<ServerHttp2Stream> }> {
  let gotControl!: (stream: ServerHttp2Stream) => void;
  const control = new Promise<ServerHttp2Stream>((resolve) => (gotControl = resolve));
  const session = new TunnelSession({
    edge: t.endpoint,
    bindingId: '',
    key: '',
    dialer: new NetEdgeDialer(),
    clock: new SystemClock(),
    handler: new TestStreamHandler(),
    router: {
      routeStream(stream, headers) {
        if (headers[':path'] !== CONTROL_PATH) return void stream.close();
        stream.respond({ ':status': 200 });
        gotControl(stream);
      },
    },
  });
  await session.connect();
  return { session, control };
}

describe('many bindings on one connection: what the edge still bounds', function () {
  this.timeout(30_000);
  let t: TestEdge;
  let manager: TunnelManager | undefined;
  let limited: EdgeServer | undefined;
  const sessions: TunnelSession[] = [];

  beforeEach(async () => {
    t = await startTestEdge([
      { id: CAPPED, kind: 'host', hostnames: ['capped.test'], maxConnections: 1 },
      { id: FREE, kind: 'host', hostnames: ['free.test'] },
    ]);
  });

  afterEach(async () => {
    manager?.destroy();
    manager = undefined;
    for (const s of sessions.splice(0)) s.destroy();
    await t.edge.close();
    await limited?.close();
    limited = undefined;
  });

  it("counts an attachment against its key's connection cap, together with version 1 connections", async () => {
    sessions.push(await openSession(t, CAPPED, new TestStreamHandler()));
    const keys = new Map([['capped', t.keys.get(CAPPED)!], ['free', t.keys.get(FREE)!]]);
    manager = newTestManager(new TestStreamHandler(), keys, { sharedConnections: true, backoff: { baseMs: 5000, maxMs: 5000 } });
    const errors: [string, TunnelRefusedError][] = [];
    manager.on('tunnel-error', (id: string, err: Error) => errors.push([id, err as TunnelRefusedError]));
    manager.apply([
      { bindingId: CAPPED, edges: [t.endpoint], keyRef: 'capped' },
      { bindingId: FREE, edges: [t.endpoint], keyRef: 'free' },
    ]);
    await waitUntil(() => errors.length === 1 && (t.edge.registry.count().get(FREE) ?? 0) === 1);
    expect(errors[0]![0]).to.equal(CAPPED);
    expect(errors[0]![1].statusCode).to.equal(429);
    expect(errors[0]![1].message).to.match(/connection limit of this key reached/);
    expect(t.edge.registry.count().get(CAPPED)).to.equal(1);
  });

  it('spends the failed-attempt budget on refused attaches and then refuses with 429 before looking at a key', async () => {
    const config = { listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } }, bindings: [{ id: FREE, kind: 'host' as const, hostnames: ['free.test'], keys: [{ sha256: hashTunnelKey(t.keys.get(FREE)!) }] }] };
    limited = await startEdge(config, { tunnelRateLimit: { capacity: 3, refillPerSecond: 0.001 } });
    const endpoint = { host: '127.0.0.1', port: limited.address().tunnel.port, tls: false };
    const keys = new Map([['good', t.keys.get(FREE)!], ...[0, 1, 2].map((i): [string, string] => [`bad${i}`, newTunnelKey()])]);
    manager = newTestManager(new TestStreamHandler(), keys, { sharedConnections: true, backoff: { baseMs: 60_000, maxMs: 60_000 } });
    const errors = new Map<string, TunnelRefusedError>();
    manager.on('tunnel-error', (id: string, err: Error) => errors.set(id, err as TunnelRefusedError));
    manager.apply([0, 1, 2].map((i) => ({ bindingId: `binding/host/x${i}.test`, edges: [endpoint], keyRef: `bad${i}` })));
    await waitUntil(() => errors.size === 3);
    expect([...errors.values()].map((e) => e.statusCode)).to.deep.equal([403, 403, 403]);
    manager.apply([
      ...[0, 1, 2].map((i) => ({ bindingId: `binding/host/x${i}.test`, edges: [endpoint], keyRef: `bad${i}` })),
      { bindingId: FREE, edges: [endpoint], keyRef: 'good' },
    ]);
    await waitUntil(() => errors.has(FREE));
    expect(errors.get(FREE)!.statusCode).to.equal(429);
    expect(errors.get(FREE)!.message).to.match(/too many failed attempts/);
  });

  it('closes a shared connection that attaches nothing', async () => {
    const raw = await rawSharedConnection(t);
    sessions.push(raw.session);
    await raw.control;
    await waitUntil(() => t.edge.registry.shared().length === 1);
    // UNATTACHED_TIMEOUT_MS (10 s): the edge drains it with GOAWAY, and the connection ends
    await raw.session.closed();
    await waitUntil(() => t.edge.registry.shared().length === 0);
  });

  it('tears down a shared connection whose agent sends a malformed control line, and nothing else', async () => {
    const keys = new Map([['free', t.keys.get(FREE)!]]);
    manager = newTestManager(new TestStreamHandler(), keys, { sharedConnections: true });
    manager.apply([{ bindingId: FREE, edges: [t.endpoint], keyRef: 'free' }]);
    await waitUntil(() => (t.edge.registry.count().get(FREE) ?? 0) === 1);
    const raw = await rawSharedConnection(t);
    sessions.push(raw.session);
    const control = await raw.control;
    control.write('{"type":"attach","binding":"binding/host/capped.test"}\n');
    await raw.session.closed();
    expect(t.edge.registry.count().get(FREE)).to.equal(1);
    expect(t.edge.registry.count().get(CAPPED)).to.equal(undefined);
  });
});
