import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { join } from 'node:path';
import { JwtChecker } from '../../src/dataplane/policies/jwt.js';
import type { JwtVerdict } from '../../src/dataplane/policies/jwt.js';
import { InlineKeys, RemoteKeys } from '../../src/dataplane/policies/jwks.js';
import { isJwksUrl, parseJwks, validatePolicies } from '../../src/model/index.js';
import type { JwtPolicy } from '../../src/model/index.js';
import { hmacWithPublicKey, signToken, testJwtPolicy, testSigner, unsignedToken } from '../support/jwt-keys.js';
import type { TestSigner } from '../support/jwt-keys.js';

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

describe('jwt policy', () => {
  let rsa: TestSigner;
  let ec: TestSigner;
  let ed: TestSigner;
  let ps: TestSigner;
  before(() => {
    rsa = testSigner('rsa');
    ec = testSigner('ec', 'ES256');
    ed = testSigner('ed', 'EdDSA');
    ps = testSigner('ps', 'PS256');
  });

  const checker = (extra: Partial<JwtPolicy> = {}, signers = [rsa, ec, ed, ps]): JwtChecker => {
    const policy = testJwtPolicy(signers, extra);
    return new JwtChecker(policy, new InlineKeys(policy.jwks.kind === 'inline' ? policy.jwks.keys : []));
  };
  const status = async (c: JwtChecker, headers: Record<string, string>): Promise<JwtVerdict> => c.check(headers);

  describe('JwtChecker', () => {
    it('passes a token of each accepted key type (RS256, PS256, ES256, EdDSA) and copies claims into headers', async () => {
      const c = checker({ claimToHeaders: [{ claim: 'sub', header: 'X-User' }, { claim: 'admin', header: 'X-Admin' }, { claim: 'n', header: 'X-N' }, { claim: 'obj', header: 'X-Obj' }] });
      for (const s of [rsa, ps, ec, ed]) {
        const v = await status(c, bearer(await signToken(s, { sub: s.kid, admin: true, n: 7, obj: { a: 1 } })));
        expect(v, s.alg).to.deep.equal({ kind: 'pass', claimHeaders: { 'x-user': s.kid, 'x-admin': 'true', 'x-n': '7' } });
      }
      expect(c.strip).to.deep.equal(['x-user', 'x-admin', 'x-n', 'x-obj']);
    });

    it('answers a missing token 401 with a bare Bearer challenge (RFC 6750 §3.1: no error code)', async () => {
      for (const headers of [{} as Record<string, string>, { authorization: 'Basic dTpw' }, { authorization: 'Bearer' }]) {
        const v = await status(checker(), headers);
        expect(v).to.deep.include({ kind: 'refuse', status: 401 });
        expect(v.kind === 'refuse' && v.headers['www-authenticate']).to.equal('Bearer realm="api"');
      }
    });

    it('refuses every bad token with 401 invalid_token, saying nothing of which check failed', async () => {
      const other = testSigner('rsa'); // same kid, another key: a bad signature
      const now = Math.floor(Date.now() / 1000);
      const tokens: Record<string, string> = {
        'wrong iss': await signToken(rsa, { iss: 'https://evil.test' }),
        'wrong aud': await signToken(rsa, { aud: 'other.test' }),
        'bad signature': await signToken(other),
        expired: await signToken(rsa, { exp: now - 120 }),
        'no exp': await signToken(rsa, { exp: undefined }),
        'nbf ahead': await signToken(rsa, { nbf: now + 300 }),
        'iat ahead': await signToken(rsa, { iat: now + 300 }),
        'alg none': unsignedToken(),
        'HS256 with the public key (PEM) as secret': hmacWithPublicKey(rsa, 'pem'),
        'HS256 with the public key (JWK) as secret': hmacWithPublicKey(rsa, 'jwk'),
        'ES256 header on an RSA kid': await signToken(ec, {}, { kid: 'rsa' }),
        'unknown kid': await signToken(testSigner('nobody', 'ES256')),
        garbage: 'a.b.c',
      };
      for (const [what, token] of Object.entries(tokens)) {
        const v = await status(checker(), bearer(token));
        expect(v, what).to.deep.equal({ kind: 'refuse', status: 401, body: 'invalid token\n', headers: { 'www-authenticate': 'Bearer realm="api", error="invalid_token"' } });
      }
    });

    it('allows the clock skew on exp, nbf and iat', async () => {
      const now = Math.floor(Date.now() / 1000);
      for (const claims of [{ exp: now - 30 }, { nbf: now + 30 }, { iat: now + 30 }]) expect((await status(checker(), bearer(await signToken(rsa, claims)))).kind).to.equal('pass');
      expect((await status(checker({ clockSkewSeconds: 0 }), bearer(await signToken(rsa, { exp: now - 30 })))).kind).to.equal('refuse');
    });

    it('accepts any of several issuers and audiences, and an aud array naming one', async () => {
      const c = checker({ issuers: ['https://a.test', 'https://issuer.test'], audiences: ['x', 'api.test'] });
      expect((await status(c, bearer(await signToken(rsa, { aud: ['zzz', 'x'] })))).kind).to.equal('pass');
    });

    it('answers 403 insufficient_scope when a claim requirement does not hold', async () => {
      const c = checker({
        require: [
          { claim: 'tier', match: 'equals', value: 'gold' },
          { claim: 'groups', match: 'contains', value: 'ops' },
          { claim: 'scope', match: 'scope', value: 'write' },
        ],
      });
      const good = { tier: 'gold', groups: ['dev', 'ops'], scope: 'read write' };
      expect((await status(c, bearer(await signToken(rsa, good)))).kind).to.equal('pass');
      for (const bad of [{ tier: 'silver' }, { groups: ['dev'] }, { groups: 'ops' }, { scope: 'read writer' }, { tier: undefined }]) {
        const v = await status(c, bearer(await signToken(rsa, { ...good, ...bad })));
        expect(v, JSON.stringify(bad)).to.deep.include({ kind: 'refuse', status: 403 });
        expect(v.kind === 'refuse' && v.headers['www-authenticate']).to.equal('Bearer realm="api", error="insufficient_scope"');
      }
    });

    it('reads the token from the named header or cookie when Authorization has none', async () => {
      const token = await signToken(rsa);
      const c = checker({ header: 'X-Token', cookie: 'session' });
      expect((await status(c, { 'x-token': token })).kind).to.equal('pass');
      expect((await status(c, { cookie: `a=b; session=${token}; c=d` })).kind).to.equal('pass');
      expect((await status(checker(), { cookie: `session=${token}` })).kind).to.equal('refuse');
    });

    it('remembers a verified token (answered at once the second time), never a refused one', async () => {
      const c = checker();
      const token = await signToken(rsa);
      const first = c.check(bearer(token));
      expect(first).to.be.instanceOf(Promise);
      await first;
      expect(c.check(bearer(token))).to.deep.equal({ kind: 'pass', claimHeaders: {} });
      const bad = await signToken(rsa, { iss: 'x' });
      await c.check(bearer(bad));
      expect(c.check(bearer(bad))).to.be.instanceOf(Promise);
    });

    it('forgets a remembered token once it expires', async () => {
      let now = Date.now() / 1000;
      const policy = testJwtPolicy([rsa], { clockSkewSeconds: 0 });
      const c = new JwtChecker(policy, new InlineKeys([rsa.jwk]), () => now);
      const token = await signToken(rsa, { exp: Math.floor(now) + 5 });
      expect((await c.check(bearer(token))).kind).to.equal('pass');
      now += 10;
      expect(c.check(bearer(token))).to.be.instanceOf(Promise);
    });
  });

  it('loads jose only when a token is verified: a data plane without a JWT policy never does', function () {
    this.timeout(30_000);
    const root = join(import.meta.dirname, '..', '..');
    // a child process, where nothing has imported jose yet; a resolve hook records each import of it
    const script = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve: (spec, ctx, next) => { if (spec === 'jose') seen.push(spec); return next(spec, ctx); } });
      const { DataPlane, StaticEndpointResolver } = await import(${JSON.stringify(join(root, 'src/dataplane/index.ts'))});
      const { hostGraph, httpRoute, serviceBackend } = await import(${JSON.stringify(join(root, 'test/support/backend-graph.ts'))});
      const { PolicyCompiler } = await import(${JSON.stringify(join(root, 'src/dataplane/policies/compile.ts'))});
      const plane = new DataPlane({ endpoints: new StaticEndpointResolver() });
      plane.update(hostGraph([{ hostname: 'a.test', routes: [httpRoute('r', [serviceBackend('svc')], { extra: { policies: { keyAuth: { header: 'x-k', sha256: ['0'.repeat(64)] } } } })] }]));
      plane.close();
      const before = seen.length;
      const { testJwtPolicy, testSigner, signToken } = await import(${JSON.stringify(join(root, 'test/support/jwt-keys.ts'))});
      const signer = testSigner('k', 'ES256');
      const route = httpRoute('j', [serviceBackend('svc')], { extra: { policies: { jwt: testJwtPolicy([signer]) } } });
      const compiled = new PolicyCompiler(() => 0).compile(route, undefined);
      const verdict = await compiled.jwt.check({ authorization: 'Bearer ' + (await signToken(signer)) });
      console.log(JSON.stringify({ before, verdict: verdict.kind }));
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(run.status, run.stderr).to.equal(0);
    // the test's signing helper imports jose itself: only the count before it tells of the data plane
    const out = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { before: number; verdict: string };
    expect(out.before).to.equal(0);
    expect(out.verdict).to.equal('pass');
  });

  describe('RemoteKeys', () => {
    const clock = (): { now: () => number; advance: (ms: number) => void } => {
      let t = 0;
      return { now: () => t, advance: (ms) => void (t += ms) };
    };

    it('answers 503 while no key set could be fetched, and serves once one is', async () => {
      const c = clock();
      let served: string | undefined = undefined;
      let fetches = 0;
      const errors: string[] = [];
      const keys = new RemoteKeys('https://idp.test/jwks', 3_600_000, {
        fetch: () => {
          fetches++;
          return served === undefined ? Promise.reject(new Error('connect ECONNREFUSED')) : Promise.resolve(served);
        },
        now: c.now,
        onError: (_url, err) => errors.push((err as Error).message),
      });
      after(() => keys.stop());
      const jwt = new JwtChecker(testJwtPolicy([rsa]), keys);
      const token = await signToken(rsa);
      const v = await jwt.check(bearer(token));
      expect(v).to.deep.include({ kind: 'refuse', status: 503 });
      expect(errors[0]).to.include('ECONNREFUSED');
      // within the cooldown, requests do not fetch again
      await jwt.check(bearer(token));
      expect(fetches).to.equal(1);
      served = JSON.stringify({ keys: [rsa.jwk] });
      c.advance(10_000);
      expect((await jwt.check(bearer(token))).kind).to.equal('pass');
      expect(fetches).to.equal(2);
    });

    it('fetches again for an unknown kid (rate-limited), and keeps the last good keys when a fetch fails', async () => {
      const c = clock();
      let served: string | Error = JSON.stringify({ keys: [rsa.jwk] });
      let fetches = 0;
      const keys = new RemoteKeys('https://idp.test/jwks', 3_600_000, {
        fetch: () => {
          fetches++;
          return served instanceof Error ? Promise.reject(served) : Promise.resolve(served);
        },
        now: c.now,
        onError: () => undefined,
      });
      after(() => keys.stop());
      const jwt = new JwtChecker(testJwtPolicy([rsa]), keys);
      expect((await jwt.check(bearer(await signToken(rsa)))).kind).to.equal('pass');
      const rotated = testSigner('rotated', 'ES256');
      served = JSON.stringify({ keys: [rsa.jwk, rotated.jwk] });
      const newToken = await signToken(rotated);
      // the first fetch was just now: an unknown kid waits for the cooldown
      expect((await jwt.check(bearer(newToken))).kind).to.equal('refuse');
      c.advance(10_000);
      expect((await jwt.check(bearer(newToken))).kind).to.equal('pass');
      expect(fetches).to.equal(2);
      // a failed fetch (unreachable, then an invalid set) keeps the keys in force
      for (const bad of [new Error('ETIMEDOUT'), '{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}']) {
        served = bad;
        c.advance(10_000);
        expect((await jwt.check(bearer(await signToken(testSigner('unknown'))))).kind).to.equal('refuse');
        expect((await jwt.check(bearer(await signToken(rotated)))).kind).to.equal('pass');
      }
      expect(fetches).to.equal(4);
    });
  });

  describe('parseJwks', () => {
    it('keeps the public members of signing keys only, and leaves encryption keys out', () => {
      const priv = testSigner('p');
      const full = { ...(priv.privateKey.export({ format: 'jwk' }) as object), kid: 'p', alg: 'RS256' };
      const enc = { ...testSigner('e').jwk, use: 'enc', alg: undefined };
      const parsed = parseJwks(JSON.stringify({ keys: [full, enc] }));
      expect(parsed.kind).to.equal('ok');
      const key = parsed.kind === 'ok' ? parsed.keys : [];
      expect(key).to.have.length(1);
      expect(Object.keys(key[0]!).sort()).to.deep.equal(['alg', 'e', 'kid', 'kty', 'n']);
      expect(createPublicKey({ key: key[0] as never, format: 'jwk' }).asymmetricKeyType).to.equal('rsa');
    });

    it('refuses a malformed set or a key tuna cannot use, by key index, never quoting the content', () => {
      const cases: [unknown, string][] = [
        ['{"keys": [', 'not valid JSON'],
        ['secret-looking text', 'not valid JSON'],
        [{ keys: 'x' }, 'not a JSON Web Key Set'],
        [{ keys: [] }, 'no signing key'],
        [{ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }, 'key 0: unsupported key type "oct"'],
        [{ keys: [rsa.jwk, { ...ec.jwk, crv: 'secp256k1' }] }, 'key 1: EC key with curve secp256k1'],
        [{ keys: [{ ...rsa.jwk, alg: 'HS256' }] }, 'key 0: algorithm HS256 is not accepted'],
        [{ keys: [{ ...rsa.jwk, alg: 'ES256' }] }, 'key 0: algorithm ES256 does not fit a RSA key'],
        [{ keys: [{ ...ec.jwk, alg: 'ES384' }] }, 'key 0: algorithm ES384 does not fit a EC P-256 key'],
        [{ keys: [{ ...ec.jwk, x: 'AAAA', y: 'AAAA' }] }, 'key 0: not a valid public key'],
        [{ keys: [{ kty: 'EC', crv: 'P-256', x: 'AA' }] }, 'key 0: y missing'],
      ];
      for (const [input, error] of cases) {
        const parsed = parseJwks(typeof input === 'string' ? input : JSON.stringify(input));
        expect(parsed.kind, error).to.equal('invalid');
        expect(parsed.kind === 'invalid' ? parsed.error : '').to.include(error);
        expect(parsed.kind === 'invalid' ? parsed.error : '').not.to.include('secret');
      }
    });
  });

  describe('validation', () => {
    it('accepts an https key-set URL, or http to loopback only', () => {
      for (const u of ['https://idp.example/jwks', 'http://127.0.0.1:8080/jwks', 'http://[::1]/k', 'http://localhost/k']) expect(isJwksUrl(u), u).to.equal(true);
      for (const u of ['http://idp.example/jwks', 'http://10.0.0.1/jwks', 'ftp://127.0.0.1/', 'https://u:p@idp.example/', 'not a url']) expect(isJwksUrl(u), u).to.equal(false);
    });

    it('names each bad field of a jwt policy', () => {
      const p = testJwtPolicy([rsa], {
        realm: 'a"b',
        issuers: [],
        audiences: [''],
        clockSkewSeconds: -1,
        jwks: { kind: 'url', url: 'http://idp.example/jwks', refreshSeconds: 0 },
        cookie: 'a b',
        claimToHeaders: [{ claim: 'sub', header: 'Authorization' }, { claim: 'sub', header: 'bad header' }, { claim: 'a', header: 'X-A' }, { claim: 'b', header: 'x-a' }],
        require: [{ claim: 'scope', match: 'scope', value: 'a b' }],
      });
      const errors = validatePolicies('r', { jwt: p });
      for (const e of ['jwt.realm', 'jwt.issuers: empty', 'jwt.audiences: an empty value', 'jwt.clockSkewSeconds', 'jwt.jwks.url', 'jwt.jwks.refreshSeconds', 'jwt.cookie', 'header Authorization may not be set', 'invalid header name "bad header"', 'header x-a given twice', 'require: claim scope'])
        expect(errors.join('\n'), e).to.include(e);
      expect(validatePolicies('r', { jwt: testJwtPolicy([rsa]) })).to.deep.equal([]);
    });
  });
});
