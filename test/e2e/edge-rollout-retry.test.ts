// edge-rollout-retry.test.ts — a request whose tunnel goes away before it is answered (the replica
// serving it stopped, as in a rolling upgrade) is sent once more on another tunnel of its binding,
// or on the first to connect within tunnelWaitMs, when that is safe: bodyless and idempotent.
import { expect } from 'chai';
import { constants as h2c } from 'node:http2';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { TunnelSession } from '../../src/tunnel/session.js';
import type { TunnelStreamContext } from '../../src/wire/stream-handler.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { h2, h2Connect, http1, openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const APP = 'binding/host/app.test';

/** SilentHandler takes every stream and never answers: the replica that is about to stop. */
class SilentHandler extends TestStreamHandler {
  override handleStream(stream: ServerHttp2Stream, _headers: IncomingHttpHeaders, context: TunnelStreamContext): void {
    this.seen.push(context);
    stream.on('error', () => undefined);
  }
}

/**
 * RefusingHandler answers its first stream (so that later ones have ids above it), then refuses
 * every stream unprocessed: RST_STREAM(REFUSED_STREAM), or a GOAWAY whose last stream id is below
 * the stream (the final GOAWAY of an agent that stopped as the edge opened it). It takes spliced
 * HTTP/1.1 streams too, so both HTTP/1.1 paths meet the refusal.
 */
class RefusingHandler extends TestStreamHandler {
  readonly acceptsSplicedHttp1 = true;
  refused = 0;
  constructor(readonly how: 'reset' | 'goaway') {
    super();
  }
  override handleStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, context: TunnelStreamContext): void {
    if (stream.id === 1) return super.handleStream(stream, headers, context);
    this.refused++;
    if (this.how === 'reset') return void stream.close(h2c.NGHTTP2_REFUSED_STREAM);
    stream.session!.goaway(h2c.NGHTTP2_NO_ERROR, (stream.id ?? 1) - 2);
  }
}

describe('edge: a request whose tunnel goes away before the answer', () => {
  let t: TestEdge;
  const sessions: TunnelSession[] = [];

  const open = async (handler: TestStreamHandler): Promise<TunnelSession> => {
    const session = await openSession(t, APP, handler);
    sessions.push(session);
    return session;
  };

  /** stopping opens the tunnel that takes the request first (the registry picks the first of equals) and dies under it. */
  const stopping = async (): Promise<{ session: TunnelSession; handler: SilentHandler }> => {
    const handler = new SilentHandler();
    const session = await open(handler);
    await waitUntil(() => t.edge.registry.count().get(APP) === 1);
    return { session, handler };
  };

  beforeEach(async () => {
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'], maxConnections: 4 }], { limits: { tunnelWaitMs: 3000 } });
  });

  afterEach(async () => {
    for (const s of sessions.splice(0)) s.destroy();
    await t.edge.close();
  });

  it('sends a GET once more on another tunnel of the binding (HTTP/1.1)', async () => {
    const old = await stopping();
    const next = new TestStreamHandler();
    await open(next);
    await waitUntil(() => t.edge.registry.count().get(APP) === 2);
    const answer = http1(t.httpPort, 'app.test', '/path?q=1');
    await waitUntil(() => old.handler.seen.length === 1);
    old.session.destroy();
    const result = await answer;
    expect(result.status).to.equal(200);
    expect(next.seen.map((c) => c.requestId)).to.deep.equal(old.handler.seen.map((c) => c.requestId));
  });

  it('sends a GET once more on another tunnel of the binding (HTTP/2)', async () => {
    const old = await stopping();
    const next = new TestStreamHandler();
    await open(next);
    await waitUntil(() => t.edge.registry.count().get(APP) === 2);
    const client = h2Connect(t.httpPort);
    try {
      const answer = h2(client, { ':method': 'GET', ':path': '/', ':authority': 'app.test' });
      await waitUntil(() => old.handler.seen.length === 1);
      old.session.destroy();
      expect((await answer).headers[':status']).to.equal(200);
      expect(next.seen).to.have.length(1);
    } finally {
      client.destroy();
    }
  });

  it('waits for the tunnel that connects next when the binding has no other one (the new replica)', async () => {
    const old = await stopping();
    const answer = http1(t.httpPort, 'app.test', '/');
    await waitUntil(() => old.handler.seen.length === 1);
    old.session.destroy();
    await waitUntil(() => (t.edge.registry.count().get(APP) ?? 0) === 0);
    const next = new TestStreamHandler();
    await open(next);
    expect((await answer).status).to.equal(200);
    expect(next.seen).to.have.length(1);
  });

  it('answers 502 for a request with a body or a method that is not idempotent, and sends it nowhere else', async () => {
    for (const request of [
      { method: 'PUT', body: 'x' },
      { method: 'POST', body: undefined },
    ]) {
      const old = await stopping();
      const next = new TestStreamHandler();
      await open(next);
      await waitUntil(() => t.edge.registry.count().get(APP) === 2);
      const answer = http1(t.httpPort, 'app.test', '/echo', request);
      await waitUntil(() => old.handler.seen.length === 1);
      old.session.destroy();
      expect((await answer).status, request.method).to.equal(502);
      expect(next.seen, request.method).to.deep.equal([]);
      for (const s of sessions.splice(0)) s.destroy();
      await waitUntil(() => (t.edge.registry.count().get(APP) ?? 0) === 0);
    }
  });

  it('answers 502 when no tunnel connects within tunnelWaitMs', async () => {
    await t.edge.close();
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'], maxConnections: 4 }], { limits: { tunnelWaitMs: 200 } });
    const old = await stopping();
    const answer = http1(t.httpPort, 'app.test', '/');
    await waitUntil(() => old.handler.seen.length === 1);
    old.session.destroy();
    expect((await answer).status).to.equal(502);
  });
  for (const how of ['reset', 'goaway'] as const) {
    /** refusing opens the binding's first tunnel, which answers one request and refuses the rest */
    const refusing = async (): Promise<RefusingHandler> => {
      const handler = new RefusingHandler(how);
      await open(handler);
      // over HTTP/2, so the first stream is one per request (the handler parses no spliced HTTP/1.1)
      const client = h2Connect(t.httpPort);
      try {
        expect((await h2(client, { ':method': 'GET', ':path': '/first', ':authority': 'app.test' })).headers[':status']).to.equal(200);
      } finally {
        client.destroy();
      }
      return handler;
    };

    it(`sends a refused request (${how}) to another tunnel of the binding: HTTP/1.1 spliced and per request, HTTP/2`, async () => {
      const old = await refusing();
      const next = new TestStreamHandler();
      await open(next);
      await waitUntil(() => t.edge.registry.count().get(APP) === 2);
      expect((await http1(t.httpPort, 'app.test', '/a')).status).to.equal(200);
      if (how === 'reset') {
        const client = h2Connect(t.httpPort);
        try {
          expect((await h2(client, { ':method': 'GET', ':path': '/b', ':authority': 'app.test' })).headers[':status']).to.equal(200);
        } finally {
          client.destroy();
        }
      }
      expect(old.refused).to.be.greaterThan(0);
      expect(next.seen.length).to.be.greaterThan(0);
    });

    it(`answers 503 to a request its only tunnel refused (${how}) when no other connects within tunnelWaitMs`, async () => {
      await t.edge.close();
      t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'], maxConnections: 4 }], { limits: { tunnelWaitMs: 200 } });
      const old = await refusing();
      // HTTP/2 first: after a GOAWAY the tunnel takes no stream, so only the first request meets the refusal
      const client = h2Connect(t.httpPort);
      try {
        const reply = await h2(client, { ':method': 'GET', ':path': '/', ':authority': 'app.test' });
        expect(`${String(reply.headers[':status'])} ${reply.body.toString()}`).to.equal('503 no tunnel is connected for this host\n');
      } finally {
        client.destroy();
      }
      expect(old.refused).to.equal(1);
      if (how === 'reset') {
        const answer = await http1(t.httpPort, 'app.test', '/');
        expect(`${answer.status} ${answer.body.toString()}`).to.equal('503 no tunnel is connected for this host\n');
        expect(old.refused, 'the spliced stream, then the request').to.equal(3);
      }
    });

    it(`sends a request its only tunnel refused (${how}) to the tunnel that connects next`, async () => {
      const old = await refusing();
      const answer = http1(t.httpPort, 'app.test', '/late');
      await waitUntil(() => old.refused > 0);
      const next = new TestStreamHandler();
      await open(next);
      expect((await answer).status).to.equal(200);
      expect(next.seen.length).to.be.greaterThan(0);
    });
  }
});
