import { expect } from 'chai';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { Backend, HttpFilter, HttpRoute } from '../../src/model/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { seededRandom } from '../support/backend-random.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';

describe('data plane: filters, weights, timeouts and retries', () => {
  let backends: TestBackend[] = [];
  let harness: TunnelHarness | undefined;
  let plane: DataPlane | undefined;
  let endpoints: StaticEndpointResolver;

  /** serve publishes one route at `/` of app.test over the given backends. */
  async function serve(route: HttpRoute, named: Record<string, TestBackend> = {}): Promise<TunnelHarness> {
    endpoints = new StaticEndpointResolver();
    for (const [name, b] of Object.entries(named)) endpoints.set('default', name, 'http', [{ address: '127.0.0.1', port: b.port }]);
    plane = new DataPlane({ endpoints, random: seededRandom(7) });
    plane.update(hostGraph([{ hostname: 'app.test', routes: [route] }]));
    harness = await startTunnelHarness(plane);
    return harness;
  }

  async function echo(name: string): Promise<TestBackend> {
    const b = await startHttpBackend(name);
    backends.push(b);
    return b;
  }

  const withFilters = (filters: HttpFilter[], backendList: Backend[] = [serviceBackend('echo')]) =>
    httpRoute('r', backendList, { filters, match: { path: { type: 'Prefix', value: '/old' } } });

  afterEach(async () => {
    await harness?.close();
    plane?.close();
    await Promise.all(backends.map((b) => b.close()));
    backends = [];
    harness = undefined;
  });

  it('modifies request headers: set, add and remove', async () => {
    const h = await serve(
      withFilters([{ type: 'RequestHeaderModifier', set: [{ name: 'X-Set', value: 's' }], add: [{ name: 'X-Add', value: 'b' }], remove: ['x-drop'] }]),
      { echo: await echo('echo') },
    );
    const res = await h.request({ ':path': '/old', 'x-add': 'a', 'x-drop': 'd', 'x-set': 'old' });
    const seen = (JSON.parse(res.body) as EchoReply).headers;
    expect(seen['x-set']).to.equal('s');
    expect(seen['x-add']).to.equal('a,b');
    expect(seen['x-drop']).to.equal(undefined);
  });

  it('modifies response headers', async () => {
    const h = await serve(withFilters([{ type: 'ResponseHeaderModifier', set: [{ name: 'content-type', value: 'text/x-test' }], add: [{ name: 'x-via', value: 'tuna' }], remove: [] }]), {
      echo: await echo('echo'),
    });
    const res = await h.request({ ':path': '/old' });
    expect(res.headers['content-type']).to.equal('text/x-test');
    expect(res.headers['x-via']).to.equal('tuna');
  });

  it('redirects without contacting a backend', async () => {
    const b = await echo('echo');
    const h = await serve(withFilters([{ type: 'RequestRedirect', scheme: 'https', statusCode: 301, path: { type: 'ReplacePrefixMatch', matchedPrefix: '/old', value: '/new' } }]), { echo: b });
    const res = await h.request({ ':path': '/old/page?x=1' });
    expect(res.status).to.equal(301);
    expect(res.headers.location).to.equal('https://app.test/new/page?x=1');
    expect(b.requests).to.have.length(0);
  });

  it('rewrites the host and the matched prefix before forwarding', async () => {
    const h = await serve(withFilters([{ type: 'URLRewrite', hostname: 'internal.test', path: { type: 'ReplacePrefixMatch', matchedPrefix: '/old', value: '/v2' } }]), {
      echo: await echo('echo'),
    });
    const seen = JSON.parse((await h.request({ ':path': '/old/items?id=3' })).body) as EchoReply;
    expect(seen.url).to.equal('/v2/items?id=3');
    expect(seen.headers.host).to.equal('internal.test');
  });

  it('mirrors requests to a second backend and answers from the first', async () => {
    const main = await echo('main');
    const shadow = await echo('shadow');
    const h = await serve(withFilters([{ type: 'RequestMirror', backend: serviceBackend('shadow'), percent: 100 }], [serviceBackend('main')]), { main, shadow });
    const res = await h.request({ ':method': 'POST', ':path': '/old/m' }, 'payload');
    expect((JSON.parse(res.body) as EchoReply).backend).to.equal('main');
    for (let i = 0; i < 50 && shadow.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(shadow.requests.map((r) => r.url)).to.deep.equal(['/old/m']);
  });

  it('keeps answering when the mirror backend is down', async () => {
    const main = await echo('main');
    const h = await serve(withFilters([{ type: 'RequestMirror', backend: serviceBackend('nowhere'), percent: 100 }], [serviceBackend('main')]), { main });
    expect((await h.request({ ':path': '/old' })).status).to.equal(200);
  });

  it('answers a CORS preflight itself and decorates simple responses', async () => {
    const b = await echo('echo');
    const cors: HttpFilter = {
      type: 'CORS',
      allowOrigins: ['https://site.test'],
      allowMethods: ['GET', 'PUT'],
      allowHeaders: ['x-token'],
      exposeHeaders: ['x-id'],
      allowCredentials: false,
      maxAgeSeconds: 60,
    };
    const h = await serve(withFilters([cors]), { echo: b });
    const pre = await h.request({ ':method': 'OPTIONS', ':path': '/old', origin: 'https://site.test', 'access-control-request-method': 'PUT' });
    expect(pre.status).to.equal(204);
    expect(pre.headers['access-control-allow-methods']).to.equal('GET, PUT');
    expect(pre.headers['access-control-expose-headers']).to.equal('x-id'); // conformance HTTPRouteCORS expects it on preflights
    expect(b.requests).to.have.length(0);
    const simple = await h.request({ ':path': '/old', origin: 'https://site.test' });
    expect(simple.headers['access-control-allow-origin']).to.equal('https://site.test');
    expect(simple.headers['access-control-expose-headers']).to.equal('x-id');
    const refused = await h.request({ ':path': '/old', origin: 'https://evil.test' });
    expect(refused.headers['access-control-allow-origin']).to.equal(undefined);
  });

  it('answers a DirectResponse with its status and body', async () => {
    const h = await serve(withFilters([{ type: 'DirectResponse', statusCode: 418, body: 'short and stout' }]));
    const res = await h.request({ ':path': '/old' });
    expect([res.status, res.body]).to.deep.equal([418, 'short and stout']);
  });

  it('splits traffic by weight (seeded generator, 400 requests)', async () => {
    const a = await echo('a');
    const b = await echo('b');
    const h = await serve(httpRoute('w', [serviceBackend('a', { weight: 1 }), serviceBackend('b', { weight: 3 })]), { a, b });
    const counts: Record<string, number> = { a: 0, b: 0 };
    for (let i = 0; i < 400; i++) counts[(JSON.parse((await h.request({ ':path': '/' })).body) as EchoReply).backend]!++;
    expect(counts.a! + counts.b!).to.equal(400);
    expect(counts.a).to.be.within(70, 130);
    expect(counts.b).to.be.within(270, 330);
  });

  it('answers an unavailable backend with its status code', async () => {
    const h = await serve(httpRoute('u', [{ kind: 'unavailable', weight: 1, statusCode: 500, reason: 'BackendNotFound' }]));
    const res = await h.request({ ':path': '/' });
    expect(res.status).to.equal(500);
    expect(res.body).not.to.contain('BackendNotFound');
  });

  it('answers 504 when the backend request timeout expires', async () => {
    const slow = await startHttpBackend('slow', (_req, res) => setTimeout(() => res.end('late'), 2_000));
    backends.push(slow);
    const h = await serve(httpRoute('t', [serviceBackend('slow')], { extra: { timeouts: { backendRequestMs: 100 } } }), { slow });
    const res = await h.request({ ':path': '/' });
    expect(res.status).to.equal(504);
    expect(res.body).to.contain('backendRequest timeout');
  });

  it('answers 504 when the request timeout expires', async () => {
    const slow = await startHttpBackend('slow', (_req, res) => setTimeout(() => res.end('late'), 2_000));
    backends.push(slow);
    const h = await serve(httpRoute('t', [serviceBackend('slow')], { extra: { timeouts: { requestMs: 100 } } }), { slow });
    expect((await h.request({ ':path': '/' })).status).to.equal(504);
  });

  it('waits for a slow backend when a timeout is 0 (a zero duration disables it; conformance HTTPRouteTimeoutRequest/BackendRequest)', async () => {
    const slow = await startHttpBackend('slow', (_req, res) => setTimeout(() => res.end('late'), 300));
    backends.push(slow);
    const h = await serve(httpRoute('t', [serviceBackend('slow')], { extra: { timeouts: { requestMs: 0, backendRequestMs: 0 } } }), { slow });
    const res = await h.request({ ':path': '/' });
    expect([res.status, res.body]).to.deep.equal([200, 'late']);
  });

  it('retries an idempotent request on a listed code, a bounded number of times', async () => {
    let calls = 0;
    const flaky = await startHttpBackend('flaky', (_req, res) => {
      calls++;
      res.statusCode = calls < 3 ? 503 : 200;
      res.end(`call ${calls}`);
    });
    backends.push(flaky);
    const h = await serve(httpRoute('r', [serviceBackend('flaky')], { extra: { retry: { attempts: 3, codes: [503], backoffMs: 1 } } }), { flaky });
    const res = await h.request({ ':path': '/' });
    expect([res.status, res.body]).to.deep.equal([200, 'call 3']);
  });

  it('gives up after the configured attempts and forwards the last answer', async () => {
    const down = await startHttpBackend('down', (_req, res) => {
      res.statusCode = 503;
      res.end('down');
    });
    backends.push(down);
    const h = await serve(httpRoute('r', [serviceBackend('down')], { extra: { retry: { attempts: 2, codes: [503], backoffMs: 1 } } }), { down });
    const res = await h.request({ ':path': '/' });
    expect(res.status).to.equal(503);
    expect(down.requests).to.have.length(3);
  });

  it('never retries a POST', async () => {
    const down = await startHttpBackend('down', (req, res) => {
      req.resume();
      res.statusCode = 503;
      res.end('down');
    });
    backends.push(down);
    const h = await serve(httpRoute('r', [serviceBackend('down')], { extra: { retry: { attempts: 3, codes: [503], backoffMs: 1 } } }), { down });
    expect((await h.request({ ':method': 'POST', ':path': '/' }, 'x')).status).to.equal(503);
    expect(down.requests).to.have.length(1);
  });
});
