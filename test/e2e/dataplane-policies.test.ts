import { expect } from 'chai';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { HttpRoute, RouteGraph, RoutePolicies } from '../../src/model/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { readFrames } from '../support/backend-ws.js';
import { signToken, startJwksServer, testJwtPolicy, testSigner } from '../support/jwt-keys.js';
import type { EchoReply } from '../support/backend-servers.js';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const keyAuth: RoutePolicies = { keyAuth: { header: 'x-key', sha256: [sha256('k')] } };

describe('data plane: route policies on tunnel streams', () => {
  const cleanups: (() => unknown)[] = [];
  let endpoints: StaticEndpointResolver;
  let plane: DataPlane;
  let backend: TestBackend;

  beforeEach(async () => {
    endpoints = new StaticEndpointResolver();
    plane = new DataPlane({ endpoints });
    backend = await startHttpBackend('echo');
    endpoints.set('default', 'svc', 'http', [{ address: '127.0.0.1', port: backend.port }]);
    cleanups.push(() => plane.close(), () => backend.close());
  });

  afterEach(async () => {
    for (const c of cleanups.reverse()) await c();
    cleanups.length = 0;
  });

  async function harness(graph: RouteGraph, clientAddress = '203.0.113.7'): Promise<TunnelHarness> {
    plane.update(graph);
    const h = await startTunnelHarness(plane, { clientAddress });
    cleanups.push(() => h.close());
    return h;
  }

  const routeWith = (id: string, path: string, policies?: RoutePolicies): HttpRoute =>
    httpRoute(id, [serviceBackend('svc')], { match: { path: { type: 'Prefix', value: path } }, extra: policies ? { policies } : {} });

  it("applies a binding's default policies to each route, and a route's own policy of a kind instead", async () => {
    const graph = hostGraph([{ hostname: 'app.test', routes: [routeWith('plain', '/'), routeWith('open', '/open', { keyAuth: { header: 'x-other', sha256: [sha256('o')] } })] }]);
    graph.bindings[0]!.policies = keyAuth;
    const h = await harness(graph);
    expect((await h.request({ ':path': '/' })).status).to.equal(401);
    expect((await h.request({ ':path': '/', 'x-key': 'k' })).status).to.equal(200);
    expect((await h.request({ ':path': '/open', 'x-key': 'k' })).status).to.equal(401);
    expect((await h.request({ ':path': '/open', 'x-other': 'o' })).status).to.equal(200);
  });

  it('decides on the client address of the stream metadata, not on X-Forwarded-For', async () => {
    const graph = hostGraph([{ hostname: 'app.test', routes: [routeWith('r', '/', { ipAccess: { allow: ['203.0.113.0/24'], deny: [] } })] }]);
    const h = await harness(graph, '198.51.100.20');
    expect((await h.request({ ':path': '/', 'x-forwarded-for': '203.0.113.7' })).status).to.equal(403);
    expect(backend.requests).to.have.length(0);
  });

  it('keeps rate-limit buckets across a graph update that leaves the policy unchanged', async () => {
    const graph = (extra: string): RouteGraph =>
      hostGraph([{ hostname: 'app.test', routes: [routeWith('r', '/', { rateLimit: { requests: 1, periodSeconds: 3600, burst: 1 } }), routeWith(extra, `/${extra}`)] }]);
    const h = await harness(graph('one'));
    expect((await h.request({ ':path': '/' })).status).to.equal(200);
    plane.update(graph('two'));
    const limited = await h.request({ ':path': '/' });
    expect(limited.status).to.equal(429);
    expect(Number(limited.headers['retry-after'])).to.be.within(1, 3600);
  });

  it('answers 413 to an HTTP/2 body without content-length once it passes the maximum', async () => {
    const h = await harness(hostGraph([{ hostname: 'app.test', routes: [routeWith('r', '/', { maxBodyBytes: 1024 })] }]));
    const res = await h.request({ ':method': 'POST', ':path': '/' }, Buffer.alloc(64 * 1024, 1));
    expect(res.status).to.equal(413);
    expect((await h.request({ ':method': 'POST', ':path': '/' }, Buffer.alloc(1000, 1))).status).to.equal(200);
  });

  it('does not let a WebSocket handshake past key auth', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    wss.on('connection', (ws) => ws.send('hello'));
    cleanups.push(() => new Promise((r) => wss.close(() => r(undefined))));
    endpoints.set('default', 'ws', 'http', [{ address: '127.0.0.1', port: (wss.address() as AddressInfo).port }]);
    const route = httpRoute('ws', [serviceBackend('ws', { protocol: 'ws' })], { extra: { policies: keyAuth } });
    const h = await harness(hostGraph([{ hostname: 'app.test', routes: [route] }]));
    const connect = { ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/ws', ':authority': 'app.test', 'sec-websocket-version': '13' };
    expect((await h.request(connect, '')).status).to.equal(401);
    const stream = h.client.request({ ...connect, 'x-key': 'k' }, { endStream: false });
    const status = await new Promise<number>((resolve) => stream.once('response', (hd) => resolve(Number(hd[':status']))));
    expect(status).to.equal(200);
    expect(await readFrames(stream).next()).to.equal('hello');
    stream.close();
  });

  describe('jwt', () => {
    let t = 0;
    beforeEach(() => {
      // a data plane whose clock the test moves: the key-set fetch cooldown is measured on it
      plane.close();
      plane = new DataPlane({ endpoints, now: () => t });
      cleanups.push(() => plane.close());
    });

    const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

    it('serves a valid token with claim headers (a forged one removed), picks up a rotated key set by its new kid, and keeps the last keys when the key server is gone', async () => {
      const first = testSigner('first', 'ES256');
      const jwks = await startJwksServer([first.jwk]);
      cleanups.push(() => jwks.close());
      const policy = testJwtPolicy([], { jwks: { kind: 'url', url: jwks.url, refreshSeconds: 3600 }, claimToHeaders: [{ claim: 'sub', header: 'X-User' }] });
      const h = await harness(hostGraph([{ hostname: 'app.test', routes: [routeWith('r', '/', { jwt: policy })] }]));
      const ok = await h.request({ ':path': '/', ...bearer(await signToken(first, { sub: 'ann' })), 'x-user': 'root' });
      expect(ok.status).to.equal(200);
      expect((JSON.parse(ok.body) as EchoReply).headers['x-user']).to.equal('ann');
      const bad = await h.request({ ':path': '/', ...bearer(await signToken(testSigner('first', 'ES256'))) });
      expect(bad.status).to.equal(401);
      expect(bad.headers['www-authenticate']).to.equal('Bearer realm="api", error="invalid_token"');
      // the identity provider rotates: a token with the new kid makes the agent fetch again (after the cooldown)
      const second = testSigner('second', 'EdDSA');
      jwks.keys = [second.jwk];
      t += 60_000;
      // a token without the claim: the client's own X-User is removed all the same
      expect((await h.request({ ':path': '/', ...bearer(await signToken(second)), 'x-user': 'root' })).status).to.equal(200);
      expect(jwks.fetches).to.equal(2);
      // the key server goes away: a refresh fails, the keys fetched last still serve
      await jwks.close();
      t += 60_000;
      expect((await h.request({ ':path': '/', ...bearer(await signToken(testSigner('third'))) })).status).to.equal(401);
      expect((await h.request({ ':path': '/', ...bearer(await signToken(second)) })).status).to.equal(200);
      expect(backend.requests.map((r) => r.headers['x-user'])).to.deep.equal(['ann', undefined, undefined]);
    });

    it('answers 503 on a route whose key set cannot be fetched, while another route serves', async () => {
      const down = await startJwksServer([]);
      await down.close();
      const signer = testSigner('k');
      const policy = testJwtPolicy([], { jwks: { kind: 'url', url: down.url, refreshSeconds: 3600 } });
      const h = await harness(hostGraph([{ hostname: 'app.test', routes: [routeWith('locked', '/locked', { jwt: policy }), routeWith('open', '/')] }]));
      const res = await h.request({ ':path': '/locked', ...bearer(await signToken(signer)) });
      expect(res.status).to.equal(503);
      expect(res.body).to.contain('signing keys could not be fetched');
      expect((await h.request({ ':path': '/' })).status).to.equal(200);
      expect((await h.request({ ':path': '/locked' })).status).to.equal(401);
    });

    it('oidc: answers 503 with the reason on a route whose provider cannot be reached or names another issuer, while another route serves; its callback path reaches it', async () => {
      const down = await startHttpBackend('down');
      await down.close();
      const wrong = await startHttpBackend('wrong-issuer', (_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ issuer: 'https://someone-else.test', authorization_endpoint: 'https://a.test/a', token_endpoint: 'https://a.test/t', jwks_uri: 'https://a.test/j' }));
      });
      cleanups.push(() => wrong.close());
      const oidc = (issuer: string): RoutePolicies => ({
        oidc: { issuer, clientId: 'c', clientSecret: 's', scopes: ['openid'], cookieKey: Buffer.alloc(32, 7).toString('base64url'), cookieName: 'tuna_oidc', sessionSeconds: 3600, discoveryRefreshSeconds: 3600, claimToHeaders: [] },
      });
      const graph = hostGraph([
        { hostname: 'app.test', routes: [routeWith('locked', '/locked', oidc(`http://127.0.0.1:${down.port}`)), routeWith('open', '/')] },
        { hostname: 'other.test', routes: [routeWith('odd', '/', oidc(`http://127.0.0.1:${wrong.port}`))] },
      ]);
      const h = await harness(graph);
      const res = await h.request({ ':path': '/locked', accept: 'text/html' });
      expect(res.status).to.equal(503);
      expect(res.body).to.contain(`the OpenID provider's configuration could not be fetched from http://127.0.0.1:${down.port}/.well-known/openid-configuration`);
      expect((await h.request({ ':path': '/' })).status).to.equal(200);
      // the callback is not under /locked, yet the route with the policy answers it (a callback without a login: 400)
      expect((await h.request({ ':path': '/.tuna/oidc/callback?code=x&state=y' })).status).to.equal(400);
      const odd = await h.request({ ':authority': 'other.test', ':path': '/', accept: 'text/html' });
      expect(odd.status).to.equal(503);
      expect(odd.body).to.contain('the configuration names another issuer');
      expect(backend.requests.map((r) => r.url)).to.deep.equal(['/']);
    });

    it('lets a WebSocket handshake through only with a valid token, with its claim header', async () => {
      const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
      await new Promise<void>((r) => wss.once('listening', () => r()));
      wss.on('connection', (ws, req) => ws.send(String(req.headers['x-user'])));
      cleanups.push(() => new Promise((r) => wss.close(() => r(undefined))));
      endpoints.set('default', 'ws', 'http', [{ address: '127.0.0.1', port: (wss.address() as AddressInfo).port }]);
      const signer = testSigner('k', 'EdDSA');
      const policy = testJwtPolicy([signer], { claimToHeaders: [{ claim: 'sub', header: 'X-User' }] });
      const route = httpRoute('ws', [serviceBackend('ws', { protocol: 'ws' })], { extra: { policies: { jwt: policy } } });
      const h = await harness(hostGraph([{ hostname: 'app.test', routes: [route] }]));
      const connect = { ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/ws', ':authority': 'app.test', 'sec-websocket-version': '13' };
      expect((await h.request({ ...connect, 'x-user': 'root' }, '')).status).to.equal(401);
      const stream = h.client.request({ ...connect, ...bearer(await signToken(signer, { sub: 'ann' })), 'x-user': 'root' }, { endStream: false });
      const status = await new Promise<number>((resolve) => stream.once('response', (hd) => resolve(Number(hd[':status']))));
      expect(status).to.equal(200);
      expect(await readFrames(stream).next()).to.equal('ann');
      stream.close();
    });

    it('answers 403 when a claim requirement of the route does not hold', async () => {
      const signer = testSigner('k');
      const policy = testJwtPolicy([signer], { require: [{ claim: 'roles', match: 'contains', value: 'admin' }] });
      const h = await harness(hostGraph([{ hostname: 'app.test', routes: [routeWith('admin', '/admin', { jwt: policy }), routeWith('open', '/')] }]));
      const denied = await h.request({ ':path': '/admin', ...bearer(await signToken(signer, { roles: ['user'] })) });
      expect(denied.status).to.equal(403);
      expect(denied.headers['www-authenticate']).to.equal('Bearer realm="api", error="insufficient_scope"');
      expect((await h.request({ ':path': '/admin', ...bearer(await signToken(signer, { roles: ['user', 'admin'] })) })).status).to.equal(200);
    });
  });
});
