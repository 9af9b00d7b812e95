import { expect } from 'chai';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { ExternalAuth, HttpRoute } from '../../src/model/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';

/** what the authorization Service saw of one request */
interface AuthSeen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** The data plane's external authorization (ExternalAuth filter, HTTP mode) through a real tunnel, against a loopback authorization server. */
describe('data plane: external authorization', function () {
  this.timeout(20_000);
  let backends: TestBackend[] = [];
  let harness: TunnelHarness | undefined;
  let plane: DataPlane | undefined;
  let seen: AuthSeen[] = [];
  /** what the backend received */
  let upstream: { url: string; headers: IncomingMessage['headers']; body: string }[] = [];

  /** authServer answers as `decide` says, after reading the whole request. */
  async function authServer(decide: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<TestBackend> {
    const b = await startHttpBackend('auth', (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        decide(req, body, res);
      });
    });
    backends.push(b);
    return b;
  }

  async function serve(auth: Partial<ExternalAuth>, authPort: number, extra: HttpRoute[] = []): Promise<TunnelHarness> {
    const app = await startHttpBackend('app', (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        upstream.push({ url: req.url ?? '', headers: req.headers, body });
        res.writeHead(200).end('app');
      });
    });
    backends.push(app);
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'app', 'http', [{ address: '127.0.0.1', port: app.port }]);
    endpoints.set('default', 'auth', 'http', [{ address: '127.0.0.1', port: authPort }]);
    plane = new DataPlane({ endpoints });
    const filter: ExternalAuth = {
      backend: serviceBackend('auth'),
      pathPrefix: '',
      requestHeaders: [],
      responseHeaders: 'all',
      forwardBodyBytes: 0,
      timeoutMs: 2_000,
      semantics: 'gateway',
      ...auth,
    };
    const guarded = httpRoute('guarded', [serviceBackend('app')], { filters: [{ type: 'ExternalAuth', ...filter }], match: { path: { type: 'Prefix', value: '/' } } });
    plane.update(hostGraph([{ hostname: 'app.test', routes: [...extra, guarded] }]));
    harness = await startTunnelHarness(plane);
    return harness;
  }

  afterEach(async () => {
    await harness?.close();
    plane?.close();
    await Promise.all(backends.map((b) => b.close()));
    backends = [];
    harness = undefined;
    seen = [];
    upstream = [];
  });

  it('forwards an allowed request with the answer\'s headers, and tells the Service only Host, Authorization, Content-Length and the chosen headers', async () => {
    const auth = await authServer((req, _b, res) => res.writeHead(req.headers.authorization === 'Bearer good' ? 200 : 401, { 'x-user': 'ada', 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('no'));
    const h = await serve({ pathPrefix: '/check', requestHeaders: ['x-tenant'], responseHeaders: ['x-user', 'content-type'] }, auth.port);
    const ok = await h.request({ ':path': '/items?page=2', authorization: 'Bearer good', 'x-tenant': 't1', 'x-other': 'o', cookie: 'c=1', 'x-user': 'forged' });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.equal('app');
    expect(seen[0]).to.deep.include({ method: 'GET', url: '/check/items?page=2', body: '' });
    expect(seen[0]!.headers).to.deep.include({ host: 'app.test', authorization: 'Bearer good', 'x-tenant': 't1', 'content-length': '0' });
    expect(seen[0]!.headers['x-other']).to.equal(undefined);
    expect(seen[0]!.headers.cookie).to.equal(undefined);
    expect(upstream[0]!.headers['x-user']).to.equal('ada'); // the answer's, over the client's forged one
    expect(upstream[0]!.headers['content-type']).to.equal(undefined); // the answer's own framing never goes upstream
    expect(upstream[0]!.url).to.equal('/items?page=2');
  });

  it("returns a refusal to the client as the Service gave it, and the backend never sees the request", async () => {
    const auth = await authServer((_r, _b, res) => res.writeHead(403, { 'www-authenticate': 'Bearer error="insufficient_scope"', 'content-type': 'text/plain' }).end('go away'));
    const h = await serve({}, auth.port);
    const res = await h.request({ ':path': '/' });
    expect(res.status).to.equal(403);
    expect(res.body).to.equal('go away');
    expect(res.headers['www-authenticate']).to.equal('Bearer error="insufficient_scope"');
    expect(upstream).to.have.length(0);
  });

  it('counts only 200 as allowing in Gateway API mode (a 202 is a refusal), any 2xx in ingress-nginx mode', async () => {
    const auth = await authServer((_r, _b, res) => res.writeHead(202).end());
    const h = await serve({}, auth.port);
    expect((await h.request({ ':path': '/' })).status).to.equal(202);
    expect(upstream).to.have.length(0);
    await harness!.close();
    plane!.close();
    const nginx = await serve({ semantics: 'nginx', pathPrefix: '/oauth2/auth', requestHeaders: 'all' }, auth.port);
    expect((await nginx.request({ ':path': '/x?y=1', cookie: 'session=s' })).status).to.equal(200);
    const asked = seen.at(-1)!;
    expect(asked.method).to.equal('GET');
    expect(asked.url).to.equal('/oauth2/auth');
    expect(asked.headers).to.deep.include({ cookie: 'session=s', 'x-original-url': 'http://app.test/x?y=1', 'x-original-method': 'GET' });
  });

  it('in ingress-nginx mode sends a 401 to the sign-in URL with rd, and turns other refusals into 500', async () => {
    let status = 401;
    const auth = await authServer((_r, _b, res) => res.writeHead(status).end());
    const h = await serve({ semantics: 'nginx', pathPrefix: '/oauth2/auth', signinUrl: 'https://app.test/oauth2/start' }, auth.port);
    const res = await h.request({ ':path': '/private?a=b' });
    expect(res.status).to.equal(302);
    expect(res.headers.location).to.equal('https://app.test/oauth2/start?rd=http%3A%2F%2Fapp.test%2Fprivate%3Fa%3Db');
    status = 418;
    expect((await h.request({ ':path': '/' })).status).to.equal(500);
    status = 401;
    await harness!.close();
    plane!.close();
    const templated = await serve({ semantics: 'nginx', pathPrefix: '/oauth2/auth', signinUrl: 'https://$host/oauth2/start?rd=$escaped_request_uri' }, auth.port);
    expect((await templated.request({ ':path': '/private?a=b' })).headers.location).to.equal('https://app.test/oauth2/start?rd=%2Fprivate%3Fa%3Db');
    expect(upstream).to.have.length(0);
  });

  it('sends the body along when forwardBody asks, and the backend still gets it whole; a longer body is refused with 413', async () => {
    const auth = await authServer((_r, body, res) => res.writeHead(body.includes('ok') ? 200 : 403).end());
    const h = await serve({ forwardBodyBytes: 16 }, auth.port);
    const res = await h.request({ ':path': '/upload', ':method': 'POST', 'content-type': 'text/plain' }, 'this is ok');
    expect(res.status).to.equal(200);
    expect(seen[0]).to.deep.include({ method: 'POST', body: 'this is ok' });
    expect(seen[0]!.headers['content-length']).to.equal('10');
    expect(upstream[0]!.body).to.equal('this is ok');
    const big = await h.request({ ':path': '/upload', ':method': 'POST' }, 'x'.repeat(17));
    expect(big.status).to.equal(413);
    expect(seen).to.have.length(1);
    expect(upstream).to.have.length(1);
  });

  it("asks a route policy's authorization first, then the rule's own; the first refusal stops the request, and both answers' headers reach the backend", async () => {
    const order: string[] = [];
    const first = await authServer((req, _b, res) => {
      order.push('policy');
      res.writeHead(req.headers['x-pass'] === 'no' ? 401 : 200, { 'x-from-policy': 'p' }).end();
    });
    const second = await authServer((_r, _b, res) => {
      order.push('filter');
      res.writeHead(200, { 'x-from-filter': 'f' }).end();
    });
    await serve({ backend: serviceBackend('auth2') }, second.port); // starts the app backend
    // the route again, with a policy's authorization on top
    const endpoints = new StaticEndpointResolver();
    const app = backends.find((b) => b !== first && b !== second)!;
    endpoints.set('default', 'app', 'http', [{ address: '127.0.0.1', port: app.port }]);
    endpoints.set('default', 'auth1', 'http', [{ address: '127.0.0.1', port: first.port }]);
    endpoints.set('default', 'auth2', 'http', [{ address: '127.0.0.1', port: second.port }]);
    await harness!.close();
    plane!.close();
    plane = new DataPlane({ endpoints });
    const policy: ExternalAuth = { backend: serviceBackend('auth1'), pathPrefix: '', requestHeaders: ['x-pass'], responseHeaders: 'all', forwardBodyBytes: 0, timeoutMs: 2_000, semantics: 'gateway' };
    const filter: ExternalAuth = { ...policy, backend: serviceBackend('auth2'), requestHeaders: [] };
    const route = httpRoute('guarded', [serviceBackend('app')], { filters: [{ type: 'ExternalAuth', ...filter }], extra: { policies: { externalAuth: policy } } });
    plane.update(hostGraph([{ hostname: 'app.test', routes: [route] }]));
    harness = await startTunnelHarness(plane);
    expect((await harness.request({ ':path': '/' })).status).to.equal(200);
    expect(order).to.deep.equal(['policy', 'filter']);
    expect(upstream.at(-1)!.headers).to.deep.include({ 'x-from-policy': 'p', 'x-from-filter': 'f' });
    order.length = 0;
    expect((await harness.request({ ':path': '/', 'x-pass': 'no' })).status).to.equal(401);
    expect(order, 'the rule is not asked once the policy refused').to.deep.equal(['policy']);
  });

  it('fails closed: a Service that hangs past the timeout, one with no endpoint, one that refuses connections — 503, and other routes keep serving', async () => {
    const hanging = await authServer(() => undefined); // never answers
    const open = httpRoute('open', [serviceBackend('app')], { match: { path: { type: 'Prefix', value: '/open' } } });
    const h = await serve({ timeoutMs: 300 }, hanging.port, [open]);
    const slow = await h.request({ ':path': '/' });
    expect(slow.status).to.equal(503);
    expect(slow.body).to.contain('timed out');
    expect((await h.request({ ':path': '/open' })).status).to.equal(200);
    await harness!.close();
    plane!.close();
    const gone = await startHttpBackend('gone');
    const port = gone.port;
    await gone.close();
    const refused = await serve({}, port);
    const r = await refused.request({ ':path': '/' });
    expect(r.status).to.equal(503);
    expect(r.body).to.contain('could not be reached');
    await harness!.close();
    plane!.close();
    const none = await serve({ backend: serviceBackend('nobody') }, port);
    const n = await none.request({ ':path': '/' });
    expect(n.status).to.equal(503);
    expect(n.body).to.contain('no ready endpoint for service default/nobody');
    expect(upstream.filter((u) => u.url === '/')).to.have.length(0);
  });
});
