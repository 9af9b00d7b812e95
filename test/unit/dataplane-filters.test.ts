import { expect } from 'chai';
import { pickBackend } from '../../src/dataplane/index.js';
import { isOriginAllowed, preflightHeaders } from '../../src/dataplane/cors.js';
import { appendForwardedFor, applyHeaderModifier, stripHopByHop } from '../../src/dataplane/headers.js';
import type { HeaderMap } from '../../src/dataplane/headers.js';
import { normalizeHost } from '../../src/dataplane/host.js';
import { rewritePath } from '../../src/dataplane/path-rewrite.js';
import { redirectLocation } from '../../src/dataplane/redirect.js';
import type { RequestRedirect } from '../../src/dataplane/redirect.js';
import type { CorsPolicy } from '../../src/model/index.js';
import { seededRandom } from '../support/backend-random.js';

describe('dataplane filters (pure parts)', () => {
  describe('rewritePath ReplacePrefixMatch (Gateway API HTTPPathModifier table)', () => {
    const cases: [string, string, string, string][] = [
      ['/foo', '/foo/bar', '/xyz', '/xyz/bar'],
      ['/foo', '/foo/bar', '/xyz/', '/xyz/bar'],
      ['/foo/', '/foo/bar', '/xyz', '/xyz/bar'],
      ['/foo', '/foo', '/xyz', '/xyz'],
      ['/foo', '/foo/', '/xyz', '/xyz/'],
      ['/foo', '/foo', '/xyz/', '/xyz/'],
      ['/foo', '/foo/bar', '/', '/bar'],
      ['/foo', '/foo', '/', '/'],
      ['/', '/foo/bar', '/xyz', '/xyz/foo/bar'],
      ['/foo', '/foobar', '/xyz', '/foobar'],
    ];
    for (const [prefix, path, value, want] of cases) {
      it(`rewrites ${path} under ${prefix} with ${value} to ${want}`, () => {
        expect(rewritePath(path, { type: 'ReplacePrefixMatch', matchedPrefix: prefix, value })).to.equal(want);
      });
    }
    it('replaces the full path', () => {
      expect(rewritePath('/a/b', { type: 'ReplaceFullPath', value: '/c' })).to.equal('/c');
    });
  });

  describe('redirectLocation', () => {
    const req = { scheme: 'http', host: 'app.test', publicPort: 8080, path: '/old/page', search: '?q=1' };
    const r = (f: Partial<RequestRedirect>): RequestRedirect => ({ type: 'RequestRedirect', statusCode: 302, ...f });
    const cases: [string, Partial<RequestRedirect>, string][] = [
      ['keeps the scheme and the listener port', {}, 'http://app.test:8080/old/page?q=1'],
      ['switches scheme and drops the port', { scheme: 'https' }, 'https://app.test/old/page?q=1'],
      ['sets hostname and port', { hostname: 'new.test', port: 9443, scheme: 'https' }, 'https://new.test:9443/old/page?q=1'],
      ['omits a well-known port', { port: 80 }, 'http://app.test/old/page?q=1'],
      ['rewrites the prefix', { path: { type: 'ReplacePrefixMatch', matchedPrefix: '/old', value: '/new' } }, 'http://app.test:8080/new/page?q=1'],
    ];
    for (const [what, f, want] of cases) it(`${what}`, () => expect(redirectLocation(r(f), req)).to.equal(want));
  });

  describe('headers', () => {
    it('strips hop-by-hop headers and those named in Connection but keeps te: trailers', () => {
      const out = stripHopByHop(
        { connection: 'close, x-private', 'x-private': '1', 'keep-alive': 'x', te: 'trailers', 'transfer-encoding': 'chunked', upgrade: 'h2c', 'x-ok': '2', ':path': '/' },
        true,
      );
      expect(out).to.deep.equal({ 'x-ok': '2', te: 'trailers' });
    });

    it('drops te entirely unless it asks for trailers', () => {
      expect(stripHopByHop({ te: 'gzip' }, true)).to.deep.equal({});
    });

    it('sets, adds and removes headers case-insensitively', () => {
      const h: HeaderMap = { 'x-a': '1', 'x-b': '2', 'x-c': '3' };
      applyHeaderModifier(h, { set: [{ name: 'X-A', value: 'one' }], add: [{ name: 'x-b', value: 'two' }, { name: 'x-new', value: 'n' }], remove: ['X-C'] });
      expect(h).to.deep.equal({ 'x-a': 'one', 'x-b': '2,two', 'x-new': 'n' });
    });

    it('appends the client address to X-Forwarded-For once', () => {
      const h: HeaderMap = {};
      appendForwardedFor(h, '192.0.2.1');
      appendForwardedFor(h, '192.0.2.1');
      expect(h['x-forwarded-for']).to.equal('192.0.2.1');
    });

    const hosts: [string, string | undefined][] = [
      ['App.Test:80', 'app.test'],
      ['app.test.', 'app.test'],
      ['[::1]:8080', '[::1]'],
      ['app.test:http', undefined],
      ['app.test:70000', undefined],
      ['', undefined],
    ];
    for (const [input, want] of hosts) it(`normalises host ${JSON.stringify(input)} to ${String(want)}`, () => expect(normalizeHost(input)).to.equal(want));
  });

  describe('CORS', () => {
    const policy: CorsPolicy = {
      allowOrigins: ['https://app.test', 'https://*.example.com'],
      allowMethods: ['GET', 'POST'],
      allowHeaders: ['x-token'],
      exposeHeaders: ['x-id'],
      allowCredentials: true,
      maxAgeSeconds: 600,
    };
    it('allows exact and wildcard origins only', () => {
      expect(isOriginAllowed(policy, 'https://app.test')).to.equal(true);
      expect(isOriginAllowed(policy, 'https://a.example.com')).to.equal(true);
      expect(isOriginAllowed(policy, 'http://a.example.com')).to.equal(false);
      expect(isOriginAllowed(policy, 'https://example.com')).to.equal(false);
      expect(isOriginAllowed(policy, 'https://evil.test')).to.equal(false);
    });
    it('answers a preflight with the origin named when credentials are allowed', () => {
      const h = preflightHeaders(policy, 'https://a.example.com', 'x-token');
      expect(h['access-control-allow-origin']).to.equal('https://a.example.com');
      expect(h['access-control-allow-credentials']).to.equal('true');
      expect(h['access-control-max-age']).to.equal('600');
      expect(h['access-control-allow-methods']).to.equal('GET, POST');
    });
    it('gives a refused origin no CORS headers', () => {
      expect(preflightHeaders(policy, 'https://evil.test', undefined)).to.deep.equal({});
    });
    it('answers allowMethods * with the method asked for, and expose headers on the preflight (conformance HTTPRouteCORS)', () => {
      const wild: CorsPolicy = { ...policy, allowMethods: ['*'], exposeHeaders: ['x-a', 'x-b'] };
      const h = preflightHeaders(wild, 'https://a.example.com', 'x-token', 'PUT');
      expect(h['access-control-allow-methods']).to.equal('PUT');
      expect(h['access-control-expose-headers']).to.equal('x-a, x-b');
      expect(preflightHeaders(wild, 'https://a.example.com', undefined)['access-control-allow-methods']).to.equal('*');
    });
  });

  describe('pickBackend', () => {
    it('follows the weights over 1,000 draws of a seeded generator', () => {
      const random = seededRandom(42);
      const backends = [
        { id: 'a', weight: 1 },
        { id: 'b', weight: 3 },
        { id: 'c', weight: 0 },
      ];
      const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
      for (let i = 0; i < 1000; i++) counts[pickBackend(backends, random)!.id]!++;
      expect(counts.c).to.equal(0);
      expect(counts.a).to.be.within(200, 300);
      expect(counts.b).to.be.within(700, 800);
    });
    it('returns nothing when every weight is zero', () => {
      expect(pickBackend([{ weight: 0 }], Math.random)).to.equal(undefined);
    });
  });
});

