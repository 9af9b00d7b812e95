import { expect } from 'chai';
import http2 from 'node:http2';
import type { ClientHttp2Stream, ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';
import { DataPlane, EndpointPicker, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { MirrorSender } from '../../src/dataplane/mirror.js';
import { Http1Client } from '../../src/dataplane/upstream-http1.js';
import type { ForwardPlan } from '../../src/dataplane/request-plan.js';
import type { HttpFilter, HttpRoute } from '../../src/model/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { startHttpBackend } from '../support/backend-servers.js';
import { SPLICED_HTTP1_PROTOCOL } from '../../src/wire/index.js';
import type { TestBackend } from '../support/backend-servers.js';

/**
 * How an exchange ends when something cuts it: the request and backend-request timeouts while
 * the body streams and during a retry's backoff, a client that leaves, an HTTP/2 backend's
 * stream, a response that cannot be sent, and the mirror's timeout. These are the paths of the
 * proxy's cancellation (http-proxy.ts) and of the upstream clients' abort handling.
 */
describe('data plane: cancellation, timeouts and failures mid-exchange', () => {
  const cleanups: (() => unknown)[] = [];
  let plane: DataPlane | undefined;
  let errors: unknown[] = [];

  afterEach(async () => {
    for (const c of cleanups.reverse()) await c();
    cleanups.length = 0;
    plane = undefined;
    errors = [];
  });

  async function backend(handler?: Parameters<typeof startHttpBackend>[1]): Promise<TestBackend> {
    const b = await startHttpBackend('b', handler);
    cleanups.push(() => b.close());
    return b;
  }

  async function serve(route: HttpRoute, port: number): Promise<TunnelHarness> {
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'b', 'http', [{ address: '127.0.0.1', port }]);
    const dp = new DataPlane({ endpoints, onError: (err) => errors.push(err) });
    plane = dp;
    cleanups.push(() => dp.close());
    dp.update(hostGraph([{ hostname: 'app.test', routes: [route] }]));
    const h = await startTunnelHarness(dp);
    cleanups.push(() => h.close());
    return h;
  }

  /** partial sends the headers and a first piece of the body, then nothing: the timeout must cut it. */
  const partial = (_req: unknown, res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('first piece;');
  };

  /**
   * cutResponse reads a response that must start (200, first piece) and then end in a reset, not a
   * clean end. A reset with CANCEL shows as 'end' on Node's client, so the stream's code decides.
   */
  function cutResponse(stream: ClientHttp2Stream): Promise<{ status: number; body: string; outcome: string }> {
    return new Promise((resolve) => {
      let status = 0;
      let body = '';
      stream.once('response', (h) => (status = Number(h[':status'])));
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (body += c));
      stream.on('error', () => undefined);
      stream.once('close', () => resolve({ status, body, outcome: stream.rstCode === http2.constants.NGHTTP2_NO_ERROR ? 'closed cleanly' : 'reset' }));
    });
  }

  for (const [kind, timeouts] of [
    ['request', { requestMs: 300 }],
    ['backendRequest', { backendRequestMs: 300 }],
  ] as const) {
    it(`resets the client's stream and closes the backend connection when the ${kind} timeout expires while the body streams`, async () => {
      let backendClosed!: () => void;
      const closed = new Promise<void>((resolve) => (backendClosed = resolve));
      const b = await backend((req, res) => {
        req.socket.once('close', () => backendClosed());
        partial(req, res);
      });
      const h = await serve(httpRoute('t', [serviceBackend('b')], { extra: { timeouts } }), b.port);
      const started = Date.now();
      const res = await cutResponse(h.client.request({ ':authority': 'app.test', ':path': '/' }));
      expect(res).to.deep.equal({ status: 200, body: 'first piece;', outcome: 'reset' });
      expect(Date.now() - started).to.be.at.least(250);
      await closed;
      expect(plane!.upstreamClients().http.openSockets()).to.equal(0);
    });
  }

  it('closes the backend connection when the client resets its stream while the body streams', async () => {
    let backendClosed!: () => void;
    const closed = new Promise<void>((resolve) => (backendClosed = resolve));
    let arrived!: () => void;
    const first = new Promise<void>((resolve) => (arrived = resolve));
    const b = await backend((req, res) => {
      req.socket.once('close', () => backendClosed());
      partial(req, res);
    });
    const h = await serve(httpRoute('t', [serviceBackend('b')]), b.port);
    const stream = h.client.request({ ':authority': 'app.test', ':path': '/' });
    stream.on('error', () => undefined);
    stream.once('data', () => arrived());
    await first;
    stream.close(http2.constants.NGHTTP2_CANCEL);
    await closed;
    expect(plane!.upstreamClients().http.openSockets()).to.equal(0);
  });

  it('answers 504 when the request timeout expires during a retry backoff, without another attempt', async () => {
    const b = await backend((req, res) => {
      req.resume();
      res.statusCode = 503;
      res.end('down');
    });
    const route = httpRoute('r', [serviceBackend('b')], { extra: { retry: { attempts: 3, codes: [503], backoffMs: 1_500 }, timeouts: { requestMs: 300 } } });
    const h = await serve(route, b.port);
    const started = Date.now();
    const res = await h.request({ ':path': '/' });
    expect([res.status, res.body]).to.deep.equal([504, 'request timeout of 300 ms expired\n']);
    expect(Date.now() - started).to.be.below(1_400);
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    expect(b.requests).to.have.length(1);
  });

  it('makes no further attempt once the client left during a retry backoff', async () => {
    let answered!: () => void;
    const firstAnswer = new Promise<void>((resolve) => (answered = resolve));
    const b = await backend((req, res) => {
      req.resume();
      res.statusCode = 503;
      res.end('down', () => answered());
    });
    const h = await serve(httpRoute('r', [serviceBackend('b')], { extra: { retry: { attempts: 3, codes: [503], backoffMs: 300 } } }), b.port);
    const stream = h.client.request({ ':authority': 'app.test', ':path': '/' });
    stream.on('error', () => undefined);
    await firstAnswer;
    await new Promise((resolve) => setTimeout(resolve, 50));
    stream.close(http2.constants.NGHTTP2_CANCEL);
    // the backoffs would have been 300, 600 and 1,200 ms
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    expect(b.requests).to.have.length(1);
  });

  it('retries on a reset connection (502) and answers from the next attempt', async () => {
    let calls = 0;
    const b = await backend((req, res) => {
      calls++;
      if (calls === 1) return void req.socket.destroy();
      req.resume();
      res.end(`call ${calls}`);
    });
    const h = await serve(httpRoute('r', [serviceBackend('b')], { extra: { retry: { attempts: 2, codes: [502], backoffMs: 1 } } }), b.port);
    const res = await h.request({ ':path': '/' });
    expect([res.status, res.body]).to.deep.equal([200, 'call 2']);
  });

  describe('an h2c backend', () => {
    async function h2Backend(onStream: (stream: ServerHttp2Stream) => void): Promise<number> {
      const server = http2.createServer();
      server.on('stream', onStream);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      cleanups.push(() => new Promise((r) => server.close(r)));
      cleanups.push(() => {
        for (const s of sessions) s.destroy();
      });
      const sessions: http2.ServerHttp2Session[] = [];
      server.on('session', (s) => sessions.push(s));
      return (server.address() as AddressInfo).port;
    }

    it("cancels the backend's stream (RST_STREAM CANCEL) when the client resets before the answer", async () => {
      let reset!: (code: number) => void;
      const backendReset = new Promise<number>((resolve) => (reset = resolve));
      let arrived!: () => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      const port = await h2Backend((stream) => {
        stream.on('error', () => undefined);
        stream.once('close', () => reset(stream.rstCode));
        arrived();
      });
      const h = await serve(httpRoute('t', [serviceBackend('b', { protocol: 'h2c' })]), port);
      const stream = h.client.request({ ':authority': 'app.test', ':path': '/' });
      stream.on('error', () => undefined);
      await arrival;
      stream.close(http2.constants.NGHTTP2_CANCEL);
      expect(await backendReset).to.equal(http2.constants.NGHTTP2_CANCEL);
    });

    it('answers 504 when the backend request timeout expires, and cancels its stream', async () => {
      let reset!: (code: number) => void;
      const backendReset = new Promise<number>((resolve) => (reset = resolve));
      const port = await h2Backend((stream) => {
        stream.on('error', () => undefined);
        stream.once('close', () => reset(stream.rstCode));
      });
      const h = await serve(httpRoute('t', [serviceBackend('b', { protocol: 'h2c' })], { extra: { timeouts: { backendRequestMs: 200 } } }), port);
      const res = await h.request({ ':path': '/' });
      expect([res.status, res.body]).to.deep.equal([504, 'backendRequest timeout of 200 ms expired\n']);
      expect(await backendReset).to.equal(http2.constants.NGHTTP2_CANCEL);
    });

    it('resets the client stream when the request timeout expires while the body streams', async () => {
      const port = await h2Backend((stream) => {
        stream.on('error', () => undefined);
        stream.respond({ ':status': 200 });
        stream.write('first piece;');
      });
      const h = await serve(httpRoute('t', [serviceBackend('b', { protocol: 'h2c' })], { extra: { timeouts: { requestMs: 300 } } }), port);
      const res = await cutResponse(h.client.request({ ':authority': 'app.test', ':path': '/' }));
      expect(res).to.deep.equal({ status: 200, body: 'first piece;', outcome: 'reset' });
    });

    it('answers 502 when the backend resets the stream before answering', async () => {
      const port = await h2Backend((stream) => {
        stream.on('error', () => undefined);
        stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      });
      const h = await serve(httpRoute('t', [serviceBackend('b', { protocol: 'h2c' })]), port);
      const res = await h.request({ ':path': '/' });
      expect(res.status).to.equal(502);
      expect(res.body).to.match(/^backend 127\.0\.0\.1:\d+ failed/);
    });
  });

  describe('an HTTP/1.1 client on a spliced connection', () => {
    /** spliced opens a spliced HTTP/1.1 connection on the harness as an edge would, and sends one GET on it. */
    function spliced(h: TunnelHarness): { stream: ClientHttp2Stream; received: () => string; closed: Promise<number> } {
      const stream = h.client.request({ ':method': 'CONNECT', ':protocol': SPLICED_HTTP1_PROTOCOL, ':scheme': 'http', ':path': '/', ':authority': 'app.test' }, { endStream: false });
      let text = '';
      stream.setEncoding('latin1');
      stream.on('data', (c: string) => (text += c));
      stream.on('error', () => undefined);
      const closed = new Promise<number>((resolve) => stream.once('close', () => resolve(stream.rstCode ?? 0)));
      stream.write('GET / HTTP/1.1\r\nHost: app.test\r\n\r\n');
      return { stream, received: () => text, closed };
    }

    it('aborts the backend request when the client leaves before the answer', async () => {
      let backendClosed!: () => void;
      const closed = new Promise<void>((resolve) => (backendClosed = resolve));
      let arrived!: () => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      const b = await backend((req) => {
        req.socket.once('close', () => backendClosed());
        arrived();
      });
      const h = await serve(httpRoute('t', [serviceBackend('b')]), b.port);
      const { stream } = spliced(h);
      await arrival;
      stream.close(http2.constants.NGHTTP2_CANCEL);
      await closed;
      for (let i = 0; i < 50 && plane!.upstreamClients().http.openSockets() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(plane!.upstreamClients().http.openSockets()).to.equal(0);
    });

    it('cuts the connection without the last chunk when the request timeout expires while the body streams', async () => {
      const b = await backend(partial);
      const h = await serve(httpRoute('t', [serviceBackend('b')], { extra: { timeouts: { requestMs: 300 } } }), b.port);
      const { received, closed } = spliced(h);
      const code = await closed;
      expect(received()).to.match(/^HTTP\/1\.1 200 OK\r\n/);
      expect(received()).to.contain('first piece;');
      expect(received()).to.not.contain('\r\n0\r\n\r\n');
      expect(code).to.not.equal(http2.constants.NGHTTP2_NO_ERROR);
    });

    it('answers a request timeout before the answer with 504 and serves the next request on the connection', async () => {
      let calls = 0;
      const b = await backend((req, res) => {
        req.resume();
        if (++calls === 1) return; // the first request never gets an answer
        res.end('second');
      });
      const h = await serve(httpRoute('t', [serviceBackend('b')], { extra: { timeouts: { requestMs: 200 } } }), b.port);
      const { stream, received } = spliced(h);
      for (let i = 0; i < 100 && !received().includes('request timeout'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(received()).to.match(/^HTTP\/1\.1 504 /);
      stream.write('GET / HTTP/1.1\r\nHost: app.test\r\n\r\n');
      for (let i = 0; i < 100 && !received().endsWith('second'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(received()).to.match(/HTTP\/1\.1 200 OK[\s\S]*second$/);
    });
  });

  it('answers 502 and reports the error when the response cannot be sent, and keeps serving', async () => {
    const b = await backend();
    // HTTP/2 refuses a connection-specific header in a response: the tunnel stream's respond() throws.
    const bad: HttpFilter = { type: 'ResponseHeaderModifier', set: [{ name: 'Connection', value: 'close' }], add: [], remove: [] };
    const good = httpRoute('good', [serviceBackend('b')], { match: { path: { type: 'Prefix', value: '/good' } } });
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'b', 'http', [{ address: '127.0.0.1', port: b.port }]);
    const dp = new DataPlane({ endpoints, onError: (err) => errors.push(err) });
    cleanups.push(() => dp.close());
    dp.update(hostGraph([{ hostname: 'app.test', routes: [good, httpRoute('bad', [serviceBackend('b')], { filters: [bad] })] }]));
    const h = await startTunnelHarness(dp);
    cleanups.push(() => h.close());
    const res = await h.request({ ':path': '/bad' });
    expect([res.status, res.body]).to.deep.equal([502, 'proxy error\n']);
    expect(errors).to.have.length(1);
    expect(String(errors[0])).to.contain('ERR_HTTP2_INVALID_CONNECTION_HEADERS');
    expect((await h.request({ ':path': '/good' })).status).to.equal(200);
  });

  it('releases the backend connection of a response that could not be sent', async () => {
    const b = await backend((req, res) => {
      req.resume();
      res.writeHead(200);
      res.write('never ends');
    });
    const bad: HttpFilter = { type: 'ResponseHeaderModifier', set: [{ name: 'Connection', value: 'close' }], add: [], remove: [] };
    const h = await serve(httpRoute('bad', [serviceBackend('b')], { filters: [bad] }), b.port);
    expect((await h.request({ ':path': '/' })).status).to.equal(502);
    for (let i = 0; i < 50 && plane!.upstreamClients().http.openSockets() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(plane!.upstreamClients().http.openSockets()).to.equal(0);
  });

  it('cancels a mirrored request after the mirror timeout and counts it finished', async () => {
    let backendClosed!: () => void;
    const closed = new Promise<void>((resolve) => (backendClosed = resolve));
    const hang = await backend((req) => req.socket.once('close', () => backendClosed()));
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'm', 'http', [{ address: '127.0.0.1', port: hang.port }]);
    const client = new Http1Client();
    cleanups.push(() => client.close());
    const mirror = new MirrorSender(endpoints, new EndpointPicker(), () => client, () => 0, { timeoutMs: 200 });
    const plan: ForwardPlan = { kind: 'forward', method: 'GET', authority: 'app.test', target: '/m', headers: {}, responseModifiers: [], cors: undefined, origin: undefined, mirrors: [], externalAuth: undefined };
    const started = Date.now();
    mirror.send({ type: 'RequestMirror', backend: serviceBackend('m'), percent: 100 }, plan, undefined);
    expect(mirror.inFlightCount()).to.equal(1);
    await closed;
    expect(Date.now() - started).to.be.at.least(150);
    for (let i = 0; i < 50 && (mirror.inFlightCount() > 0 || client.openSockets() > 0); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(mirror.inFlightCount()).to.equal(0);
    expect(client.openSockets()).to.equal(0);
  });
});
