import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import { newKey, startCli } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { ExchangeDetail, ExchangeSummary } from '../../src/inspector/index.js';
import { callInspector, sendVia, startInspectorRig } from '../support/inspector.js';
import type { InspectorRig } from '../support/inspector.js';
import { loopbackService } from '../support/loopback-service.js';

interface ListBody {
  version: number;
  capacity: number;
  total: number;
  requests: ExchangeSummary[];
}

/** waitFor polls `probe` until it returns a value (bounded: 100 tries, 50 ms apart). */
async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function listed(base: string, query = ''): Promise<ListBody> {
  return (await callInspector(base, `/api/requests${query}`)).json as ListBody;
}

/** completed waits until the inspector lists a finished exchange for `path`. */
function completed(base: string, path: string): Promise<ExchangeSummary> {
  return waitFor(`${path} in the inspector`, async () => (await listed(base)).requests.find((r) => r.path === path && r.state === 'complete'));
}

describe('the request inspector of tuna http, over a real edge and tunnel', function () {
  this.timeout(30_000);
  let rig: InspectorRig | undefined;
  let blocker: http.Server | undefined;

  afterEach(async () => {
    await rig?.close();
    rig = undefined;
    await new Promise<void>((r) => (blocker ? blocker.close(() => r()) : r()));
    blocker = undefined;
  });

  it('lists each request with method, host, path, status, duration and size; shows headers and bodies with secrets redacted', async () => {
    rig = await startInspectorRig(['--inspect', '127.0.0.1:0']);
    const base = rig.inspectorUrl!;
    expect(base).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const res = await sendVia(rig.httpPort, { method: 'POST', path: '/submit?x=1', headers: { authorization: 'Bearer client-secret', cookie: 'sid=client-cookie', 'content-type': 'text/plain' }, body: 'name=tuna' });
    expect(res.status).to.equal(200);
    const line = await completed(base, '/submit?x=1');
    expect(line).to.include({ method: 'POST', host: 'app.test', status: 200, requestBytes: 9, responseBytes: 'hello /submit?x=1\n'.length, bindingId: 'binding/host/app.test', replayOf: null });
    expect(line.durationMs).to.be.a('number');
    const detail = (await callInspector(base, `/api/requests/${line.id}`)).json as ExchangeDetail;
    expect(detail.request.headers).to.deep.include(['authorization', '[redacted]']);
    expect(detail.request.headers).to.deep.include(['cookie', '[redacted]']);
    expect(detail.request.headers).to.deep.include(['content-type', 'text/plain']);
    expect(detail.request.body).to.include({ encoding: 'utf8', data: 'name=tuna', size: 9, truncated: false, complete: true });
    expect(detail.response?.status).to.equal(200);
    expect(detail.response?.headers).to.deep.include(['set-cookie', '[redacted]']);
    expect(detail.response?.body).to.include({ data: 'hello /submit?x=1\n', complete: true });
    expect(JSON.stringify(detail)).not.to.contain('client-secret').and.not.to.contain('backend-secret').and.not.to.contain('client-cookie');
    expect(detail.notReplayable).to.equal(null);
  });

  it('replays a request to the backend, which sees it twice, and lists the replay as such', async () => {
    rig = await startInspectorRig(['--inspect', '127.0.0.1:0']);
    const base = rig.inspectorUrl!;
    await sendVia(rig.httpPort, { method: 'PUT', path: '/items/7', headers: { authorization: 'Bearer client-secret', 'content-type': 'application/json' }, body: '{"n":7}' });
    const line = await completed(base, '/items/7');
    const replayed = await callInspector(base, `/api/requests/${line.id}/replay`, { method: 'POST' });
    expect(replayed.status).to.equal(200);
    const answer = replayed.json as { id: string; replayOf: string; status: number };
    expect(answer).to.include({ replayOf: line.id, status: 200 });
    expect(rig.seen.map((s) => [s.method, s.url, s.body, s.headers.authorization])).to.deep.equal([
      ['PUT', '/items/7', '{"n":7}', 'Bearer client-secret'],
      ['PUT', '/items/7', '{"n":7}', 'Bearer client-secret'],
    ]);
    const again = await waitFor('the replay to complete', async () => (await listed(base)).requests.find((r) => r.id === answer.id && r.state === 'complete'));
    expect(again).to.include({ method: 'PUT', path: '/items/7', status: 200, replayOf: line.id });
  });

  it('keeps bodies up to --inspect-body-limit, refuses to replay a cut body, and shows secrets with --inspect-show-secrets', async () => {
    rig = await startInspectorRig(['--inspect', '127.0.0.1:0', '--inspect-body-limit', '4', '--inspect-show-secrets']);
    const base = rig.inspectorUrl!;
    expect(rig.run.out.find((l) => l.startsWith('Inspector: '))).to.contain('(showing secrets)');
    await sendVia(rig.httpPort, { method: 'POST', path: '/big', headers: { authorization: 'Bearer client-secret' }, body: 'abcdefghij' });
    const line = await completed(base, '/big');
    const detail = (await callInspector(base, `/api/requests/${line.id}`)).json as ExchangeDetail;
    expect(detail.request.body).to.include({ data: 'abcd', size: 10, captured: 4, truncated: true });
    expect(detail.response?.body).to.include({ data: 'hell', truncated: true });
    expect(detail.request.headers).to.deep.include(['authorization', 'Bearer client-secret']);
    expect(detail.response?.headers).to.deep.include(['set-cookie', 'session=backend-secret; HttpOnly']);
    expect(detail.notReplayable).to.match(/larger than the capture limit of 4 bytes/);
    const refused = await callInspector(base, `/api/requests/${line.id}/replay`, { method: 'POST' });
    expect(refused.status).to.equal(409);
    expect(rig.seen).to.have.length(1);
  });

  it('filters and searches the list', async () => {
    rig = await startInspectorRig(['--inspect', '127.0.0.1:0']);
    const base = rig.inspectorUrl!;
    await sendVia(rig.httpPort, { path: '/alpha' });
    await sendVia(rig.httpPort, { method: 'DELETE', path: '/beta' });
    await completed(base, '/alpha');
    await completed(base, '/beta');
    expect((await listed(base, '?q=alp')).requests.map((r) => r.path)).to.deep.equal(['/alpha']);
    expect((await listed(base, '?method=DELETE')).requests.map((r) => r.path)).to.deep.equal(['/beta']);
    expect((await listed(base, '?status=2xx')).requests.map((r) => r.path)).to.deep.equal(['/beta', '/alpha']);
    expect((await listed(base, '?status=4xx')).requests).to.deep.equal([]);
    expect((await callInspector(base, '/api/requests', { method: 'DELETE' })).status).to.equal(200);
    expect((await listed(base)).total).to.equal(0);
  });

  it('serves the page and refuses foreign Host names and cross-origin changes', async () => {
    rig = await startInspectorRig(['--inspect', '127.0.0.1:0']);
    const base = rig.inspectorUrl!;
    const page = await callInspector(base, '/');
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.contain('text/html');
    expect(page.headers['content-security-policy']).to.contain("script-src 'self'");
    expect(String(page.json)).to.contain('<script src="/inspector.js"></script>');
    expect((await callInspector(base, '/inspector.js')).status).to.equal(200);
    expect((await callInspector(base, '/api/requests', { headers: { host: 'evil.example' } })).status).to.equal(403);
    await sendVia(rig.httpPort, { path: '/once' });
    const line = await completed(base, '/once');
    const csrf = await callInspector(base, `/api/requests/${line.id}/replay`, { method: 'POST', headers: { origin: 'http://evil.example' } });
    expect(csrf.status).to.equal(403);
    expect((await callInspector(base, '/api/requests', { method: 'DELETE', headers: { 'sec-fetch-site': 'cross-site' } })).status).to.equal(403);
    expect(rig.seen).to.have.length(1);
    expect((await callInspector(base, '/api/requests/r999')).status).to.equal(404);
    expect((await callInspector(base, '/api/requests', { method: 'PATCH' })).status).to.equal(405);
  });

  it('says clearly that its port is taken and publishes anyway', async () => {
    blocker = http.createServer();
    await new Promise<void>((r) => blocker!.listen(0, '127.0.0.1', r));
    const taken = (blocker.address() as AddressInfo).port;
    rig = await startInspectorRig(['--inspect', `127.0.0.1:${taken}`]);
    expect(rig.inspectorUrl).to.equal(undefined);
    expect(rig.run.err.join('\n')).to.contain(`the request inspector cannot listen on 127.0.0.1:${taken}: the port is in use; publishing without it`);
    const res = await sendVia(rig.httpPort, { path: '/still' });
    expect([res.status, res.body]).to.deep.equal([200, 'hello /still\n']);
  });

  it("captures the data plane's own answers too: a 502 when the backend is gone", async () => {
    rig = await startInspectorRig(['--inspect', '127.0.0.1:0']);
    const base = rig.inspectorUrl!;
    await rig.backend.close();
    const res = await sendVia(rig.httpPort, { path: '/down' });
    expect(res.status).to.equal(502);
    const line = await completed(base, '/down');
    expect(line.status).to.equal(502);
    const detail = (await callInspector(base, `/api/requests/${line.id}`)).json as ExchangeDetail;
    expect(detail.response?.body.data).to.equal(res.body);
  });

  it('is not started with --inspect=false', async () => {
    rig = await startInspectorRig(['--inspect=false']);
    expect(rig.inspectorUrl).to.equal(undefined);
    expect(rig.run.err.join('\n')).not.to.contain('inspector');
    const res = await sendVia(rig.httpPort, { path: '/plain' });
    expect(res.status).to.equal(200);
  });

  it('runs in tuna run too: a request routed by an Ingress appears and is replayed to its Service', async () => {
    const { key, sha256 } = newKey();
    const backend = await startHttpBackend('svc');
    const edge = await startEdge(
      decodeEdgeConfig({
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
        bindings: [{ id: 'binding/host/run.test', kind: 'host', hostnames: ['run.test'], keys: [{ sha256 }] }],
      }),
    );
    const dir = mkdtempSync(join(tmpdir(), 'tuna-inspect-run-'));
    writeFileSync(join(dir, 'objects.yaml'), runManifests(backend.port));
    const run = startCli(['run', '--manifests', dir, '--edge', `tcp://127.0.0.1:${edge.address().tunnel.port}`, '--key', key, '--inspect', '127.0.0.1:0']);
    try {
      await run.waitForOut('Serving');
      const base = /http:\/\/\S+\//.exec(run.out.find((l) => l.startsWith('Inspector: ')) ?? '')?.[0];
      expect(base).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const res = await new Promise<number>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: edge.address().http!.port, path: '/api/x', headers: { host: 'run.test' }, agent: false }, (r) => (r.resume(), resolve(r.statusCode ?? 0))).once('error', reject);
      });
      expect(res).to.equal(200);
      const line = await completed(base!, '/api/x');
      expect(line).to.include({ host: 'run.test', status: 200 });
      expect((await callInspector(base!, `/api/requests/${line.id}/replay`, { method: 'POST' })).status).to.equal(200);
      expect(backend.requests.map((r) => r.url)).to.deep.equal(['/api/x', '/api/x']);
    } finally {
      run.stop();
      await run.exit.catch(() => 0);
      await edge.close();
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function runManifests(port: number): string {
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: site, namespace: default}
spec:
  ingressClassName: tuna
  rules:
    - host: run.test
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: svc, port: {name: http}}}}
${loopbackService('svc', port)}`;
}
