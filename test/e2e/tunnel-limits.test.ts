import { expect } from 'chai';
import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { constants as h2constants } from 'node:http2';
import type { ClientHttp2Session } from 'node:http2';
import { connect as connectTcp } from 'node:net';
import type { TunnelSession } from '../../src/tunnel/session.js';
import type { TunnelError } from '../../src/tunnel/errors.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { h2, h2Connect, http1, openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const APP = 'binding/host/app.test';

async function rawExchange(port: number, text: string): Promise<string> {
  const socket = connectTcp({ host: '127.0.0.1', port });
  socket.end(text);
  let out = '';
  for await (const chunk of socket) out += String(chunk);
  return out;
}

describe('tunnel: limits, malformed input and graceful shutdown', () => {
  let t: TestEdge;
  let handler: TestStreamHandler;
  let session: TunnelSession;
  let client: ClientHttp2Session | undefined;

  beforeEach(async () => {
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'], maxConnections: 2 }], {
      // one loopback client carries 1,000 concurrent streams below: above the per-client in-flight cap (128)
      limits: { tunnelWaitMs: 0, maxRequestBodyBytes: 1_000_000, public: { maxInFlightPerClient: 5000 } },
    });
    handler = new TestStreamHandler();
    session = await openSession(t, APP, handler);
  });

  afterEach(async () => {
    client?.destroy();
    client = undefined;
    session.destroy();
    await t.edge.close();
  });

  it('answers 400 to a malformed HTTP/1.1 request while a request on another connection completes', async () => {
    const slow = http1(t.httpPort, 'app.test', '/slow?ms=200');
    const answer = await rawExchange(t.httpPort, 'GET / HTTP/1.1\r\nHost: app.test\r\nno colon here\r\n\r\n');
    expect(answer).to.match(/^HTTP\/1\.1 400 /);
    expect((await slow).status).to.equal(200);
  });

  it('answers 400 to an absolute-form request target', async () => {
    const answer = await rawExchange(t.httpPort, 'GET http://app.test/ HTTP/1.1\r\nHost: app.test\r\n\r\n');
    expect(answer).to.match(/^HTTP\/1\.1 400 /);
  });

  it('answers 431 to oversized HTTP/1.1 headers', async () => {
    const res = await http1(t.httpPort, 'app.test', '/', { headers: { 'x-big': 'a'.repeat(20_000) } });
    expect(res.status).to.equal(431);
  });

  it('answers 431 to an oversized HTTP/2 header list while other streams on the session continue', async () => {
    client = h2Connect(t.httpPort);
    const slow = h2(client, { ':path': '/slow?ms=200', ':authority': 'app.test' });
    const big = await h2(client, { ':path': '/', ':authority': 'app.test', 'x-big': 'a'.repeat(20_000) });
    expect(big.headers[':status']).to.equal(431);
    expect((await slow).headers[':status']).to.equal(200);
    expect((await h2(client, { ':path': '/', ':authority': 'app.test' })).headers[':status']).to.equal(200);
  });

  it('answers 405 to a plain CONNECT from a public HTTP/2 client, so the edge is no TCP proxy', async () => {
    client = h2Connect(t.httpPort);
    const stream = client.request({ ':method': 'CONNECT', ':authority': 'app.test:22' });
    const [headers] = (await once(stream, 'response')) as [Record<string, unknown>];
    stream.destroy();
    expect(headers[':status']).to.equal(405);
    expect(handler.seen).to.have.length(0);
  });

  it('answers 413 to a body over the configured limit, declared or streamed', async () => {
    const declared = await http1(t.httpPort, 'app.test', '/count', { method: 'POST', body: Buffer.alloc(1_000_001) });
    expect(declared.status).to.equal(413);
    const req = httpRequest({ host: '127.0.0.1', port: t.httpPort, method: 'POST', path: '/count', headers: { host: 'app.test' }, agent: false });
    req.on('error', () => {});
    const responded = once(req, 'response') as Promise<[IncomingMessage]>;
    for (let i = 0; i < 20; i++) req.write(Buffer.alloc(100_000));
    req.end();
    const [res] = await responded;
    expect(res.statusCode).to.equal(413);
    res.resume();
    expect((await http1(t.httpPort, 'app.test', '/count', { method: 'POST', body: Buffer.alloc(999_999) })).body.toString()).to.equal('999999');
  });

  it('answers 413 on HTTP/2 when a streamed body passes the limit, and the session continues', async () => {
    client = h2Connect(t.httpPort);
    const stream = client.request({ ':method': 'POST', ':path': '/count', ':authority': 'app.test' });
    // the edge may reset the rest of the upload once it has answered (RFC 9113 §8.1)
    stream.on('error', () => {});
    const responded = once(stream, 'response') as Promise<[Record<string, unknown>]>;
    for (let i = 0; i < 12; i++) stream.write(Buffer.alloc(100_000));
    stream.end();
    const [headers] = await responded;
    expect(headers[':status']).to.equal(413);
    stream.resume();
    const ok = await h2(client, { ':method': 'POST', ':path': '/count', ':authority': 'app.test' }, Buffer.alloc(1000));
    expect(ok.body.toString()).to.equal('1000');
  });

  it('carries 1,000 concurrent streams through one tunnel connection', async () => {
    const clients = Array.from({ length: 4 }, () => h2Connect(t.httpPort));
    try {
      const results = await Promise.all(
        Array.from({ length: 1000 }, (_, i) => h2(clients[i % 4]!, { ':path': `/slow?ms=300&i=${i}`, ':authority': 'app.test' })),
      );
      expect(results.filter((r) => Number(r.headers[':status']) === 200)).to.have.length(1000);
      const ids = new Set(results.map((r) => (JSON.parse(r.body.toString()) as { context: { requestId: string } }).context.requestId));
      expect(ids.size).to.equal(1000);
      expect(t.edge.registry.count().get(APP)).to.equal(1);
    } finally {
      for (const c of clients) c.destroy();
    }
  });

  it('lets in-flight requests finish when the agent closes (GOAWAY drain), then answers 503', async () => {
    const inFlight = Array.from({ length: 5 }, (_, i) => http1(t.httpPort, 'app.test', `/slow?ms=300&i=${i}`));
    await waitUntil(() => handler.seen.length === 5);
    const closed = session.close();
    const statuses = (await Promise.all(inFlight)).map((r) => r.status);
    await closed;
    expect(statuses).to.deep.equal([200, 200, 200, 200, 200]);
    expect(session.state).to.equal('closed');
    await waitUntil(() => (t.edge.registry.count().get(APP) ?? 0) === 0);
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(503);
  });

  it('lets in-flight requests finish when the edge closes gracefully, closing keep-alive connections after them', async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      const inFlight = http1(t.httpPort, 'app.test', '/slow?ms=300', { agent });
      await waitUntil(() => handler.seen.length === 1);
      const closing = t.edge.close();
      const res = await inFlight;
      expect(res.status).to.equal(200);
      expect(res.headers.connection).to.equal('close');
      await closing;
    } finally {
      agent.destroy();
    }
  });

  it('balances concurrent streams across the connections of a binding by open streams', async () => {
    const other = new TestStreamHandler();
    const second = await openSession(t, APP, other);
    try {
      await Promise.all(Array.from({ length: 10 }, (_, i) => http1(t.httpPort, 'app.test', `/slow?ms=1000&i=${i}`)));
      expect([handler.seen.length, other.seen.length]).to.deep.equal([5, 5]);
    } finally {
      second.destroy();
    }
  });

  it('refuses a connection over the key\'s connection cap with 429', async () => {
    const second = await openSession(t, APP, handler);
    try {
      const err = await openSession(t, APP, handler).then(
        () => undefined,
        (e: TunnelError) => e,
      );
      expect(err?.code).to.equal('TUNA_TUNNEL_REFUSED');
      expect((err as TunnelError & { statusCode: number }).statusCode).to.equal(429);
    } finally {
      second.destroy();
    }
  });
});

describe('tunnel: retrying streams the agent refused unprocessed', () => {
  let t: TestEdge;
  let sessions: TunnelSession[];

  /** RefusingHandler resets every stream with REFUSED_STREAM, as an agent does for streams past its GOAWAY. */
  class RefusingHandler extends TestStreamHandler {
    override handleStream(...args: Parameters<TestStreamHandler['handleStream']>): void {
      this.seen.push(args[2]);
      args[0].close(h2constants.NGHTTP2_REFUSED_STREAM);
    }
  }

  beforeEach(async () => {
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }], { limits: { tunnelWaitMs: 0 } });
    sessions = [];
  });

  afterEach(async () => {
    for (const s of sessions) s.destroy();
    await t.edge.close();
  });

  it('sends a bodyless request again on another connection, but not one with a body', async () => {
    const refusing = new RefusingHandler();
    const answering = new TestStreamHandler();
    sessions.push(await openSession(t, APP, refusing));
    sessions.push(await openSession(t, APP, answering));
    await waitUntil(() => t.edge.registry.count().get(APP) === 2);
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(200);
    expect([refusing.seen.length, answering.seen.length]).to.deep.equal([1, 1]);
    expect((await http1(t.httpPort, 'app.test', '/echo', { method: 'POST', body: 'x' })).status).to.equal(502);
    expect(refusing.seen.length + answering.seen.length).to.equal(3);
  });
});
