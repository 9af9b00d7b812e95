import { expect } from 'chai';
import bcrypt from 'bcryptjs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliRuns, newKey } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { ensureOauth2Proxy, startOauth2Proxy } from '../support/oauth2-proxy.js';
import type { Oauth2Proxy } from '../support/oauth2-proxy.js';
import { loopbackService } from '../support/loopback-service.js';

/** get sends one GET through the edge's public HTTP port with a Host header. */
function get(port: number, host: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { host, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

/** manifests: an Ingress whose auth-url is oauth2-proxy's /oauth2/auth, and the two Services with their endpoints on loopback. */
function manifests(appPort: number, proxyPort: number): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: private
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/auth-url: "http://oauth2-proxy.default.svc.cluster.local/oauth2/auth"
    nginx.ingress.kubernetes.io/auth-signin: "https://$host/oauth2/start?rd=$escaped_request_uri"
    nginx.ingress.kubernetes.io/auth-response-headers: "X-Auth-Request-User"
spec:
  ingressClassName: tuna
  rules:
    - host: private.test
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}
${loopbackService('web', appPort)}---
apiVersion: v1
kind: Service
metadata: {name: oauth2-proxy, namespace: default}
spec: {ports: [{name: http, port: 80, targetPort: 4180}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: oauth2-proxy-1, namespace: default, labels: {kubernetes.io/service-name: oauth2-proxy}}
addressType: IPv4
ports: [{name: http, port: ${proxyPort}}]
endpoints: [{addresses: ["127.0.0.1"]}]
`;
}

/**
 * A real authentication proxy behind an Ingress's auth-url: oauth2-proxy (built from its Go module
 * by hack/oauth2-proxy.sh), signing users in with its htpasswd form, asked by `tuna run`'s data plane
 * about every request that came through a real edge.
 */
describe('external authorization: oauth2-proxy behind an ingress-nginx auth-url', function () {
  this.timeout(60_000);
  const runs = new CliRuns();
  let bin: string;
  let dir: string;
  let proxy: Oauth2Proxy | undefined;
  let app: TestBackend | undefined;

  before(async function () {
    this.timeout(600_000);
    bin = await ensureOauth2Proxy();
  });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-oauth2-proxy-'));
  });

  afterEach(async () => {
    await runs.stopAll();
    await proxy?.stop();
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends a browser without a session to sign in, lets a signed-in one through with its user, and refuses a forged session', async () => {
    const hash = bcrypt.hashSync('correct horse', 10).replace(/^\$2b\$/, '$2y$');
    proxy = await startOauth2Proxy(bin, dir, `ada:${hash}\n`);
    app = await startHttpBackend('app');
    // the manifests folder holds only the objects (the htpasswd file beside it is not a manifest)
    const folder = mkdtempSync(join(dir, 'manifests-'));
    writeFileSync(join(folder, 'objects.yaml'), manifests(app.port, proxy.port));
    const { key, sha256 } = newKey();
    const edge = runs.start(['edge', '--tunnel', '127.0.0.1:0', '--http', '127.0.0.1:0', '--bind', `private.test=${sha256}`, '--workers', '1']);
    const line = await edge.waitForOut('tunnel listener on port');
    const [, tunnel, http] = /port (\d+), public HTTP on port (\d+)/.exec(line)!;
    const agent = runs.start(['run', '--manifests', folder, '--edge', `tcp://127.0.0.1:${tunnel}`, '--key', key]);
    await agent.waitForOut('Serving');
    const port = Number(http);

    // no session: oauth2-proxy's 401 becomes the sign-in redirect, and the app sees nothing
    const anonymous = await get(port, 'private.test', '/reports?q=1');
    expect(anonymous.status).to.equal(302);
    expect(anonymous.headers.location).to.equal('https://private.test/oauth2/start?rd=%2Freports%3Fq%3D1');

    expect(await proxy.signIn('ada', 'wrong')).to.equal(undefined);
    const cookie = await proxy.signIn('ada', 'correct horse');
    expect(cookie, 'oauth2-proxy signed ada in').to.be.a('string');

    const signedIn = await get(port, 'private.test', '/reports?q=1', { cookie: cookie!, 'x-auth-request-user': 'mallory' });
    expect(signedIn.status).to.equal(200);
    const seen = JSON.parse(signedIn.body) as EchoReply;
    expect(seen.url).to.equal('/reports?q=1');
    expect(seen.headers['x-auth-request-user']).to.equal('ada'); // oauth2-proxy's answer, not the client's forgery

    const forged = await get(port, 'private.test', '/reports', { cookie: `${cookie!.slice(0, -4)}AAAA` });
    expect(forged.status).to.equal(302);
    expect(app.requests.filter((r) => r.url.startsWith('/reports'))).to.have.length(1);
  });
});
