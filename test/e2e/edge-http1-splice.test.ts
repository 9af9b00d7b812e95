import { expect } from 'chai';
import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { startEdge } from '../../src/edge/index.js';
import type { EdgeConfigFile } from '../../src/edge/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import type { TunnelStreamHandler } from '../../src/wire/stream-handler.js';
import { BINDING, hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { maskedTextFrame } from '../support/backend-ws.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import type { TestCertificate } from '../support/tunnel-certs.js';
import { openSession, testEdgeConfig, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const FOREIGN = 'binding/host/foreign.test';

interface Reply {
  status: number;
  body: string;
}

function collect(res: IncomingMessage): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.once('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    res.once('error', reject);
  });
}

function get(port: number, host: string, path: string, agent: Agent, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent, headers: { host, ...headers } }, (res) => collect(res).then(resolve, reject));
    req.once('error', reject);
    req.end();
  });
}

function echo(reply: Reply): EchoReply {
  return JSON.parse(reply.body) as EchoReply;
}

/** A public HTTP/1.1 connection spliced whole into one tunnel stream (docs/protocol.md §4.5). */
describe('edge: HTTP/1.1 connections spliced into one tunnel stream', () => {
  let backends: TestBackend[] = [];
  let t: TestEdge | undefined;
  let session: TunnelSession | undefined;
  let plane: DataPlane | undefined;
  let agent: Agent | undefined;
  let wss: WebSocketServer | undefined;

  async function setUp(
    options: { spliceHttp1?: boolean; edge?: Partial<EdgeConfigFile>; certificate?: TestCertificate; drainTimeoutMs?: number; handler?: (plane: DataPlane) => TunnelStreamHandler } = {},
  ): Promise<TestEdge> {
    const api = await startHttpBackend('api');
    const web = await startHttpBackend('web');
    const other = await startHttpBackend('other');
    backends.push(api, web, other);
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => wss!.once('listening', () => r()));
    wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo ${String(data)}`)));
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'wsvc', 'http', [{ address: '127.0.0.1', port: (wss.address() as AddressInfo).port }]);
    endpoints.set('default', 'api', 'http', [{ address: '127.0.0.1', port: api.port }]);
    endpoints.set('default', 'web', 'http', [{ address: '127.0.0.1', port: web.port }]);
    endpoints.set('default', 'other', 'http', [{ address: '127.0.0.1', port: other.port }]);
    plane = new DataPlane({ endpoints, ...(options.spliceHttp1 === undefined ? {} : { spliceHttp1: options.spliceHttp1 }) });
    plane.update(
      hostGraph([
        {
          hostname: 'app.test',
          routes: [
            httpRoute('api', [serviceBackend('api')], { match: { path: { type: 'Prefix', value: '/api' } } }),
            httpRoute('ws', [serviceBackend('wsvc', { protocol: 'ws' })], { match: { path: { type: 'Prefix', value: '/ws' } } }),
            httpRoute('web', [serviceBackend('web')]),
          ],
        },
        { hostname: 'other.test', routes: [httpRoute('other', [serviceBackend('other')])] },
      ]),
    );
    const keys = new Map<string, string>();
    const bindings = [
      { id: BINDING, kind: 'host' as const, hostnames: ['app.test', 'other.test'] },
      { id: FOREIGN, kind: 'host' as const, hostnames: ['foreign.test'] },
    ];
    const config = testEdgeConfig(bindings, { limits: { tunnelWaitMs: 0 }, ...options.edge }, keys);
    const server = await startEdge(config, options.drainTimeoutMs === undefined ? {} : { drainTimeoutMs: options.drainTimeoutMs });
    const addr = server.address();
    const edge: TestEdge = { edge: server, keys, config, endpoint: { host: '127.0.0.1', port: addr.tunnel.port, tls: false }, httpPort: addr.http?.port ?? 0 };
    t = edge;
    session = await openSession(edge, BINDING, options.handler?.(plane) ?? plane);
    return edge;
  }

  afterEach(async () => {
    agent?.destroy();
    agent = undefined;
    session?.destroy();
    session = undefined;
    await t?.edge.close();
    t = undefined;
    plane?.close();
    plane = undefined;
    await Promise.all(backends.map((b) => b.close()));
    backends = [];
    for (const client of wss?.clients ?? []) client.terminate();
    await new Promise<void>((r) => (wss === undefined ? r() : wss.close(() => r())));
    wss = undefined;
  });

  it('carries a keep-alive connection with several requests to two paths of two Services, and two hosts, on one stream', async () => {
    const edge = await setUp();
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const seen: string[] = [];
    for (const path of ['/api/a', '/web/b', '/api/c', '/d']) {
      const reply = await get(edge.httpPort, 'app.test', path, agent);
      expect(reply.status).to.equal(200);
      seen.push(`${echo(reply).backend} ${echo(reply).url}`);
    }
    const other = await get(edge.httpPort, 'other.test', '/x', agent);
    expect(echo(other).backend).to.equal('other');
    expect(seen).to.deep.equal(['api /api/a', 'web /web/b', 'api /api/c', 'web /d']);
    expect(edge.edge.metrics.publicConnections).to.equal(1);
    expect(edge.edge.metrics.streamsTotal).to.equal(1);
  });

  it('answers pipelined requests in order on one spliced connection', async () => {
    const edge = await setUp();
    const socket = connect({ host: '127.0.0.1', port: edge.httpPort });
    const head = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: app.test\r\n\r\n`;
    socket.write(head('/api/1') + head('/web/2') + head('/api/3'));
    let text = '';
    for await (const chunk of socket) {
      text += (chunk as Buffer).toString('latin1');
      if ((text.match(/HTTP\/1\.1 200/g) ?? []).length === 3 && text.endsWith('}')) break;
    }
    socket.destroy();
    const urls = [...text.matchAll(/"url":"([^"]+)"/g)].map((m) => m[1]);
    expect(urls).to.deep.equal(['/api/1', '/web/2', '/api/3']);
    expect(edge.edge.metrics.streamsTotal).to.equal(1);
  });

  it('answers 421 to a request for a host the binding does not serve, then serves the next request on the same connection', async () => {
    const edge = await setUp();
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await get(edge.httpPort, 'app.test', '/api/first', agent)).status).to.equal(200);
    const foreign = await get(edge.httpPort, 'foreign.test', '/', agent);
    expect(foreign.status).to.equal(421);
    expect(foreign.body).to.contain('misdirected request: foreign.test');
    const after = await get(edge.httpPort, 'app.test', '/api/after', agent);
    expect(echo(after).url).to.equal('/api/after');
    expect(edge.edge.metrics.publicConnections).to.equal(1);
    expect(edge.edge.metrics.streamsTotal).to.equal(1);
    expect(backends[0]!.requests.map((r) => r.url)).to.deep.equal(['/api/first', '/api/after']);
  });

  it('adds X-Forwarded-For/-Proto/-Host/-Port and one x-request-id per request, and drops client tuna-* fields', async () => {
    const edge = await setUp();
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const forged = { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https', 'x-request-id': 'mine', 'tuna-client-address': '10.0.0.1' };
    const first = echo(await get(edge.httpPort, 'App.Test:' + String(edge.httpPort), '/api/1', agent, forged));
    const second = echo(await get(edge.httpPort, 'app.test', '/api/2', agent));
    expect(first.headers['x-forwarded-for']).to.equal('203.0.113.9, 127.0.0.1');
    expect(first.headers['x-forwarded-proto']).to.equal('http');
    expect(first.headers['x-forwarded-host']).to.equal('app.test');
    expect(first.headers['x-forwarded-port']).to.equal(String(edge.httpPort));
    expect(second.headers['x-forwarded-for']).to.equal('127.0.0.1');
    const ids = [first.headers['x-request-id'], second.headers['x-request-id']].map(String);
    expect(ids[0]).to.match(/\.1$/).and.not.equal('mine');
    expect(ids[1]).to.equal(ids[0]!.replace(/\.1$/, '.2'));
    expect(Object.keys(first.headers).filter((k) => k.startsWith('tuna-'))).to.deep.equal([]);
    expect(edge.edge.metrics.streamsTotal).to.equal(1);
  });

  it('serves an agent that does not name the feature per request, one stream each', async () => {
    const edge = await setUp({ spliceHttp1: false });
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    for (const path of ['/api/a', '/b', '/api/c']) expect((await get(edge.httpPort, 'app.test', path, agent)).status).to.equal(200);
    expect(edge.edge.metrics.publicConnections).to.equal(1);
    expect(edge.edge.metrics.streamsTotal).to.equal(3);
  });

  it('forwards per request when the edge is set to per-request, whatever the agent supports', async () => {
    const edge = await setUp({ edge: { http1Forwarding: 'per-request' } });
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    for (const path of ['/api/a', '/b']) expect((await get(edge.httpPort, 'app.test', path, agent)).status).to.equal(200);
    expect(edge.edge.metrics.streamsTotal).to.equal(2);
  });

  it('splices the plaintext of a connection the edge terminated TLS for, with X-Forwarded-Proto https', async () => {
    const certificate = selfSignedCertificate(['app.test']);
    const edge = await setUp({
      edge: {
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 }, https: { host: '127.0.0.1', port: 0 } },
        certificates: [{ hostnames: ['app.test'], ...certificate }],
      },
    });
    const port = edge.edge.address().https!.port;
    const tlsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 1, ca: certificate.cert, servername: 'app.test' });
    try {
      const replies: EchoReply[] = [];
      for (const path of ['/api/s1', '/s2', '/api/s3']) {
        const reply = await new Promise<Reply>((resolve, reject) => {
          const req = httpsRequest({ host: '127.0.0.1', port, path, agent: tlsAgent, servername: 'app.test', headers: { host: 'app.test' } }, (res) => collect(res).then(resolve, reject));
          req.once('error', reject);
          req.end();
        });
        expect(reply.status).to.equal(200);
        replies.push(echo(reply));
      }
      expect(replies.map((r) => `${r.backend} ${r.url}`)).to.deep.equal(['api /api/s1', 'web /s2', 'api /api/s3']);
      expect(replies[0]!.headers['x-forwarded-proto']).to.equal('https');
      expect(replies[0]!.headers['x-forwarded-port']).to.equal(String(port));
      expect(edge.edge.metrics.streamsTotal).to.equal(1);
    } finally {
      tlsAgent.destroy();
    }
  });

  it("answers 431 to a later request whose head is over the limit: the agent applies the edge's header limit", async () => {
    const edge = await setUp();
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await get(edge.httpPort, 'app.test', '/api/small', agent)).status).to.equal(200);
    const big = await get(edge.httpPort, 'app.test', '/api/big', agent, { 'x-big': 'a'.repeat(20_000) });
    expect(big.status).to.equal(431);
    expect(edge.edge.metrics.streamsTotal).to.equal(1);
    expect(backends[0]!.requests.map((r) => r.url)).to.deep.equal(['/api/small']);
  });

  it('upgrades a later request of a spliced connection to a WebSocket and relays frames', async () => {
    const edge = await setUp();
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await get(edge.httpPort, 'app.test', '/api/before', agent)).status).to.equal(200);
    const socket = await new Promise<Socket>((resolve, reject) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port: edge.httpPort,
        path: '/ws/chat',
        agent,
        headers: { host: 'app.test', connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' },
      });
      req.once('upgrade', (res, s: Socket, head: Buffer) => {
        expect(res.statusCode).to.equal(101);
        if (head.length > 0) s.unshift(head);
        resolve(s);
      });
      req.once('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
      req.once('error', reject);
      req.end();
    });
    try {
      socket.write(maskedTextFrame('spliced'));
      let frame = Buffer.alloc(0);
      for await (const chunk of socket) {
        frame = Buffer.concat([frame, chunk as Buffer]);
        if (frame.length >= 2 && frame.length >= 2 + (frame[1]! & 0x7f)) break;
      }
      expect(frame.subarray(2, 2 + (frame[1]! & 0x7f)).toString()).to.equal('echo spliced');
      expect(edge.edge.metrics.streamsTotal).to.equal(1);
    } finally {
      socket.destroy();
    }
  });

  it('ends an idle spliced keep-alive connection with a FIN when the agent drains', async () => {
    const edge = await setUp();
    const socket = connect({ host: '127.0.0.1', port: edge.httpPort });
    socket.write('GET /api/idle HTTP/1.1\r\nHost: app.test\r\n\r\n');
    let text = '';
    const ended = once(socket, 'end');
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.endsWith('}')) plane!.drainSpliced();
    });
    await ended;
    socket.destroy();
    expect(text).to.match(/^HTTP\/1\.1 200 /).and.contain('"url":"/api/idle"');
    expect(edge.edge.metrics.streamsTotal).to.equal(1);
  });

  it('ends an idle spliced keep-alive connection with a FIN when the edge drains (its GOAWAY), long before the drain timeout', async () => {
    // a drain timeout far past the test's own: only the agent ending the idle connection lets close() finish in time.
    const edge = await setUp({ drainTimeoutMs: 120_000 });
    const socket = connect({ host: '127.0.0.1', port: edge.httpPort });
    socket.write('GET /api/idle HTTP/1.1\r\nHost: app.test\r\n\r\n');
    let text = '';
    const ended = once(socket, 'end');
    let closing: Promise<void> | undefined;
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.endsWith('}')) closing ??= edge.edge.close();
    });
    await ended;
    socket.destroy();
    await closing;
    t = undefined;
    expect(text).to.match(/^HTTP\/1\.1 200 /);
    expect(edge.edge.metrics.streamsActive).to.equal(0);
  });
  it('answers the first request of a connection the agent began to drain as it accepted it, on that stream (Connection: close)', async () => {
    // the agent stops just as it takes the stream: the 200 is out, the head the edge holds is not in yet
    const edge = await setUp({
      handler: (p) => ({
        acceptsSplicedHttp1: true,
        handleStream: (stream, headers, context) => {
          p.handleStream(stream, headers, context);
          p.drainSpliced();
        },
      }),
    });
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const reply = await get(edge.httpPort, 'app.test', '/api/first', agent);
    expect(reply.status).to.equal(200);
    expect(echo(reply).url).to.equal('/api/first');
    expect(edge.edge.metrics.streamsTotal, 'served on the spliced stream itself').to.equal(1);
  });

  it("ends the spliced stream of a client that sent its request and its FIN before the agent took the connection, so the stream closes and is not held for the agent's keep-alive time", async () => {
    // The agent's 200 waits until the client's FIN has reached the edge: the edge holds the public
    // socket paused then, so that FIN is read with no 'end' listener (how a load run's clients
    // that left met a busy agent).
    let onClientFinished = (): void => undefined;
    const clientFinished = new Promise<void>((resolve) => (onClientFinished = resolve));
    const edge = await setUp({
      handler: (p) => ({
        acceptsSplicedHttp1: true,
        handleStream: (stream, headers, context) => {
          if (headers[':protocol'] !== 'tuna-http1') return p.handleStream(stream, headers, context);
          void clientFinished.then(async () => {
            // two turns of the event loop: the edge's poll phase has read the FIN since
            for (let i = 0; i < 2; i++) await new Promise<void>((r) => setImmediate(r));
            p.handleStream(stream, headers, context);
          });
        },
      }),
    });
    const client = connect(edge.httpPort, '127.0.0.1');
    client.on('error', () => undefined);
    client.resume();
    await once(client, 'connect');
    client.once('finish', onClientFinished);
    client.end('GET /api/left HTTP/1.1\r\nHost: app.test\r\n\r\n');
    const tunnels = edge.edge.registry.all();
    // a generous bound: without END_STREAM the agent kept the connection for its keep-alive time (75 s)
    await waitUntil(() => client.closed && edge.edge.metrics.streamsActive === 0 && tunnels.every((x) => x.activeStreams === 0), 10_000).catch(() => undefined);
    expect(edge.edge.metrics.streamsTotal, 'the request was spliced').to.equal(1);
    expect(edge.edge.metrics.streamsActive, 'tunnel streams still open at the edge').to.equal(0);
    expect(tunnels.map((x) => x.activeStreams), 'streams the tunnel counts in flight').to.deep.equal([0]);
    expect(client.closed, 'the edge closed the public connection').to.equal(true);
  });

  /** endsUnanswered stands in for an older agent that drained a spliced connection as it accepted it: 200, then END_STREAM. */
  const endsUnanswered = (p: DataPlane): TunnelStreamHandler => ({
    acceptsSplicedHttp1: true,
    handleStream: (stream, headers, context) => {
      if (headers[':protocol'] !== 'tuna-http1') return p.handleStream(stream, headers, context);
      stream.respond({ ':status': 200 });
      stream.resume();
      stream.end();
    },
  });

  it('serves per request a GET whose spliced stream the agent ended before a byte of answer', async () => {
    const edge = await setUp({ handler: endsUnanswered });
    const reply = await get(edge.httpPort, 'app.test', '/api/again', new Agent({ keepAlive: false }));
    expect(reply.status).to.equal(200);
    expect(echo(reply).url).to.equal('/api/again');
    expect(edge.edge.metrics.streamsTotal, 'the spliced stream, then one per request').to.equal(2);
  });

  it('answers 502 (no bare close) to a POST whose spliced stream the agent ended before a byte of answer, and sends it nowhere else', async () => {
    const edge = await setUp({ handler: endsUnanswered });
    const reply = await new Promise<Reply>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: edge.httpPort, path: '/api/post', method: 'POST', agent: false, headers: { host: 'app.test', 'content-length': '5' } }, (res) =>
        collect(res).then(resolve, reject),
      );
      req.once('error', reject);
      req.end('hello');
    });
    expect(reply).to.deep.equal({ status: 502, body: 'the tunnel failed before the service answered\n' });
    expect(backends[0]!.requests).to.deep.equal([]);
    expect(edge.edge.metrics.streamsTotal).to.equal(1);
  });
});
