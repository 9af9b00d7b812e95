import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import type { JWTPayload } from 'jose';
import { OidcChecker, pkceChallenge } from '../../src/dataplane/policies/oidc.js';
import type { OidcRequest, OidcVerdict } from '../../src/dataplane/policies/oidc.js';
import { ProviderDiscovery, parseProviderConfig } from '../../src/dataplane/policies/oidc-discovery.js';
import { CookieSealer, withoutCookies } from '../../src/dataplane/policies/oidc-session.js';
import type { IncomingFacts } from '../../src/dataplane/request-plan.js';
import { parseOidcCookieSecret, validatePolicies } from '../../src/model/index.js';
import type { OidcPolicy } from '../../src/model/index.js';
import { testSigner } from '../support/jwt-keys.js';
import type { TestSigner } from '../support/jwt-keys.js';

const ISSUER = 'https://idp.test';
const HTML = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';

/** A fake provider: its configuration, keys and token endpoint, all in memory, on a clock the test moves. */
class FakeProvider {
  now = 1_800_000_000;
  nonce = '';
  posts: { url: string; form: URLSearchParams; authorization: string }[] = [];
  /** what the token endpoint answers next; the default signs an ID token with the last nonce */
  answer: (form: URLSearchParams) => Promise<{ status: number; text: string }> = async (form) => ({ status: 200, text: JSON.stringify(await this.tokens(form.get('grant_type') === 'refresh_token' ? {} : { nonce: this.nonce })) });
  config: Record<string, unknown> = { issuer: ISSUER, authorization_endpoint: `${ISSUER}/auth`, token_endpoint: `${ISSUER}/token`, jwks_uri: `${ISSUER}/jwks`, end_session_endpoint: `${ISSUER}/session/end` };
  configFetches = 0;
  refreshToken: string | undefined = 'rt-1';

  constructor(readonly signer: TestSigner) {}

  idToken(claims: JWTPayload = {}, alg = this.signer.alg): Promise<string> {
    const payload: JWTPayload = { iss: ISSUER, aud: 'tuna-app', sub: 'ann', email: 'ann@example.test', iat: this.now, exp: this.now + 300, ...claims };
    for (const k of Object.keys(payload)) if (payload[k] === undefined) delete payload[k];
    return new SignJWT(payload).setProtectedHeader({ alg, kid: this.signer.kid }).sign(this.signer.privateKey);
  }

  async tokens(claims: JWTPayload): Promise<Record<string, unknown>> {
    return { access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: await this.idToken(claims), ...(this.refreshToken === undefined ? {} : { refresh_token: this.refreshToken }) };
  }

  discovery(): ProviderDiscovery {
    return new ProviderDiscovery(ISSUER, 3_600_000, {
      now: () => this.now * 1000,
      onError: () => undefined,
      fetchText: async () => {
        this.configFetches++;
        if (this.config.broken === true) throw new Error('connect ECONNREFUSED');
        return JSON.stringify(this.config);
      },
      fetchJwks: async () => JSON.stringify({ keys: [this.signer.jwk] }),
    });
  }
}

const cookieKey = randomBytes(32).toString('base64url');
const policy = (extra: Partial<OidcPolicy> = {}): OidcPolicy => ({
  issuer: ISSUER,
  clientId: 'tuna-app',
  clientSecret: 's3cret:with/odd chars',
  scopes: ['openid', 'email'],
  cookieKey,
  cookieName: 'tuna_oidc',
  sessionSeconds: 3600,
  discoveryRefreshSeconds: 3600,
  claimToHeaders: [
    { claim: 'sub', header: 'X-User' },
    { claim: 'email', header: 'X-Email' },
  ],
  ...extra,
});

function request(path: string, headers: Record<string, string> = {}, method = 'GET'): OidcRequest {
  const [p, q] = path.split('?');
  const facts: IncomingFacts = { method, scheme: 'https', authority: 'app.test', host: 'app.test', publicPort: 443, path: p!, search: q === undefined ? '' : `?${q}`, headers, clientAddress: '127.0.0.1' };
  return { facts, publicScheme: 'https' };
}

type Answer = Extract<OidcVerdict, { kind: 'answer' }>;
const asAnswer = (v: OidcVerdict): Answer => {
  expect(v.kind).to.equal('answer');
  return v as Answer;
};
const cookiesOf = (a: Answer): string[] => [a.headers['set-cookie'] ?? []].flat();
const valueOf = (line: string): string => line.slice(line.indexOf('=') + 1, line.indexOf(';'));

describe('oidc policy', () => {
  let signer: TestSigner;
  let idp: FakeProvider;
  let discovery: ProviderDiscovery;
  let checker: OidcChecker;
  let sealer: CookieSealer;
  before(() => {
    signer = testSigner('idp-key', 'ES256');
  });
  beforeEach(() => {
    idp = new FakeProvider(signer);
    discovery = idp.discovery();
    checker = new OidcChecker(
      policy(),
      discovery,
      async (url, form, authorization) => {
        idp.posts.push({ url, form, authorization });
        return idp.answer(form);
      },
      () => idp.now,
    );
    sealer = new CookieSealer(cookieKey, ISSUER, 'tuna-app', () => idp.now);
  });
  afterEach(() => discovery.stop());

  /** login starts a sign-in at `path` and gives the provider's redirect URL and the login cookie line. */
  async function login(path = '/orders?id=7'): Promise<{ location: URL; loginCookie: string }> {
    const a = asAnswer(await checker.check(request(path, { accept: HTML })));
    expect(a.status).to.equal(302);
    const location = new URL(String(a.headers.location));
    idp.nonce = location.searchParams.get('nonce')!;
    return { location, loginCookie: cookiesOf(a)[0]! };
  }

  /** signIn goes through the whole flow and gives the session cookie's value. */
  async function signIn(): Promise<string> {
    const { location, loginCookie } = await login();
    const a = asAnswer(await checker.check(request(`/.tuna/oidc/callback?code=c1&state=${location.searchParams.get('state')}`, { cookie: `tuna_oidc_login=${valueOf(loginCookie)}` })));
    expect(a.status, a.body).to.equal(302);
    return valueOf(cookiesOf(a)[0]!);
  }

  describe('login', () => {
    it('sends a browser to the authorization endpoint with code, PKCE S256, state and nonce, the verifier only in the sealed login cookie', async () => {
      const { location, loginCookie } = await login();
      expect(location.origin + location.pathname).to.equal(`${ISSUER}/auth`);
      const q = Object.fromEntries(location.searchParams);
      expect(q).to.include({ response_type: 'code', client_id: 'tuna-app', redirect_uri: 'https://app.test/.tuna/oidc/callback', scope: 'openid email', code_challenge_method: 'S256' });
      expect(q.state).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(q.nonce).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(loginCookie).to.match(/^tuna_oidc_login=[^;]+; Path=\/\.tuna\/oidc; HttpOnly; SameSite=Lax; Secure; Max-Age=600$/);
      const state = await sealer.openLogin(valueOf(loginCookie));
      expect(state).to.deep.include({ state: q.state, nonce: q.nonce, returnTo: '/orders?id=7' });
      expect(state!.verifier).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(q.code_challenge).to.equal(pkceChallenge(state!.verifier));
      expect(location.search).not.to.contain(state!.verifier);
      const again = await login();
      for (const k of ['state', 'nonce', 'code_challenge']) expect(again.location.searchParams.get(k)).not.to.equal(q[k]);
    });

    it('answers 401 instead of a redirect to requests that are not a browser page load', async () => {
      for (const [headers, method] of [[{}, 'GET'], [{ accept: 'application/json' }, 'GET'], [{ accept: HTML }, 'POST'], [{ accept: 'text/htmlx' }, 'GET']] as const) {
        const a = asAnswer(await checker.check(request('/api', headers, method)));
        expect(a.status, JSON.stringify(headers) + method).to.equal(401);
        expect(a.headers['www-authenticate']).to.equal('Cookie realm="tuna"');
        expect(a.headers['set-cookie']).to.equal(undefined);
      }
    });

    it('goes back to the page asked for, never to another host', async () => {
      for (const [path, back] of [['/a/b?c=d', '/a/b?c=d'], ['//evil.test/x', '/'], ['/\\evil.test', '/']]) {
        const { loginCookie } = await login(path);
        expect((await sealer.openLogin(valueOf(loginCookie)))!.returnTo, path).to.equal(back);
      }
    });
  });

  describe('callback', () => {
    it('exchanges the code with client_secret_basic and the verifier, verifies the ID token, sets the session and clears the login cookie', async () => {
      const { location, loginCookie } = await login();
      const login1 = await sealer.openLogin(valueOf(loginCookie));
      const a = asAnswer(await checker.check(request(`/.tuna/oidc/callback?code=c1&state=${location.searchParams.get('state')}`, { cookie: `other=1; tuna_oidc_login=${valueOf(loginCookie)}` })));
      expect(a.status, a.body).to.equal(302);
      expect(a.headers.location).to.equal('/orders?id=7');
      const [session, cleared] = cookiesOf(a);
      expect(session).to.match(/^tuna_oidc=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
      expect(cleared).to.equal('tuna_oidc_login=; Path=/.tuna/oidc; HttpOnly; SameSite=Lax; Secure; Max-Age=0');
      const [post] = idp.posts;
      expect(post!.url).to.equal(`${ISSUER}/token`);
      expect(Object.fromEntries(post!.form)).to.deep.equal({ grant_type: 'authorization_code', code: 'c1', redirect_uri: 'https://app.test/.tuna/oidc/callback', code_verifier: login1!.verifier });
      expect(post!.authorization).to.equal(`Basic ${Buffer.from('tuna-app:s3cret%3Awith%2Fodd%20chars').toString('base64')}`);
      const v = await checker.check(request('/orders', { cookie: `tuna_oidc=${valueOf(session!)}` }));
      expect(v).to.deep.equal({ kind: 'pass', claimHeaders: { 'x-user': 'ann', 'x-email': 'ann@example.test' } });
    });

    it('answers 400 and sets no session for a wrong or missing state, or no login cookie', async () => {
      const { location, loginCookie } = await login();
      const cookie = `tuna_oidc_login=${valueOf(loginCookie)}`;
      for (const [query, headers] of [
        [`code=c1&state=${location.searchParams.get('state')!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}`, { cookie }],
        ['code=c1', { cookie }],
        [`code=c1&state=${location.searchParams.get('state')}`, {}],
        [`code=c1&state=${location.searchParams.get('state')}`, { cookie: `tuna_oidc_login=${valueOf(loginCookie).slice(0, -2)}xx` }],
      ] as const) {
        const a = asAnswer(await checker.check(request(`/.tuna/oidc/callback?${query}`, headers)));
        expect(a.status, query).to.equal(400);
        expect(a.body).to.match(/^bad sign-in callback: /);
        expect(a.headers['set-cookie']).to.equal(undefined);
      }
      expect(idp.posts).to.have.length(0);
    });

    it('refuses (502, no session) an ID token with another nonce, audience or issuer, expired, or signed with HMAC or by another key', async () => {
      const other = testSigner('idp-key', 'ES256');
      const cases: Record<string, () => Promise<string>> = {
        nonce: () => idp.idToken({ nonce: 'other' }),
        audience: () => idp.idToken({ nonce: idp.nonce, aud: 'someone-else' }),
        issuer: () => idp.idToken({ nonce: idp.nonce, iss: 'https://evil.test' }),
        expired: () => idp.idToken({ nonce: idp.nonce, exp: idp.now - 120 }),
        'another key': () => new SignJWT({ iss: ISSUER, aud: 'tuna-app', sub: 'ann', nonce: idp.nonce, iat: idp.now, exp: idp.now + 300 }).setProtectedHeader({ alg: 'ES256', kid: 'idp-key' }).sign(other.privateKey),
        hmac: () => new SignJWT({ iss: ISSUER, aud: 'tuna-app', sub: 'ann', nonce: idp.nonce, iat: idp.now, exp: idp.now + 300 }).setProtectedHeader({ alg: 'HS256', kid: 'idp-key' }).sign(Buffer.from('k'.repeat(32))),
      };
      for (const [name, make] of Object.entries(cases)) {
        const { location, loginCookie } = await login();
        const token = await make();
        idp.answer = async () => ({ status: 200, text: JSON.stringify({ token_type: 'Bearer', id_token: token }) });
        const a = asAnswer(await checker.check(request(`/.tuna/oidc/callback?code=c&state=${location.searchParams.get('state')}`, { cookie: `tuna_oidc_login=${valueOf(loginCookie)}` })));
        expect(a.status, name).to.equal(502);
        expect(a.body, name).to.match(/ID token/);
        expect(a.headers['set-cookie'], name).to.equal(undefined);
      }
    });

    it('answers 403 naming the provider\'s error code when it refused the sign-in, and exchanges nothing', async () => {
      const { location, loginCookie } = await login();
      const a = asAnswer(await checker.check(request(`/.tuna/oidc/callback?error=access_denied%3Cb%3E&state=${location.searchParams.get('state')}`, { cookie: `tuna_oidc_login=${valueOf(loginCookie)}` })));
      expect([a.status, a.body, a.headers['set-cookie']]).to.deep.equal([403, 'the provider refused the sign-in: access_denied?b?\n', undefined]);
      expect(idp.posts).to.have.length(0);
    });

    it('accepts only the ID token algorithms the provider names, of RS*, ES* and EdDSA', async () => {
      discovery.stop();
      idp.config.id_token_signing_alg_values_supported = ['RS256'];
      discovery = idp.discovery();
      checker = new OidcChecker(policy(), discovery, async (_u, form) => idp.answer(form), () => idp.now);
      const { location, loginCookie } = await login();
      const a = asAnswer(await checker.check(request(`/.tuna/oidc/callback?code=c&state=${location.searchParams.get('state')}`, { cookie: `tuna_oidc_login=${valueOf(loginCookie)}` })));
      expect([a.status, a.body]).to.deep.equal([502, 'the sign-in could not be completed: the ID token did not verify\n']);
    });

    it('answers 502 with the provider\'s error code when the token endpoint refuses the code', async () => {
      const { location, loginCookie } = await login();
      idp.answer = async () => ({ status: 400, text: '{"error":"invalid_grant","error_description":"<script>"}' });
      const a = asAnswer(await checker.check(request(`/.tuna/oidc/callback?code=c&state=${location.searchParams.get('state')}`, { cookie: `tuna_oidc_login=${valueOf(loginCookie)}` })));
      expect([a.status, a.body]).to.deep.equal([502, 'the sign-in could not be completed: the token endpoint answered 400 invalid_grant\n']);
    });
  });

  describe('session cookie', () => {
    it('refuses a tampered cookie, one sealed with another key, a login cookie in its place, and one past its lifetime: the browser logs in again', async () => {
      const value = await signIn();
      const parts = value.split('.');
      const flip = (s: string): string => (s[5] === 'A' ? `${s.slice(0, 5)}B${s.slice(6)}` : `${s.slice(0, 5)}A${s.slice(6)}`);
      const tampered = [parts[0], parts[1], parts[2], flip(parts[3]!), parts[4]].join('.');
      const tag = [parts[0], parts[1], parts[2], parts[3], flip(parts[4]!)].join('.');
      const otherKey = await new CookieSealer(randomBytes(32).toString('base64url'), ISSUER, 'tuna-app', () => idp.now).sealSession({ sub: 'mallory', claims: { sub: 'mallory' }, idExpires: idp.now + 300 }, 3600);
      const otherClient = await new CookieSealer(cookieKey, ISSUER, 'other-app', () => idp.now).sealSession({ sub: 'mallory', claims: { sub: 'mallory' }, idExpires: idp.now + 300 }, 3600);
      const loginAsSession = await sealer.sealLogin({ state: 's', nonce: 'n', verifier: 'v', returnTo: '/' }, 600);
      for (const [name, v] of Object.entries({ tampered, tag, otherKey, otherClient, loginAsSession, huge: 'a.b.c.d.' + 'e'.repeat(5000) })) {
        const a = asAnswer(await checker.check(request('/', { accept: HTML, cookie: `tuna_oidc=${v}` })));
        expect(a.status, name).to.equal(302);
        expect(String(a.headers.location), name).to.match(/^https:\/\/idp\.test\/auth\?/);
      }
      expect(await checker.check(request('/', { cookie: `tuna_oidc=${value}` }))).to.include({ kind: 'pass' });
      idp.now += 3601;
      idp.refreshToken = undefined;
      expect(asAnswer(await checker.check(request('/', { accept: HTML, cookie: `tuna_oidc=${value}` }))).status).to.equal(302);
    });

    it('ends a remembered session when the cookie\'s own lifetime ends, even while its ID token is valid', async () => {
      checker = new OidcChecker(policy({ sessionSeconds: 120 }), discovery, async (_u, form) => idp.answer(form), () => idp.now);
      const value = await signIn();
      expect(await checker.check(request('/', { cookie: `tuna_oidc=${value}` }))).to.include({ kind: 'pass' });
      idp.now += 121; // the ID token (300 s) is still valid
      expect(asAnswer(await checker.check(request('/', { cookie: `tuna_oidc=${value}` }))).status).to.equal(401);
    });

    it('seals with A256GCM under the policy key and opens only its own', async () => {
      const sealed = await sealer.sealSession({ sub: 'ann', claims: { email: 'a@b' }, idExpires: 5, refreshToken: 'r' }, 60);
      expect(JSON.parse(Buffer.from(sealed.split('.')[0]!, 'base64url').toString())).to.deep.equal({ alg: 'dir', enc: 'A256GCM' });
      expect(sealed).not.to.contain('r"');
      expect(await sealer.openSession(sealed)).to.deep.equal({ sub: 'ann', claims: { email: 'a@b' }, idExpires: 5, refreshToken: 'r', expires: idp.now + 60 });
      expect(await sealer.openLogin(sealed)).to.equal(undefined);
    });
  });

  describe('expiry and refresh', () => {
    it('refreshes an expired ID token with the refresh token (one exchange for parallel requests) and sets the renewed cookie', async () => {
      const value = await signIn();
      idp.posts = [];
      idp.now += 301;
      idp.refreshToken = 'rt-2';
      const verdicts = await Promise.all([1, 2, 3].map(() => checker.check(request('/', { cookie: `tuna_oidc=${value}` }))));
      expect(idp.posts).to.have.length(1);
      expect(Object.fromEntries(idp.posts[0]!.form)).to.deep.equal({ grant_type: 'refresh_token', refresh_token: 'rt-1', scope: 'openid email' });
      for (const v of verdicts) {
        expect(v.kind).to.equal('pass');
        expect(v.kind === 'pass' && v.claimHeaders).to.deep.equal({ 'x-user': 'ann', 'x-email': 'ann@example.test' });
      }
      const renewed = verdicts[0]!.kind === 'pass' ? verdicts[0]!.setCookie : undefined;
      expect(renewed).to.match(/^tuna_oidc=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Secure$/);
      const session = await sealer.openSession(valueOf(renewed!));
      expect(session).to.deep.include({ sub: 'ann', refreshToken: 'rt-2', idExpires: idp.now + 300 });
    });

    it('logs in again when the ID token expired and there is no refresh token, or the refresh is refused', async () => {
      idp.refreshToken = undefined;
      const value = await signIn();
      idp.now += 301;
      expect(asAnswer(await checker.check(request('/', { accept: HTML, cookie: `tuna_oidc=${value}` }))).status).to.equal(302);
      expect(asAnswer(await checker.check(request('/', { cookie: `tuna_oidc=${value}` }))).status).to.equal(401);
      idp.refreshToken = 'rt-1';
      const second = await signIn();
      idp.now += 301;
      idp.answer = async () => ({ status: 400, text: '{"error":"invalid_grant"}' });
      expect(asAnswer(await checker.check(request('/', { accept: HTML, cookie: `tuna_oidc=${second}` }))).status).to.equal(302);
    });
  });

  describe('logout and the provider', () => {
    it('logout clears the cookie and goes to the end_session_endpoint with the ID token hint; without one it answers 200', async () => {
      const value = await signIn();
      const a = asAnswer(await checker.check(request('/.tuna/oidc/logout', { cookie: `tuna_oidc=${value}` })));
      expect(a.status).to.equal(302);
      expect(cookiesOf(a)).to.deep.equal(['tuna_oidc=; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=0']);
      const end = new URL(String(a.headers.location));
      expect(end.origin + end.pathname).to.equal(`${ISSUER}/session/end`);
      expect(end.searchParams.get('client_id')).to.equal('tuna-app');
      expect(end.searchParams.get('post_logout_redirect_uri')).to.equal('https://app.test/');
      expect(end.searchParams.get('id_token_hint')).to.match(/^ey/);
      delete idp.config.end_session_endpoint;
      const d2 = idp.discovery();
      const plain = new OidcChecker(policy(), d2, async () => ({ status: 500, text: '' }), () => idp.now);
      await d2.provider();
      const b = asAnswer(await plain.check(request('/.tuna/oidc/logout', {})));
      expect([b.status, b.body, cookiesOf(b)]).to.deep.equal([200, 'signed out\n', ['tuna_oidc=; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=0']]);
      d2.stop();
    });

    it('answers 503 with the reason while the provider configuration cannot be had', async () => {
      discovery.stop();
      idp.config.broken = true;
      discovery = idp.discovery();
      checker = new OidcChecker(policy(), discovery, async () => ({ status: 500, text: '' }), () => idp.now);
      const a = asAnswer(await checker.check(request('/', { accept: HTML })));
      expect(a.status).to.equal(503);
      expect(a.body).to.equal('service unavailable: the OpenID provider\'s configuration could not be fetched from https://idp.test/.well-known/openid-configuration: connect ECONNREFUSED\n');
      expect(a.headers['retry-after']).to.equal('10');
    });

    it('parseProviderConfig refuses another issuer, a missing or plain-http endpoint, and non-JSON', () => {
      const good = { issuer: ISSUER, authorization_endpoint: `${ISSUER}/a`, token_endpoint: `${ISSUER}/t`, jwks_uri: `${ISSUER}/j` };
      expect(parseProviderConfig(JSON.stringify(good), ISSUER)).to.deep.equal({ issuer: ISSUER, authorizationEndpoint: `${ISSUER}/a`, tokenEndpoint: `${ISSUER}/t`, jwksUri: `${ISSUER}/j` });
      expect(parseProviderConfig(JSON.stringify({ ...good, issuer: 'https://evil.test' }), ISSUER)).to.match(/another issuer/);
      expect(parseProviderConfig(JSON.stringify({ ...good, token_endpoint: undefined }), ISSUER)).to.equal("the configuration's token_endpoint is missing");
      expect(parseProviderConfig(JSON.stringify({ ...good, jwks_uri: 'http://idp.test/j' }), ISSUER)).to.match(/jwks_uri is not an https URL/);
      expect(parseProviderConfig('<html>', ISSUER)).to.equal('the configuration is not valid JSON');
    });
  });

  describe('model and helpers', () => {
    it('parseOidcCookieSecret takes 32 bytes as base64, base64url or hex, and nothing shorter or textual', () => {
      const bytes = randomBytes(32);
      for (const form of [bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex'), ` ${bytes.toString('base64')}\n`]) expect(parseOidcCookieSecret(form)).to.equal(bytes.toString('base64url'));
      for (const bad of ['', 'correct horse battery staple', randomBytes(16).toString('base64'), randomBytes(33).toString('base64')]) expect(parseOidcCookieSecret(bad), bad).to.equal(undefined);
    });

    it('validatePolicies refuses a plain-http issuer off loopback, no openid scope, a bad key and a claim header that routes the request', () => {
      const errors = validatePolicies('r', { oidc: policy({ issuer: 'http://idp.example', scopes: ['email'], cookieKey: 'short', claimToHeaders: [{ claim: 'sub', header: 'Host' }] }) });
      expect(errors.join('\n')).to.contain('oidc.issuer').and.contain('oidc.scopes: openid missing').and.contain('oidc.cookieKey').and.contain('header Host may not be set');
      expect(validatePolicies('r', { oidc: policy({ issuer: 'http://127.0.0.1:9000' }) })).to.deep.equal([]);
      expect(errors.join('\n')).not.to.contain('s3cret');
    });

    it('withoutCookies removes the policy cookies from what the backend gets', () => {
      expect(withoutCookies('a=1; tuna_oidc=x; b=2', ['tuna_oidc', 'tuna_oidc_login'])).to.equal('a=1; b=2');
      expect(withoutCookies(['tuna_oidc=x', 'tuna_oidc_login=y'], ['tuna_oidc', 'tuna_oidc_login'])).to.equal(undefined);
    });
  });
});
