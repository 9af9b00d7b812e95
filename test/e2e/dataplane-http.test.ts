import { expect } from 'chai';
import { constants as h2constants } from 'node:http2';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';

describe('data plane: HTTP/1.1 proxy', () => {
  let backends: TestBackend[] = [];
  let harness: TunnelHarness | undefined;
  let plane: DataPlane | undefined;
  let endpoints: StaticEndpointResolver;

  async function setUp(): Promise<TunnelHarness> {
    const api = await startHttpBackend('api');
    const web = await startHttpBackend('web');
    backends.push(api, web);
    endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'api', 'http', [{ address: '127.0.0.1', port: api.port }]);
    endpoints.set('default', 'web', 'http', [{ address: '127.0.0.1', port: web.port }]);
    plane = new DataPlane({ endpoints });
    plane.update(
      hostGraph([
        {
          hostname: 'app.test',
          routes: [
            httpRoute('api', [serviceBackend('api')], { match: { path: { type: 'Prefix', value: '/api' } } }),
            httpRoute('web', [serviceBackend('web')]),
            httpRoute('empty', [serviceBackend('nobody')], { match: { path: { type: 'Prefix', value: '/empty' } } }),
            httpRoute('refused', [serviceBackend('refused')], { match: { path: { type: 'Prefix', value: '/refused' } } }),
          ],
        },
      ]),
    );
    harness = await startTunnelHarness(plane);
    return harness;
  }

  afterEach(async () => {
    await harness?.close();
    plane?.close();
    await Promise.all(backends.map((b) => b.close()));
    backends = [];
    harness = undefined;
  });

  it('routes /api and / to different Services', async () => {
    const h = await setUp();
    const api = await h.request({ ':path': '/api/users?x=1' });
    const web = await h.request({ ':path': '/index.html' });
    expect(api.status).to.equal(200);
    expect((JSON.parse(api.body) as EchoReply).backend).to.equal('api');
    expect((JSON.parse(api.body) as EchoReply).url).to.equal('/api/users?x=1');
    expect((JSON.parse(web.body) as EchoReply).backend).to.equal('web');
  });

  it('aborts the backend request when the client resets its stream before the answer', async () => {
    let arrived!: () => void;
    let backendClosed!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    const closure = new Promise<void>((resolve) => (backendClosed = resolve));
    // a backend that never answers and reports when its request's connection goes away
    const hang = await startHttpBackend('hang', (req) => {
      // Node's server keeps a half-closed socket open for the answer: the agent's FIN shows as 'end'
      req.socket.once('end', () => backendClosed());
      req.socket.once('close', () => backendClosed());
      arrived();
    });
    backends.push(hang);
    endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'hang', 'http', [{ address: '127.0.0.1', port: hang.port }]);
    plane = new DataPlane({ endpoints });
    plane.update(hostGraph([{ hostname: 'app.test', routes: [httpRoute('hang', [serviceBackend('hang')])] }]));
    harness = await startTunnelHarness(plane);
    const stream = harness.client.request({ ':authority': 'app.test', ':path': '/' });
    stream.on('error', () => undefined);
    await arrival;
    stream.close(h2constants.NGHTTP2_CANCEL);
    const outcome = await Promise.race([closure.then(() => 'aborted'), new Promise((resolve) => setTimeout(resolve, 5000, 'still open after 5 s'))]);
    expect(outcome).to.equal('aborted');
    expect(plane.upstreamClients().http.openSockets()).to.equal(0);
  });

  it('reuses one keep-alive connection to the backend for sequential requests', async () => {
    const h = await setUp();
    for (let i = 0; i < 5; i++) expect((await h.request({ ':path': '/api' })).status).to.equal(200);
    const ports = new Set(backends[0]!.requests.map((r) => r.remotePort));
    expect(backends[0]!.requests).to.have.length(5);
    expect(ports.size).to.equal(1);
  });

  it('keeps backend connections alive across waves of concurrent requests instead of opening new ones', async () => {
    const h = await setUp();
    for (let wave = 0; wave < 5; wave++) {
      const answers = await Promise.all(Array.from({ length: 40 }, () => h.request({ ':path': '/api' })));
      expect(answers.every((a) => a.status === 200)).to.equal(true);
    }
    const ports = new Set(backends[0]!.requests.map((r) => r.remotePort));
    expect(backends[0]!.requests).to.have.length(200);
    expect(ports.size).to.be.at.most(40);
  });

  it('appends the client address to X-Forwarded-For and sets X-Forwarded-Proto and -Host', async () => {
    const h = await setUp();
    const res = await h.request({ ':path': '/api', 'x-forwarded-for': '198.51.100.1' });
    const seen = (JSON.parse(res.body) as EchoReply).headers;
    expect(seen['x-forwarded-for']).to.equal('198.51.100.1, 203.0.113.7');
    expect(seen['x-forwarded-proto']).to.equal('http');
    expect(seen['x-forwarded-host']).to.equal('app.test');
    expect(seen.host).to.equal('app.test');
  });

  it('does not repeat the client address the edge already appended', async () => {
    const h = await setUp();
    const res = await h.request({ ':path': '/api', 'x-forwarded-for': '198.51.100.1, 203.0.113.7' });
    expect((JSON.parse(res.body) as EchoReply).headers['x-forwarded-for']).to.equal('198.51.100.1, 203.0.113.7');
  });

  it('removes hop-by-hop response headers, including those named in Connection', async () => {
    const backend = await startHttpBackend('hop', (req, res) => {
      res.setHeader('connection', 'x-secret-hop, keep-alive');
      res.setHeader('x-secret-hop', 'leak');
      res.setHeader('keep-alive', 'timeout=5');
      res.setHeader('x-seen', JSON.stringify(req.headers));
      res.end('ok');
    });
    backends.push(backend);
    const h = await setUp();
    endpoints.set('default', 'web', 'http', [{ address: '127.0.0.1', port: backend.port }]);
    // (HTTP/2 itself forbids connection-specific request headers; the request side is covered by
    // the HTTP/1.1-inside-TLS test and the unit tests of stripHopByHop.)
    const res = await h.request({ ':path': '/', 'x-keep': 'yes' });
    const seen = JSON.parse(String(res.headers['x-seen'])) as Record<string, string>;
    expect(res.status).to.equal(200);
    expect(seen['x-keep']).to.equal('yes');
    expect(res.headers['x-secret-hop']).to.equal(undefined);
    expect(res.headers['keep-alive']).to.equal(undefined);
    expect(res.headers.connection).to.equal(undefined);
  });

  it('answers 404 with a short body for an unknown host', async () => {
    const h = await setUp();
    const res = await h.request({ ':authority': 'other.test', ':path': '/' });
    expect(res.status).to.equal(404);
    expect(res.body).to.contain('no route for host other.test');
  });

  it('answers 503 saying so when the Service has no ready endpoint', async () => {
    const h = await setUp();
    const res = await h.request({ ':path': '/empty' });
    expect(res.status).to.equal(503);
    expect(res.body).to.contain('no ready endpoint for service default/nobody');
  });

  it('answers 502 when the backend refuses the connection', async () => {
    const h = await setUp();
    const closed = await startHttpBackend('gone');
    const port = closed.port;
    await closed.close();
    endpoints.set('default', 'refused', 'http', [{ address: '127.0.0.1', port }]);
    const res = await h.request({ ':path': '/refused' });
    expect(res.status).to.equal(502);
    expect(res.body).to.contain('ECONNREFUSED');
  });

  it('answers 502 when the backend resets the connection before answering', async () => {
    const reset = await startHttpBackend('reset', (req) => req.socket.destroy());
    backends.push(reset);
    const h = await setUp();
    endpoints.set('default', 'refused', 'http', [{ address: '127.0.0.1', port: reset.port }]);
    const res = await h.request({ ':path': '/refused' });
    expect(res.status).to.equal(502);
  });

  it('answers 400 to a malformed request target while other streams on the tunnel continue', async () => {
    const slow = await startHttpBackend('slow', (_req, res) => setTimeout(() => res.end('slow done'), 50));
    backends.push(slow);
    const h = await setUp();
    endpoints.set('default', 'web', 'http', [{ address: '127.0.0.1', port: slow.port }]);
    const pending = h.request({ ':path': '/slow' });
    // Both pass HTTP/2 framing checks; a fragment in a target and a non-numeric port do not pass ours.
    const bad = await h.request({ ':path': '/a#fragment' });
    const badHost = await h.request({ ':authority': 'app.test:http', ':path': '/' });
    const badPort = await h.request({ ':authority': 'app.test:99999', ':path': '/' });
    expect([bad.status, badHost.status, badPort.status]).to.deep.equal([400, 400, 400]);
    expect(badHost.body).to.contain('Host');
    expect((await pending).body).to.equal('slow done');
    expect((await h.request({ ':path': '/api' })).status).to.equal(200);
  });

  it('streams a request body to the backend and the backend body back', async () => {
    const echo = await startHttpBackend('echo', (req, res) => {
      res.setHeader('content-type', 'application/octet-stream');
      req.pipe(res);
    });
    backends.push(echo);
    const h = await setUp();
    endpoints.set('default', 'web', 'http', [{ address: '127.0.0.1', port: echo.port }]);
    const payload = 'x'.repeat(300_000);
    const res = await h.request({ ':method': 'POST', ':path': '/upload' }, payload);
    expect(res.status).to.equal(200);
    expect(res.body).to.equal(payload);
  });

  it('forwards HTTP/1.1 response trailers as HTTP/2 trailers', async () => {
    const t = await startHttpBackend('trailers', (_req, res) => {
      res.writeHead(200, { trailer: 'x-checksum', 'transfer-encoding': 'chunked' });
      res.write('body');
      res.addTrailers({ 'x-checksum': 'abc123' });
      res.end();
    });
    backends.push(t);
    const h = await setUp();
    endpoints.set('default', 'web', 'http', [{ address: '127.0.0.1', port: t.port }]);
    const res = await h.request({ ':path': '/' });
    expect(res.body).to.equal('body');
    expect(res.trailers?.['x-checksum']).to.equal('abc123');
  });
});
