import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { Downstream, ExchangeObserver } from '../../src/dataplane/index.js';
import { Recorder, RequestLog, summarize } from '../../src/inspector/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';

/** The data plane's observer hook with the inspector's recorder, over HTTP/2 streams as a tunnel brings them. */
describe('data plane observer: the inspector recorder on real streams', () => {
  let backend: TestBackend | undefined;
  let harness: TunnelHarness | undefined;
  let plane: DataPlane | undefined;
  const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
  const big = Buffer.alloc(1024 * 1024, 'abcdefghijklmnopqrstuvwxyz0123456789');

  async function setUp(observer: ExchangeObserver): Promise<TunnelHarness> {
    backend = await startHttpBackend('big', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.once('end', () => {
        if (req.url === '/download') return void res.end(big);
        res.end(`got ${Buffer.concat(chunks).length} bytes sha ${sha(Buffer.concat(chunks))}`);
      });
    });
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'big', 'http', [{ address: '127.0.0.1', port: backend.port }]);
    plane = new DataPlane({ endpoints, observer });
    plane.update(hostGraph([{ hostname: 'app.test', routes: [httpRoute('app', [serviceBackend('big')], { match: { path: { type: 'Prefix', value: '/app' } } }), httpRoute('dl', [serviceBackend('big')], { match: { path: { type: 'Exact', value: '/download' } } })] }]));
    harness = await startTunnelHarness(plane);
    return harness;
  }

  afterEach(async () => {
    await harness?.close();
    plane?.close();
    await backend?.close();
    harness = undefined;
    plane = undefined;
    backend = undefined;
  });

  it('is called once per HTTP request, for the local answers (404, 400) as for proxied ones', async () => {
    const seen: string[] = [];
    const h = await setUp({ observe: (ds: Downstream) => void seen.push(`${ds.method} ${ds.target}`) });
    expect((await h.request({ ':path': '/app/x' })).status).to.equal(200);
    expect((await h.request({ ':path': '/nowhere' })).status).to.equal(404);
    expect((await h.request({ ':path': '/a%zz' })).status).to.equal(400);
    expect(seen).to.deep.equal(['GET /app/x', 'GET /nowhere', 'GET /a%zz']);
  });

  it('passes 1 MiB each way intact while keeping only the capped bytes', async () => {
    const log = new RequestLog(10, 1000);
    const h = await setUp(new Recorder(log));
    const up = await h.request({ ':method': 'POST', ':path': '/app/upload' }, big);
    expect(up.body).to.equal(`got ${big.length} bytes sha ${sha(big)}`);
    const down = await new Promise<Buffer>((resolve, reject) => {
      const req = h.client.request({ ':authority': 'app.test', ':path': '/download' });
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.once('end', () => resolve(Buffer.concat(chunks)));
      req.once('error', reject);
      req.end();
    });
    expect(sha(down)).to.equal(sha(big));
    for (let i = 0; i < 100 && log.list().some((r) => r.state === 'pending'); i++) await new Promise((r) => setTimeout(r, 20));
    const [dl, upload] = log.list();
    expect(summarize(upload!)).to.include({ method: 'POST', path: '/app/upload', status: 200, requestBytes: big.length, state: 'complete' });
    expect(upload!.requestBody.bytes().equals(big.subarray(0, 1000))).to.equal(true);
    expect(summarize(dl!)).to.include({ path: '/download', status: 200, responseBytes: big.length, state: 'complete' });
    expect(dl!.responseBody.bytes().equals(big.subarray(0, 1000))).to.equal(true);
  });

  it('marks an exchange the client reset as aborted', async () => {
    const log = new RequestLog(10, 1000);
    const h = await setUp(new Recorder(log));
    await new Promise<void>((resolve) => {
      const req = h.client.request({ ':authority': 'app.test', ':path': '/download' });
      req.once('data', () => {
        req.close(0x8); // CANCEL
        resolve();
      });
      req.on('error', () => undefined);
      req.end();
    });
    for (let i = 0; i < 100 && log.list()[0]?.state === 'pending'; i++) await new Promise((r) => setTimeout(r, 20));
    expect(summarize(log.list()[0]!)).to.include({ path: '/download', status: 200, state: 'aborted' });
    expect(log.list()[0]!.responseBody.size).to.be.lessThan(big.length);
  });
});
