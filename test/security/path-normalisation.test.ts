import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { attack } from '../support/attack-log.js';
import { newKey, startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { loopbackService } from '../support/loopback-service.js';

interface Reply {
  status: number;
  location: string | undefined;
  body: string;
}

/** send sends GET `path` verbatim (Node does not normalise it) to the edge's public port. */
function send(port: number, host: string, path: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { host }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }));
    });
    req.once('error', reject);
  });
}

/**
 * `/public/../admin` matched the `/public` route while a backend that
 * normalises served `/admin`. Through a real edge, a tunnel and `tuna run`, on loopback.
 */
describe('attack: path normalisation through the edge and a tunnel', function () {
  this.timeout(30_000);
  const { key, sha256 } = newKey();
  let edge: EdgeServer;
  let run: CliRun;
  let backends: TestBackend[];
  let dir: string;
  let httpPort: number;

  before(async () => {
    backends = [await startHttpBackend('public'), await startHttpBackend('admin')];
    dir = mkdtempSync(join(tmpdir(), 'tuna-paths-'));
    writeFileSync(join(dir, 'objects.yaml'), manifests(backends[0]!.port, backends[1]!.port));
    edge = await startEdge(
      decodeEdgeConfig({
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
        bindings: [{ id: 'binding/host/paths.test', kind: 'host', hostnames: ['paths.test'], keys: [{ sha256 }] }],
      }),
    );
    httpPort = edge.address().http!.port;
    run = startCli(['run', '--manifests', dir, '--edge', `tcp://127.0.0.1:${edge.address().tunnel.port}`, '--key', key]);
    await run.waitForOut('Serving');
  });
  after(async () => {
    run.stop();
    await run.exit.catch(() => 0);
    await edge.close();
    await Promise.all(backends.map((b) => b.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  const echo = (r: Reply): EchoReply => JSON.parse(r.body) as EchoReply;

  it('serves /public/x from the /public route', async () => {
    const r = await send(httpPort, 'paths.test', '/public/x');
    expect([r.status, echo(r).backend, echo(r).url]).to.deep.equal([200, 'public', '/public/x']);
  });

  for (const path of ['/public/../admin', '/public/%2e%2e/admin', '/public/%2E%2E/admin', '/public/.%2e/admin', '/public/./../admin']) {
    it(`matches ${path} as /admin against the /admin rule, and the /admin backend receives /admin`, async () => {
      const r = await send(httpPort, 'paths.test', path);
      attack(`dot segments: ${path} → ${r.status}, backend ${r.status === 200 ? `${echo(r).backend} got ${echo(r).url}` : 'none'}`);
      expect(r.status, r.body).to.equal(200);
      expect([echo(r).backend, echo(r).url]).to.deep.equal(['admin', '/admin']);
    });
  }

  it('forwards the normal form: merged slashes, decoded unreserved characters, the query kept as sent', async () => {
    const r = await send(httpPort, 'paths.test', '/public//%7Euser/%61?q=%2e%2e');
    expect([echo(r).backend, echo(r).url]).to.deep.equal(['public', '/public/~user/a?q=%2e%2e']);
  });

  it('redirects (307) a path with an encoded slash to its unescaped form, as Envoy Gateway does by default', async () => {
    const r = await send(httpPort, 'paths.test', '/public%2F..%2Fadmin?x=1');
    attack(`encoded slash: /public%2F..%2Fadmin?x=1 → ${r.status} Location ${r.location}`);
    expect([r.status, r.location]).to.deep.equal([307, '/admin?x=1']);
  });

  it('answers 400 naming the fault to an invalid percent-encoding, and the tunnel carries on', async () => {
    const before = edge.registry.all().map((t) => t.connectionId);
    const r = await send(httpPort, 'paths.test', '/public/%zz');
    expect(r.status).to.equal(400);
    expect(r.body).to.contain('invalid percent-encoding');
    const after = await send(httpPort, 'paths.test', '/public/y');
    expect([after.status, echo(after).backend]).to.deep.equal([200, 'public']);
    expect(edge.registry.all().map((t) => t.connectionId)).to.deep.equal(before);
  });

  it('routes a Host with a trailing dot, another case and a port to the same binding and virtual host', async () => {
    const r = await send(httpPort, 'paths.test', '/public/z');
    const dotted = await send(httpPort, `PATHS.Test.:${httpPort}`, '/public/z');
    expect([dotted.status, echo(dotted).backend]).to.deep.equal([r.status, 'public']);
  });
});

/** manifests: an Ingress on paths.test, `/public` → Service public, `/admin` → Service admin. */
function manifests(publicPort: number, adminPort: number): string {
  const svc = loopbackService;
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: site, namespace: default}
spec:
  ingressClassName: tuna
  rules:
    - host: paths.test
      http:
        paths:
          - {path: /public, pathType: Prefix, backend: {service: {name: public, port: {name: http}}}}
          - {path: /admin, pathType: Prefix, backend: {service: {name: admin, port: {name: http}}}}
${svc('public', publicPort)}${svc('admin', adminPort)}`;
}
