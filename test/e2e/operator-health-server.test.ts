import { expect } from 'chai';
import { request } from 'node:http';
import { METRICS_CONTENT_TYPE, OperatorHealth, startHealthServer } from '../../src/operator/index.js';
import type { HealthServer } from '../../src/operator/index.js';

/** get sends one request to the health server on loopback. */
function get(port: number, path: string, method = 'GET'): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the operator health server (--health-addr)', () => {
  let server: HealthServer | undefined;
  let synced = false;
  const health = new OperatorHealth({ hasSynced: () => synced, tunnels: () => [], isLeader: () => true });

  before(async () => {
    server = await startHealthServer(health, 0, '127.0.0.1');
  });
  after(async () => server?.close());

  it('answers /healthz 200 at once, and /readyz 503 with the reason until the first sync, then 200', async () => {
    const port = server!.address.port;
    expect(await get(port, '/healthz')).to.include({ status: 200, body: 'ok\n' });
    const early = await get(port, '/readyz');
    expect(early.status).to.equal(503);
    expect(early.body).to.include('the object cache has not listed every watched kind yet');
    synced = true;
    health.recordSync(1, 0);
    expect(await get(port, '/readyz?verbose')).to.include({ status: 200, body: 'ready\n' });
  });

  it('serves /metrics in the Prometheus text format', async () => {
    const metrics = await get(server!.address.port, '/metrics');
    expect(metrics.status).to.equal(200);
    expect(metrics.type).to.equal(METRICS_CONTENT_TYPE);
    expect(metrics.body).to.match(/^# HELP tuna_operator_ready /);
  });

  it('answers 404 for another path and 405 for another method', async () => {
    const port = server!.address.port;
    expect((await get(port, '/')).status).to.equal(404);
    expect((await get(port, '/healthz', 'POST')).status).to.equal(405);
    expect((await get(port, '/metrics', 'HEAD')).status).to.equal(200);
  });
});
