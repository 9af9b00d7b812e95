import { expect } from 'chai';
import bcrypt from 'bcryptjs';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { newKey, startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { TEST_AUDIENCE, TEST_ISSUER, hmacWithPublicKey, signToken, startJwksServer, testSigner, unsignedToken } from '../support/jwt-keys.js';

/** Reply is one answer from the edge's public port. */
interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** send makes one request to the edge's public HTTP port; `chunks` are written one by one (chunked, no length). */
function send(port: number, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string; chunks?: string[] } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: 'app.test', ...options.headers };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = http.request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path ?? '/', headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.once('error', reject);
    if (options.chunks) for (const c of options.chunks) req.write(c);
    req.end(options.body);
  });
}

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('tuna http policy flags, through a real edge on loopback', function () {
  this.timeout(30_000);
  const { key, sha256 } = newKey();
  let edge: EdgeServer | undefined;
  let runs: CliRun[] = [];
  let backends: TestBackend[] = [];
  let dirs: string[] = [];
  let releases: (() => void)[] = [];

  /** publish starts an edge, an echo backend (or `backend`) and `tuna http` with `flags`; it returns the public port. */
  async function publish(flags: string[], backend?: TestBackend): Promise<{ port: number; backend: TestBackend }> {
    const target = backend ?? (await startHttpBackend('local'));
    backends.push(target);
    edge = await startEdge(
      decodeEdgeConfig({
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
        bindings: [{ id: 'binding/host/app.test', kind: 'host', hostnames: ['app.test'], keys: [{ sha256 }] }],
      }),
    );
    const run = cli(['http', String(target.port), '--host', 'app.test', '--edge', `tcp://127.0.0.1:${edge.address().tunnel.port}`, '--key', key, ...flags]);
    await run.waitForOut('Forwarding app.test');
    return { port: edge.address().http!.port, backend: target };
  }

  function cli(argv: string[]): CliRun {
    const run = startCli(argv);
    runs.push(run);
    return run;
  }

  function tempFile(name: string, content: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'tuna-policies-'));
    dirs.push(dir);
    writeFileSync(join(dir, name), content);
    return join(dir, name);
  }

  afterEach(async () => {
    for (const r of releases) r();
    for (const r of runs) r.stop();
    await Promise.all(runs.map((r) => r.exit.catch(() => 0)));
    await edge?.close();
    await Promise.all(backends.map((b) => b.close()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    runs = [];
    backends = [];
    dirs = [];
    releases = [];
    edge = undefined;
  });

  it('--basic-auth USER:PASSWORD answers 401 with a challenge until the right password comes', async () => {
    const { port, backend } = await publish(['--basic-auth', 'ann:s3cret']);
    const none = await send(port);
    expect(none.status).to.equal(401);
    expect(none.headers['www-authenticate']).to.equal('Basic realm="tuna", charset="UTF-8"');
    expect((await send(port, { headers: { authorization: basic('ann', 'wrong') } })).status).to.equal(401);
    expect((await send(port, { headers: { authorization: basic('bob', 's3cret') } })).status).to.equal(401);
    expect(backend.requests).to.have.length(0);
    const good = await send(port, { headers: { authorization: basic('ann', 's3cret') } });
    expect(good.status).to.equal(200);
    expect(backend.requests).to.have.length(1);
    // A second request with the same credential is served from the remembered verification.
    expect((await send(port, { headers: { authorization: basic('ann', 's3cret') } })).status).to.equal(200);
  });

  it('--basic-auth FILE reads htpasswd entries, bcrypt ($2y$) and {SHA}', async () => {
    const bcryptLine = `bea:${bcrypt.hashSync('pw-b', 4).replace(/^\$2b\$/, '$2y$')}`;
    const shaLine = `sam:{SHA}${createHash('sha1').update('pw-s').digest('base64')}`;
    const file = tempFile('htpasswd', `# users\n${bcryptLine}\n\n${shaLine}\n`);
    const { port } = await publish(['--basic-auth', file]);
    expect((await send(port, { headers: { authorization: basic('bea', 'pw-b') } })).status).to.equal(200);
    expect((await send(port, { headers: { authorization: basic('sam', 'pw-s') } })).status).to.equal(200);
    expect((await send(port, { headers: { authorization: basic('sam', 'pw-b') } })).status).to.equal(401);
  });

  it('--key-auth requires the header to carry one of the keys', async () => {
    const { port } = await publish(['--key-auth', 'X-Api-Key:k-one', '--key-auth', 'X-Api-Key:k-two']);
    const none = await send(port);
    expect(none.status).to.equal(401);
    expect(none.body).to.contain('x-api-key');
    expect((await send(port, { headers: { 'x-api-key': 'k-three' } })).status).to.equal(401);
    expect((await send(port, { headers: { 'x-api-key': 'k-two' } })).status).to.equal(200);
  });

  it('--ip-deny refuses the client address the edge saw, whatever X-Forwarded-For claims', async () => {
    const { port, backend } = await publish(['--ip-deny', '127.0.0.0/8']);
    const res = await send(port, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(res.status).to.equal(403);
    expect(backend.requests).to.have.length(0);
  });

  it('--ip-allow lets only its ranges in (IPv4 and IPv6 lists), and a forged X-Forwarded-For does not get in', async () => {
    const { port } = await publish(['--ip-allow', '10.0.0.0/8,2001:db8::/32']);
    expect((await send(port, { headers: { 'x-forwarded-for': '10.1.2.3' } })).status).to.equal(403);
    runs[0]!.stop();
    await runs[0]!.exit;
    await edge?.close();
    const again = await publish(['--ip-allow', '::1', '--ip-allow', '127.0.0.1/32']);
    expect((await send(again.port)).status).to.equal(200);
  });

  it('--rate-limit answers 429 with Retry-After once the client address spent its requests', async () => {
    const { port, backend } = await publish(['--rate-limit', '2/m']);
    expect((await send(port)).status).to.equal(200);
    expect((await send(port)).status).to.equal(200);
    const limited = await send(port);
    expect(limited.status).to.equal(429);
    // One token per 30 s: the wait is at most 30 s and at least 1.
    expect(Number(limited.headers['retry-after'])).to.be.within(1, 30);
    expect(backend.requests).to.have.length(2);
  });

  it('--https-redirect sends plain-HTTP requests to https, path and query kept', async () => {
    const { port, backend } = await publish(['--https-redirect']);
    const res = await send(port, { path: '/a/b?c=1' });
    expect(res.status).to.equal(308);
    expect(res.headers.location).to.equal('https://app.test/a/b?c=1');
    expect(backend.requests).to.have.length(0);
  });

  it('--request-header and --response-header set, add and remove headers', async () => {
    const target = await startHttpBackend('hdr', (req, res) => {
      res.setHeader('x-backend', 'yes');
      res.setHeader('x-kept', 'k');
      res.end(JSON.stringify({ headers: req.headers }));
    });
    const flags = ['--request-header', 'X-Set:new', '--request-header', '+X-Add:two', '--request-header', 'X-Drop:', '--response-header', 'X-Resp:r', '--response-header', 'x-backend:'];
    const { port } = await publish(flags, target);
    const res = await send(port, { headers: { 'x-set': 'old', 'x-add': 'one', 'x-drop': 'gone' } });
    const seen = (JSON.parse(res.body) as EchoReply).headers;
    expect(seen['x-set']).to.equal('new');
    expect(seen['x-add']).to.equal('one,two');
    expect(seen['x-drop']).to.equal(undefined);
    expect(res.headers['x-resp']).to.equal('r');
    expect(res.headers['x-backend']).to.equal(undefined);
    expect(res.headers['x-kept']).to.equal('k');
  });

  it('--max-body answers 413 to a longer body, declared or chunked, and passes a shorter one', async () => {
    const { port, backend } = await publish(['--max-body', '10']);
    const declared = await send(port, { method: 'POST', body: 'x'.repeat(20) });
    expect(declared.status).to.equal(413);
    expect(backend.requests).to.have.length(0);
    expect((await send(port, { method: 'POST', body: 'short' })).status).to.equal(200);
    const chunked = await send(port, { method: 'POST', chunks: ['x'.repeat(8), 'y'.repeat(8)] });
    expect(chunked.status).to.equal(413);
    expect((await send(port, { method: 'POST', chunks: ['abc', 'def'] })).status).to.equal(200);
  });

  it('--cors answers preflights and decorates responses for allowed origins only', async () => {
    const { port, backend } = await publish(['--cors', 'https://a.example']);
    const preflight = await send(port, { method: 'OPTIONS', headers: { origin: 'https://a.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'x-thing' } });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers['access-control-allow-origin']).to.equal('https://a.example');
    expect(preflight.headers['access-control-allow-headers']).to.equal('x-thing');
    expect(backend.requests).to.have.length(0);
    const simple = await send(port, { headers: { origin: 'https://a.example' } });
    expect(simple.status).to.equal(200);
    expect(simple.headers['access-control-allow-origin']).to.equal('https://a.example');
    const other = await send(port, { headers: { origin: 'https://evil.example' } });
    expect(other.headers['access-control-allow-origin']).to.equal(undefined);
  });

  it('--timeout answers 504 when the backend has not answered in time', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((r) => (release = r));
    releases.push(() => release());
    const slow = await startHttpBackend('slow', (_req, res) => void released.then(() => res.end('late')));
    const { port } = await publish(['--timeout', '200ms'], slow);
    const res = await send(port);
    expect(res.status).to.equal(504);
    expect(res.body).to.contain('timeout');
  });

  it('--jwt-* verify a bearer JWT from a JWKS file: 401 with a challenge for each bad token, claims to headers (a forged one removed), 403 for a requirement', async () => {
    const signer = testSigner('k1');
    const file = tempFile('jwks.json', JSON.stringify({ keys: [signer.jwk] }));
    const flags = ['--jwt-issuer', TEST_ISSUER, '--jwt-audience', TEST_AUDIENCE, '--jwt-jwks', file, '--jwt-claim-header', 'sub=X-User', '--jwt-require', 'scope~=orders'];
    const { port, backend } = await publish(flags);
    const none = await send(port);
    expect(none.status).to.equal(401);
    expect(none.headers['www-authenticate']).to.equal('Bearer realm="tuna"');
    const now = Math.floor(Date.now() / 1000);
    const bad: Record<string, string> = {
      'wrong iss': await signToken(signer, { iss: 'https://evil.test', scope: 'orders' }),
      'wrong aud': await signToken(signer, { aud: 'other', scope: 'orders' }),
      'wrong signature': await signToken(testSigner('k1'), { scope: 'orders' }),
      expired: await signToken(signer, { exp: now - 3600, scope: 'orders' }),
      'alg none': unsignedToken({ scope: 'orders' }),
      'HS256 with the public key as secret': hmacWithPublicKey(signer),
    };
    for (const [what, token] of Object.entries(bad)) {
      const res = await send(port, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, what).to.equal(401);
      expect(res.headers['www-authenticate'], what).to.equal('Bearer realm="tuna", error="invalid_token"');
      expect(res.body, what).to.equal('invalid token\n');
    }
    expect(backend.requests).to.have.length(0);
    const good = await send(port, { headers: { authorization: `Bearer ${await signToken(signer, { sub: 'ann', scope: 'read orders' })}`, 'x-user': 'admin' } });
    expect(good.status).to.equal(200);
    expect((JSON.parse(good.body) as EchoReply).headers['x-user']).to.equal('ann');
    // a token without the claim: the client's own X-User still never reaches the server
    const noSub = await send(port, { headers: { authorization: `Bearer ${await signToken(signer, { scope: 'orders' })}`, 'x-user': 'admin' } });
    expect(noSub.status).to.equal(200);
    expect((JSON.parse(noSub.body) as EchoReply).headers['x-user']).to.equal(undefined);
    const forbidden = await send(port, { headers: { authorization: `Bearer ${await signToken(signer, { scope: 'read' })}` } });
    expect(forbidden.status).to.equal(403);
    expect(forbidden.headers['www-authenticate']).to.equal('Bearer realm="tuna", error="insufficient_scope"');
  });

  it('--jwt-jwks URL fetches the keys from a loopback server; an unreachable one answers 503 and logs why', async () => {
    const signer = testSigner('k1', 'ES256');
    const jwks = await startJwksServer([signer.jwk]);
    backends.push({ close: () => jwks.close() } as TestBackend);
    const { port } = await publish(['--jwt-issuer', TEST_ISSUER, '--jwt-audience', TEST_AUDIENCE, '--jwt-jwks', jwks.url]);
    expect((await send(port, { headers: { authorization: `Bearer ${await signToken(signer)}` } })).status).to.equal(200);
    expect(jwks.fetches).to.be.at.least(1);
    await edge?.close();
    for (const r of runs) r.stop();
    await Promise.all(runs.map((r) => r.exit.catch(() => 0)));
    runs = [];
    const down = await startJwksServer([]);
    const closedUrl = down.url;
    await down.close();
    const { port: port2 } = await publish(['--jwt-issuer', TEST_ISSUER, '--jwt-audience', TEST_AUDIENCE, '--jwt-jwks', closedUrl]);
    const res = await send(port2, { headers: { authorization: `Bearer ${await signToken(signer)}` } });
    expect(res.status).to.equal(503);
    expect(res.body).to.contain('signing keys could not be fetched');
    // the log line was written before the 503 was sent
    expect(runs[0]!.err.join('\n')).to.match(new RegExp(`JWT key set ${closedUrl} could not be fetched .*ECONNREFUSED`));
  });

  it('lists every policy flag in tuna http --help', async () => {
    const run = cli(['http', '--help']);
    expect(await run.exit).to.equal(0);
    const help = run.out.join('\n');
    for (const flag of ['--https-redirect', '--rate-limit', '--basic-auth', '--key-auth', '--request-header', '--response-header', '--ip-allow', '--ip-deny', '--max-body', '--cors', '--timeout', '--jwt-issuer', '--jwt-audience', '--jwt-jwks', '--jwt-claim-header', '--jwt-require', '--jwt-cookie', '--jwt-header', '--oidc-issuer', '--oidc-client-id', '--oidc-client-secret-file', '--oidc-scope', '--oidc-cookie-secret-file', '--oidc-claim-header'])
      expect(help, flag).to.contain(flag);
  });

  it('refuses bad policy values with a usage error naming the flag', async () => {
    const badHtpasswd = tempFile('htpasswd', 'ann:$apr1$abc$def\nbob\n');
    const badJwks = tempFile('jwks.json', '{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}');
    const clientSecret = tempFile('client-secret', 's3cret\n');
    const shortCookie = tempFile('cookie-secret', 'correct horse battery staple');
    const oidc = ['--oidc-issuer', 'https://idp.example', '--oidc-client-id', 'app', '--oidc-client-secret-file', clientSecret];
    const cases: [string[], string][] = [
      [['--rate-limit=-5/m'], '--rate-limit'],
      [['--rate-limit', '0/m'], '--rate-limit'],
      [['--ip-allow', '10.0.0.0/33'], '--ip-allow'],
      [['--ip-deny', '300.1.2.3'], '--ip-deny'],
      [['--basic-auth', badHtpasswd], 'line 1: user ann: unsupported hash'],
      [['--basic-auth', 'nocolon'], '--basic-auth'],
      [['--max-body', '0'], '--max-body'],
      [['--timeout', 'soon'], '--timeout'],
      [['--request-header', 'Bad Name:v'], '--request-header'],
      [['--key-auth', 'A:1', '--key-auth', 'B:2'], '--key-auth'],
      [['--cors', 'not-an-origin'], '--cors'],
      [['--jwt-issuer', 'https://i.test', '--jwt-audience', 'a'], 'a JWT policy needs --jwt-jwks'],
      [['--jwt-issuer', 'i', '--jwt-audience', 'a', '--jwt-jwks', 'http://idp.example/jwks'], '--jwt-jwks: "http://idp.example/jwks" is not an https URL'],
      [['--jwt-issuer', 'i', '--jwt-audience', 'a', '--jwt-jwks', badJwks], 'key 0: unsupported key type "oct"'],
      [['--jwt-issuer', 'i', '--jwt-audience', 'a', '--jwt-jwks', 'no-such-file'], '--jwt-jwks'],
      [['--jwt-issuer', 'i', '--jwt-audience', 'a', '--jwt-jwks', 'https://idp.example/jwks', '--jwt-claim-header', 'sub=Host'], '--jwt-claim-header: header Host may not be set'],
      [['--jwt-issuer', 'i', '--jwt-audience', 'a', '--jwt-jwks', 'https://idp.example/jwks', '--jwt-require', 'nothing'], '--jwt-require'],
      [['--oidc-issuer', 'https://idp.example'], 'an OIDC policy needs --oidc-client-id, --oidc-client-secret-file too'],
      [['--oidc-issuer', 'http://idp.example', '--oidc-client-id', 'app', '--oidc-client-secret-file', clientSecret], '--oidc-issuer: "http://idp.example" is not an https URL'],
      [['--oidc-issuer', 'https://idp.example', '--oidc-client-id', 'app', '--oidc-client-secret-file', 'no-such-file'], '--oidc-client-secret-file no-such-file: not a readable file'],
      [[...oidc, '--oidc-cookie-secret-file', shortCookie], '--oidc-cookie-secret-file'],
      [[...oidc, '--oidc-claim-header', 'email=Cookie'], '--oidc-claim-header: header Cookie may not be set'],
      [[...oidc, '--oidc-scope', 'bad"scope'], '--oidc-scope'],
      [[...oidc, '--processes', '2'], '--processes with --oidc-issuer needs --oidc-cookie-secret-file'],
    ];
    for (const [flags, named] of cases) {
      const run = cli(['http', '1', '--no-check', '--edge', 'tcp://127.0.0.1:1', '--key', 'k', ...flags]);
      expect(await run.exit, flags.join(' ')).to.equal(2);
      expect(run.err.join('\n'), flags.join(' ')).to.contain(named);
    }
  });
});
