import { expect } from 'chai';
import bcrypt from 'bcryptjs';
import { createHash } from 'node:crypto';
import type { Binding, HttpRoute, RoutePolicies } from '../../src/model/index.js';
import { checkPolicies } from '../../src/dataplane/policies/apply.js';
import type { PolicyRequest } from '../../src/dataplane/policies/apply.js';
import { BasicAuthChecker, verifyPassword } from '../../src/dataplane/policies/basic-auth.js';
import { PolicyCompiler } from '../../src/dataplane/policies/compile.js';
import type { CompiledPolicies } from '../../src/dataplane/policies/compile.js';
import { IpFilter } from '../../src/dataplane/policies/ip-filter.js';
import { KeyChecker } from '../../src/dataplane/policies/key-auth.js';
import { RateLimiter } from '../../src/dataplane/policies/rate-limiter.js';
import type { IncomingFacts, LocalAnswer } from '../../src/dataplane/request-plan.js';
import { compileRouteTable } from '../../src/dataplane/router.js';
import { resolveRequest } from '../../src/dataplane/http-handler.js';
import { graphWith, hostBinding, route } from '../support/graph-builders.js';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** fakeClock is a settable millisecond clock. */
function fakeClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

function facts(extra: Partial<IncomingFacts> = {}): IncomingFacts {
  return { method: 'GET', scheme: 'https', authority: 'app.test', host: 'app.test', publicPort: 80, path: '/p', search: '?q=1', headers: {}, clientAddress: '127.0.0.1', ...extra };
}

function compiled(policies: RoutePolicies, now = fakeClock().now): CompiledPolicies {
  const r = route('r', { type: 'Prefix', value: '/' }, { policies });
  return new PolicyCompiler(now).compile(r, undefined)!;
}

async function check(p: CompiledPolicies, req: Partial<PolicyRequest> & { facts?: IncomingFacts } = {}): Promise<LocalAnswer | undefined> {
  return checkPolicies(p, { facts: req.facts ?? facts(), publicScheme: req.publicScheme ?? 'https', isUpgrade: req.isUpgrade ?? false });
}

describe('data plane policies', () => {
  describe('RateLimiter (token bucket per client)', () => {
    it('passes a burst, then limits with Retry-After until a token refills', () => {
      const clock = fakeClock();
      const limiter = new RateLimiter({ requests: 2, periodSeconds: 60, burst: 2 }, clock.now);
      expect(limiter.take('a').kind).to.equal('pass');
      expect(limiter.take('a').kind).to.equal('pass');
      expect(limiter.take('a')).to.deep.equal({ kind: 'limited', retryAfterSeconds: 30 });
      // Another client has a bucket of its own.
      expect(limiter.take('b').kind).to.equal('pass');
      clock.advance(20_000);
      expect(limiter.take('a')).to.deep.equal({ kind: 'limited', retryAfterSeconds: 10 });
      clock.advance(10_000);
      expect(limiter.take('a').kind).to.equal('pass');
    });

    it('saves up at most burst tokens', () => {
      const clock = fakeClock();
      const limiter = new RateLimiter({ requests: 10, periodSeconds: 1, burst: 3 }, clock.now);
      limiter.take('a');
      clock.advance(3_600_000);
      const results = [1, 2, 3, 4].map(() => limiter.take('a').kind);
      expect(results).to.deep.equal(['pass', 'pass', 'pass', 'limited']);
    });

    it('keeps at most maxClients buckets, dropping the least recently used', () => {
      const limiter = new RateLimiter({ requests: 1, periodSeconds: 3600, burst: 1 }, fakeClock().now, 3);
      for (const c of ['a', 'b', 'c']) limiter.take(c);
      limiter.take('a'); // a is now the most recent (and limited)
      limiter.take('d'); // b, the least recent, is dropped
      expect(limiter.size).to.equal(3);
      expect(limiter.take('b').kind).to.equal('pass');
      expect(limiter.take('a').kind).to.equal('limited');
      for (let i = 0; i < 1000; i++) limiter.take(`x${i}`);
      expect(limiter.size).to.equal(3);
    });
  });

  describe('IpFilter', () => {
    const cases: [RoutePolicies['ipAccess'] & object, string, boolean][] = [
      [{ allow: ['10.0.0.0/8'], deny: [] }, '10.9.9.9', true],
      [{ allow: ['10.0.0.0/8'], deny: [] }, '192.0.2.1', false],
      [{ allow: ['10.0.0.0/8'], deny: ['10.0.0.5'] }, '10.0.0.5', false],
      [{ allow: [], deny: ['127.0.0.0/8'] }, '::ffff:127.0.0.1', false],
      [{ allow: [], deny: ['127.0.0.0/8'] }, '192.0.2.1', true],
      [{ allow: ['2001:db8::/32'], deny: [] }, '2001:db8::1', true],
      [{ allow: ['2001:db8::/32'], deny: [] }, '2001:db9::1', false],
      [{ allow: [], deny: ['192.0.2.0/24'] }, 'not-an-address', false],
      [{ allow: [], deny: ['192.0.2.0/24'] }, '', false],
    ];
    for (const [policy, address, allowed] of cases)
      it(`${allowed ? 'lets' : 'keeps'} ${JSON.stringify(address)} ${allowed ? 'in' : 'out'} with ${JSON.stringify(policy)}`, () => {
        expect(new IpFilter(policy).isAllowed(address)).to.equal(allowed);
      });
  });

  describe('KeyChecker', () => {
    const checker = new KeyChecker({ header: 'X-Api-Key', sha256: [sha256('one'), sha256('two')] });
    it('accepts any of the keys and nothing else', () => {
      expect(checker.header).to.equal('x-api-key');
      expect(checker.isAccepted('one')).to.equal(true);
      expect(checker.isAccepted('two')).to.equal(true);
      expect(checker.isAccepted('three')).to.equal(false);
      expect(checker.isAccepted('')).to.equal(false);
      expect(checker.isAccepted(undefined)).to.equal(false);
      expect(checker.isAccepted(['one', 'two'])).to.equal(false);
    });
  });

  describe('basic auth', () => {
    const hash2b = bcrypt.hashSync('pw', 4);
    const table: [string, string, boolean][] = [
      ['bcrypt $2b$', hash2b, true],
      ['bcrypt $2y$', hash2b.replace('$2b$', '$2y$'), true],
      ['bcrypt $2a$', hash2b.replace('$2b$', '$2a$'), true],
      ['{SHA}', `{SHA}${createHash('sha1').update('pw').digest('base64')}`, true],
      ['{SHA} of another password', `{SHA}${createHash('sha1').update('other').digest('base64')}`, false],
    ];
    for (const [what, hash, good] of table)
      it(`verifies against ${what}: ${good ? 'match' : 'no match'}`, async () => {
        expect(await verifyPassword('pw', hash)).to.equal(good);
      });

    it('refuses a missing, malformed, unknown or wrong credential, and accepts the right one (also when remembered)', async () => {
      const checker = new BasicAuthChecker({ realm: 'r', users: [{ name: 'ann', hash: hash2b }] });
      expect(checker.challenge).to.equal('Basic realm="r", charset="UTF-8"');
      for (const header of [undefined, 'Bearer x', 'Basic !!!', `Basic ${Buffer.from('nocolon').toString('base64')}`, basic('bob', 'pw'), basic('ann', 'nope')])
        expect(await checker.check(header), String(header)).to.equal(false);
      expect(await checker.check(basic('ann', 'pw'))).to.equal(true);
      expect(await checker.check(basic('ann', 'pw'))).to.equal(true);
      expect(await checker.check(basic('ann', 'pw:with:colons'))).to.equal(false);
    });
  });

  describe('checkPolicies', () => {
    it('refuses a denied address before anything else (no redirect, no auth challenge)', async () => {
      const p = compiled({ ipAccess: { allow: [], deny: ['127.0.0.1'] }, httpsRedirect: { statusCode: 308 }, keyAuth: { header: 'x-k', sha256: [sha256('k')] } });
      expect((await check(p, { publicScheme: 'http' }))?.status).to.equal(403);
    });

    it('redirects only requests the edge received over plain HTTP, whatever X-Forwarded-Proto says', async () => {
      const p = compiled({ httpsRedirect: { statusCode: 301, port: 8443 } });
      const answer = await check(p, { publicScheme: 'http', facts: facts({ scheme: 'https', headers: { 'x-forwarded-proto': 'https' } }) });
      expect(answer).to.deep.include({ status: 301, headers: { location: 'https://app.test:8443/p?q=1' } });
      expect(await check(p, { publicScheme: 'https', facts: facts({ scheme: 'http' }) })).to.equal(undefined);
      const v6 = await check(compiled({ httpsRedirect: { statusCode: 308 } }), { publicScheme: 'http', facts: facts({ host: '[2001:db8::1]', path: '/', search: '' }) });
      expect(v6?.headers.location).to.equal('https://[2001:db8::1]/');
    });

    it('answers a CORS preflight before authentication, and puts CORS headers on a 401', async () => {
      const cors = { allowOrigins: ['https://a.example'], allowMethods: ['GET'], allowHeaders: [], exposeHeaders: [], allowCredentials: true };
      const p = compiled({ cors, keyAuth: { header: 'x-k', sha256: [sha256('k')] } });
      const preflight = await check(p, { facts: facts({ method: 'OPTIONS', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } }) });
      expect(preflight?.status).to.equal(204);
      const refused = await check(p, { facts: facts({ headers: { origin: 'https://a.example' } }) });
      expect(refused?.status).to.equal(401);
      expect(refused?.headers['access-control-allow-origin']).to.equal('https://a.example');
    });

    it('requires both basic auth and the key when both are set', async () => {
      const p = compiled({ basicAuth: { realm: 'r', users: [{ name: 'ann', hash: bcrypt.hashSync('pw', 4) }] }, keyAuth: { header: 'x-k', sha256: [sha256('k')] } });
      expect((await check(p, { facts: facts({ headers: { authorization: basic('ann', 'pw') } }) }))?.status).to.equal(401);
      const onlyKey = await check(p, { facts: facts({ headers: { 'x-k': 'k' } }) });
      expect(onlyKey?.status).to.equal(401);
      expect(onlyKey?.headers['www-authenticate']).to.match(/^Basic/);
      expect(await check(p, { facts: facts({ headers: { authorization: basic('ann', 'pw'), 'x-k': 'k' } }) })).to.equal(undefined);
    });

    it('answers 413 to a declared length over the maximum and lets an equal one pass', async () => {
      const p = compiled({ maxBodyBytes: 5 });
      expect((await check(p, { facts: facts({ method: 'POST', headers: { 'content-length': '6' } }) }))?.status).to.equal(413);
      expect(await check(p, { facts: facts({ method: 'POST', headers: { 'content-length': '5' } }) })).to.equal(undefined);
    });

    it('limits per client address from the metadata, and adds the response-header policy to its answer', async () => {
      const p = compiled({ rateLimit: { requests: 1, periodSeconds: 10, burst: 1 }, responseHeaders: { set: [{ name: 'x-by', value: 'tuna' }], add: [], remove: [] } });
      expect(await check(p)).to.equal(undefined);
      const limited = await check(p, { facts: facts({ headers: { 'x-forwarded-for': '198.51.100.1' } }) });
      expect(limited).to.deep.include({ status: 429, headers: { 'retry-after': '10', 'x-by': 'tuna' } });
      expect(await check(p, { facts: facts({ clientAddress: '::1' }) })).to.equal(undefined);
    });

    it('stays synchronous without basic auth', () => {
      const verdict = checkPolicies(compiled({ maxBodyBytes: 5 }), { facts: facts(), publicScheme: 'https', isUpgrade: false });
      expect(verdict).to.equal(undefined);
    });
  });

  describe('PolicyCompiler', () => {
    const { binding } = hostBinding('app.test');
    const withDefaults = (policies: RoutePolicies): Binding => ({ ...binding, policies });
    const r1: HttpRoute = route('r1', { type: 'Prefix', value: '/a' });
    const r2: HttpRoute = route('r2', { type: 'Prefix', value: '/b' });

    it('compiles nothing for a route without policies', () => {
      expect(new PolicyCompiler(fakeClock().now).compile(r1, binding)).to.equal(undefined);
    });

    it('leaves the routes of a graph without policies with no policies at all (the request path does no policy work)', () => {
      const compiler = new PolicyCompiler(fakeClock().now);
      const table = compileRouteTable(graphWith('app.test', [r1, r2]), (r, b) => compiler.compile(r, b));
      const routes = [...table.vhostsByListener.values()].flat().flatMap((v) => v.routes);
      expect(routes).to.have.length(2);
      expect(routes.every((r) => !('policies' in r))).to.equal(true);
      const routed = resolveRequest(table, { method: 'GET', target: '/a', authority: 'app.test', headers: {} }, { clientAddress: '192.0.2.1', scheme: 'http', entry: { bindingId: binding.id, publicPort: 80, publicProtocol: 'http' } });
      expect('route' in routed && routed.policies).to.equal(undefined);
    });

    it("shares a binding default's limiter between the binding's routes, and keeps it across graphs while the policy is unchanged", () => {
      const compiler = new PolicyCompiler(fakeClock().now);
      const b = withDefaults({ rateLimit: { requests: 1, periodSeconds: 60, burst: 1 } });
      const a1 = compiler.compile(r1, b)!;
      const a2 = compiler.compile(r2, b)!;
      compiler.sweep();
      expect(a1.limiter).to.equal(a2.limiter);
      expect(a1.limiter!.take('c').kind).to.equal('pass');
      const again = compiler.compile(r1, b)!;
      compiler.sweep();
      expect(again.limiter).to.equal(a1.limiter);
      expect(again.limiter!.take('c').kind).to.equal('limited');
      const changed = compiler.compile(r1, withDefaults({ rateLimit: { requests: 2, periodSeconds: 60, burst: 2 } }))!;
      compiler.sweep();
      expect(changed.limiter).not.to.equal(a1.limiter);
    });

    it("gives a route's own limiter to that route only, and its timeout to the forwarded route", () => {
      const compiler = new PolicyCompiler(fakeClock().now);
      const b = withDefaults({ rateLimit: { requests: 1, periodSeconds: 60, burst: 1 } });
      const own = compiler.compile({ ...r1, policies: { rateLimit: { requests: 1, periodSeconds: 60, burst: 1 }, timeoutMs: 250 } }, b)!;
      const inherited = compiler.compile(r2, b)!;
      expect(own.limiter).not.to.equal(inherited.limiter);
      expect(own.route.timeouts).to.deep.equal({ requestMs: 250 });
      expect(inherited.route).to.equal(r2);
    });
  });
});
