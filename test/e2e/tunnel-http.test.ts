import { expect } from 'chai';
import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { ClientHttp2Session } from 'node:http2';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { h2, h2Connect, http1, openSession, startTestEdge } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const APP = 'binding/host/app.test';
const OTHER = 'binding/host/other.test';

describe('tunnel: public HTTP through a tunnel', () => {
  let t: TestEdge;
  let session: TunnelSession;
  let handler: TestStreamHandler;
  let client: ClientHttp2Session | undefined;
  let agent: Agent | undefined;

  beforeEach(async () => {
    t = await startTestEdge(
      [
        { id: APP, kind: 'host', hostnames: ['app.test', '*.wild.test'] },
        { id: OTHER, kind: 'host', hostnames: ['other.test'] },
      ],
      { limits: { tunnelWaitMs: 0 } },
    );
    handler = new TestStreamHandler();
    session = await openSession(t, APP, handler);
  });

  afterEach(async () => {
    client?.destroy();
    client = undefined;
    agent?.destroy();
    agent = undefined;
    session.destroy();
    await t.edge.close();
  });

  it('relays an HTTP/1.1 request with forwarded headers and the stream context', async () => {
    const res = await http1(t.httpPort, 'app.test', '/hello?x=1', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(res.status).to.equal(200);
    const body = JSON.parse(res.body.toString()) as { headers: Record<string, string>; context: Record<string, unknown> };
    expect(body.headers[':authority']).to.equal('app.test');
    expect(body.headers[':path']).to.equal('/hello?x=1');
    expect(body.headers['x-forwarded-for']).to.equal('203.0.113.9, 127.0.0.1');
    expect(body.headers['x-forwarded-proto']).to.equal('http');
    expect(body.headers['x-forwarded-host']).to.equal('app.test');
    expect(body.headers['x-forwarded-port']).to.equal(String(t.httpPort));
    expect(body.headers['x-request-id']).to.be.a('string').and.not.equal('');
    // tunnel headers are stripped before the handler sees the stream
    expect(Object.keys(body.headers).filter((k) => k.startsWith('tuna-'))).to.deep.equal([]);
    expect(body.context).to.deep.include({ bindingId: APP, publicPort: t.httpPort, publicProtocol: 'http', clientAddress: '127.0.0.1' });
    expect(body.context.requestId).to.equal(body.headers['x-request-id']);
  });

  it('drops client-sent tuna-* headers so a client cannot forge the stream context', async () => {
    const res = await http1(t.httpPort, 'app.test', '/', { headers: { 'tuna-client-address': '10.0.0.1', 'tuna-public-port': '1' } });
    const body = JSON.parse(res.body.toString()) as { context: { clientAddress: string; publicPort: number } };
    expect(body.context.clientAddress).to.equal('127.0.0.1');
    expect(body.context.publicPort).to.equal(t.httpPort);
  });

  it('routes a wildcard hostname to its binding', async () => {
    const res = await http1(t.httpPort, 'x.wild.test', '/');
    expect(res.status).to.equal(200);
  });

  it('keeps an HTTP/1.1 connection alive across requests', async () => {
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const ports = new Set<number>();
    for (let i = 0; i < 5; i++) {
      const res = await http1(t.httpPort, 'app.test', '/echo', { method: 'POST', body: `payload ${i}`, agent });
      expect(res.body.toString()).to.equal(`payload ${i}`);
    }
    for (const sockets of Object.values(agent.freeSockets)) for (const s of sockets ?? []) ports.add(s.localPort ?? 0);
    expect(ports.size).to.equal(1);
    expect(t.edge.metrics.publicConnections).to.equal(1);
  });

  it('relays h2c requests, including streamed bodies and response trailers', async () => {
    client = h2Connect(t.httpPort);
    const res = await h2(client, { ':method': 'POST', ':path': '/echo', ':authority': 'app.test' }, 'h2 body');
    expect(res.headers[':status']).to.equal(200);
    expect(res.body.toString()).to.equal('h2 body');
    const withTrailers = await h2(client, { ':path': '/trailers', ':authority': 'app.test' });
    expect(withTrailers.body.toString()).to.equal('body');
    expect(withTrailers.trailers?.['x-checksum']).to.equal('abc123');
  });

  it('passes response trailers to a chunked HTTP/1.1 response', async () => {
    const res = await http1(t.httpPort, 'app.test', '/trailers');
    expect(res.body.toString()).to.equal('body');
    expect(res.trailers['x-checksum']).to.equal('abc123');
  });

  it('streams server-sent events to an HTTP/1.1 client as they are written', async () => {
    const req = httpRequest({ host: '127.0.0.1', port: t.httpPort, path: '/events', headers: { host: 'app.test' }, agent: false });
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    const [first] = (await once(res, 'data')) as [Buffer];
    expect(first.toString()).to.equal('data: one\n\n');
    handler.releaseEvents();
    let rest = '';
    for await (const chunk of res) rest += String(chunk);
    expect(rest).to.equal('data: two\n\n');
  });

  it('answers 404 with a short body for an unknown host', async () => {
    const res = await http1(t.httpPort, 'nobody.test', '/');
    expect(res.status).to.equal(404);
    expect(res.body.toString()).to.equal('unknown host\n');
    client = h2Connect(t.httpPort);
    const res2 = await h2(client, { ':path': '/', ':authority': 'nobody.test' });
    expect(res2.headers[':status']).to.equal(404);
  });

  it('answers 503 saying no tunnel is connected for a binding without a live tunnel', async () => {
    const res = await http1(t.httpPort, 'other.test', '/');
    expect(res.status).to.equal(503);
    expect(res.body.toString()).to.match(/no tunnel is connected/);
  });

  it('serves /healthz and Prometheus /metrics on the tunnel listener', async () => {
    await http1(t.httpPort, 'app.test', '/');
    const health = await http1(t.endpoint.port, 'edge', '/healthz');
    expect(health.status).to.equal(200);
    const metrics = await http1(t.endpoint.port, 'edge', '/metrics');
    const text = metrics.body.toString();
    expect(text).to.include(`tuna_edge_tunnels{binding="${APP}"} 1`);
    expect(text).to.match(/tuna_edge_requests_total\{code="200"\} [1-9]/);
    expect(text).to.match(/tuna_edge_tunnel_bytes_total\{direction="in"\} [1-9]/);
    expect(text).to.include('tuna_edge_tunnel_handshakes_total{result="granted"} 1');
  });
});
