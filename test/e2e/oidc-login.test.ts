import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
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
import type { TestBackend } from '../support/backend-servers.js';
import { Browser, installChromium } from '../support/chromium.js';
import { TEST_EMAIL, TEST_PASSWORD, TEST_USER, startTestIdp } from '../support/oidc-idp.js';
import type { TestIdp } from '../support/oidc-idp.js';

/** get makes one request to the edge's public port as a non-browser client would. */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: { host: 'app.test', ...headers }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

/**
 * OIDC login end to end: headless Chromium asks for an app through a real edge and `tuna http
 * --oidc-*`, is sent to a real OpenID provider (panva's oidc-provider on loopback), signs in with
 * the test user on its sign-in and consent pages, comes back and sees the app, whose backend gets
 * the claim headers. Every name resolves to 127.0.0.1 (app.test) or is a loopback address.
 */
describe('tuna http --oidc-*: a browser signs in through a real OpenID provider', function () {
  this.timeout(90_000);
  const { key, sha256 } = newKey();
  let chromium = '';
  let edge: EdgeServer | undefined;
  let idp: TestIdp | undefined;
  let run: CliRun | undefined;
  let backend: TestBackend | undefined;
  let browser: Browser | undefined;
  let dir = '';

  before(async function () {
    this.timeout(600_000);
    chromium = await installChromium();
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-oidc-'));
  });

  afterEach(async () => {
    await browser?.close();
    run?.stop();
    await run?.exit;
    await edge?.close();
    await idp?.close();
    await backend?.close();
    browser = undefined;
    run = undefined;
    edge = undefined;
    idp = undefined;
    backend = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** publish starts the app's backend, an edge for app.test and `tuna http` with `flags(edgePort)`; it returns the edge's public port. */
  async function publish(flags: (port: number) => Promise<string[]> | string[]): Promise<number> {
    backend = await startHttpBackend('app', (req, res) => {
      const user = String(req.headers['x-user'] ?? '');
      const email = String(req.headers['x-email'] ?? '');
      if ((req.url ?? '').startsWith('/api/')) {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ user, email, cookie: req.headers.cookie ?? null }));
      }
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><title>orders</title><h1 id="app">orders app</h1><p id="who">${user} ${email}</p>`);
    });
    edge = await startEdge(
      decodeEdgeConfig({
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
        bindings: [{ id: 'binding/host/app.test', kind: 'host', hostnames: ['app.test'], keys: [{ sha256 }] }],
      }),
    );
    const port = edge.address().http!.port;
    run = startCli(['http', String(backend.port), '--host', 'app.test', '--edge', `tcp://127.0.0.1:${edge.address().tunnel.port}`, '--key', key, ...(await flags(port))]);
    await run.waitForOut('Forwarding app.test');
    return port;
  }

  function file(name: string, content: string): string {
    writeFileSync(join(dir, name), content, { mode: 0o600 });
    return join(dir, name);
  }

  async function oidcFlags(port: number): Promise<string[]> {
    idp = await startTestIdp({ redirectUri: `http://app.test:${port}/.tuna/oidc/callback`, postLogoutRedirectUri: `http://app.test:${port}/` });
    return [
      '--oidc-issuer', idp.issuer,
      '--oidc-client-id', idp.clientId,
      '--oidc-client-secret-file', file('client-secret', `${idp.clientSecret}\n`),
      '--oidc-scope', 'email',
      '--oidc-cookie-secret-file', file('cookie-secret', randomBytes(32).toString('base64')),
      '--oidc-claim-header', 'sub=X-User',
      '--oidc-claim-header', 'email=X-Email',
    ]; // prettier-ignore
  }

  it('signs in on the provider\'s pages, shows the app with the claim headers, logs in again for a tampered cookie, and logs out; a non-browser client gets 401', async () => {
    const port = await publish(oidcFlags);
    const app = `http://app.test:${port}`;
    browser = await Browser.launch(chromium, 1280, 760, ['app.test']);
    await browser.navigate(`${app}/orders?id=7`);

    // The provider's sign-in page: a wrong password first, then the test user's.
    await browser.waitFor('the sign-in form', `location.origin === ${JSON.stringify(idp!.issuer)} && !!document.getElementById('login')`);
    await browser.type('#login', TEST_USER);
    await browser.type('#password', 'not-the-password');
    await browser.click('#sign-in');
    await browser.waitFor('the wrong-password note', `!!document.getElementById('error')`);
    await browser.type('#login', TEST_USER);
    await browser.type('#password', TEST_PASSWORD);
    await browser.click('#sign-in');
    await browser.waitFor('the consent page', `!!document.getElementById('allow')`);
    await browser.click('#allow');

    await browser.waitFor('the app', `location.href === ${JSON.stringify(`${app}/orders?id=7`)} && !!document.getElementById('app')`);
    expect(await browser.evaluate<string>(`document.getElementById('who').textContent`)).to.equal(`${TEST_USER} ${TEST_EMAIL}`);
    expect(idp!.counts).to.include({ wrongPasswords: 1, authorizations: 1, codeGrants: 1 });
    const cookies = await browser.cookies(app);
    const session = cookies.find((c) => c.name === 'tuna_oidc');
    expect(session).to.deep.include({ path: '/', httpOnly: true, secure: false, sameSite: 'Lax' });
    expect(cookies.map((c) => c.name)).not.to.include('tuna_oidc_login');

    // A page's own request with a forged claim header: the backend sees the session's claims, and never the session cookie.
    const seen = await browser.evaluate<{ user: string; email: string; cookie: string | null }>(`fetch('/api/me', { headers: { 'X-User': 'mallory', 'X-Email': 'm@evil.test' } }).then((r) => r.json())`);
    expect(seen).to.deep.equal({ user: TEST_USER, email: TEST_EMAIL, cookie: null });

    // Not a browser, no session: 401, not a redirect.
    const api = await get(port, '/api/me', { accept: 'application/json', 'x-user': 'mallory' });
    expect([api.status, api.body, api.headers.location]).to.deep.equal([401, 'authentication required: sign in with a browser\n', undefined]);
    expect(backend!.requests.filter((r) => r.headers['x-user'] === 'mallory')).to.have.length(0);

    // A tampered session cookie opens nothing: the browser goes through the provider again (its session there is still live).
    const forged = `${session!.value.slice(0, -6)}${session!.value.slice(-6).split('').reverse().join('')}`;
    expect(forged).not.to.equal(session!.value);
    await browser.setCookie(app, { name: 'tuna_oidc', value: forged, path: '/', httpOnly: true, sameSite: 'Lax' });
    await browser.navigate(`${app}/orders?id=8`);
    await browser.waitFor('the app again', `location.href === ${JSON.stringify(`${app}/orders?id=8`)} && !!document.getElementById('app')`);
    expect(idp!.counts).to.include({ authorizations: 2, codeGrants: 2 });
    const renewed = (await browser.cookies(app)).find((c) => c.name === 'tuna_oidc');
    expect(renewed?.value).not.to.equal(forged);

    // Logout: the cookie goes, the provider ends its session (its confirmation page), and the next visit asks for a sign-in.
    await browser.navigate(`${app}/.tuna/oidc/logout`);
    await browser.waitFor('the provider\'s logout page', `location.origin === ${JSON.stringify(idp!.issuer)} && !!document.querySelector('button[name=logout][value=yes]')`);
    expect((await browser.cookies(app)).map((c) => c.name)).not.to.include('tuna_oidc');
    await browser.click('button[name=logout][value=yes]');
    await browser.waitFor('the sign-in form after logout', `location.origin === ${JSON.stringify(idp!.issuer)} && !!document.getElementById('login')`);
    expect(idp!.counts.logouts).to.equal(1);
    expect((await browser.cookies(app)).map((c) => c.name)).not.to.include('tuna_oidc');
  });

  it('answers a callback with a wrong state 400, and sets no session', async () => {
    const port = await publish(oidcFlags);
    const app = `http://app.test:${port}`;
    browser = await Browser.launch(chromium, 1280, 760, ['app.test']);
    await browser.navigate(`${app}/`);
    await browser.waitFor('the sign-in form', `location.origin === ${JSON.stringify(idp!.issuer)} && !!document.getElementById('login')`);
    await browser.navigate(`${app}/.tuna/oidc/callback?code=stolen&state=not-the-state`);
    const text = await browser.waitFor<string>('the refusal', `document.body && document.body.innerText.includes('bad sign-in callback') && document.body.innerText`);
    expect(text).to.contain('the sign-in state does not match');
    expect((await browser.cookies(app)).map((c) => c.name)).not.to.include('tuna_oidc');
    expect(idp!.counts.codeGrants).to.equal(0);
    const bare = await get(port, '/.tuna/oidc/callback?code=x&state=y');
    expect(bare.status).to.equal(400);
    expect(bare.headers['set-cookie']).to.equal(undefined);
  });

  it('answers 503 with the reason while the provider cannot be reached, and logs why', async () => {
    const closed = await startHttpBackend('closed');
    await closed.close();
    const port = await publish(() => [
      '--oidc-issuer', `http://127.0.0.1:${closed.port}`,
      '--oidc-client-id', 'tuna-app',
      '--oidc-client-secret-file', file('client-secret', 's'),
    ]); // prettier-ignore
    const res = await get(port, '/', { accept: 'text/html' });
    expect(res.status).to.equal(503);
    expect(res.body).to.contain(`the OpenID provider's configuration could not be fetched from http://127.0.0.1:${closed.port}/.well-known/openid-configuration`);
    expect([...run!.out, ...run!.err].join('\n')).to.contain(`OpenID provider http://127.0.0.1:${closed.port}: a fetch failed`);
    expect(backend!.requests).to.have.length(0);
  });
});
