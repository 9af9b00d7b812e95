import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newKey, startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { freePort } from '../support/doc-commands.js';
import { countOf, httpGet, startEdgeProcess, stopEdgeProcess } from '../support/edge-process.js';
import type { EdgeProcess } from '../support/edge-process.js';

/**
 * With `--workers N` and `listen.metrics`, the primary serves `/metrics` for the
 * whole edge (prom-client's AggregatorRegistry asks every worker), so one scrape counts every
 * worker's traffic, each worker's series under its `worker` label. Counts, not timings.
 */
describe('tuna edge --workers: one scrape of listen.metrics answers for every worker', function () {
  this.timeout(120_000);
  const { key, sha256 } = newKey();
  let dir: string;
  let edge: EdgeProcess | undefined;
  let run: CliRun | undefined;
  let backend: TestBackend | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-workers-metrics-'));
  });
  afterEach(async () => {
    run?.stop();
    await run?.exit.catch(() => 0);
    await stopEdgeProcess(edge, 'SIGKILL');
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
    edge = undefined;
    run = undefined;
    backend = undefined;
  });

  it('counts 200 requests spread over 2 workers in one scrape, per worker, summing to 200', async () => {
    const config = join(dir, 'edge.json');
    writeFileSync(config, JSON.stringify({
      listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 }, metrics: { host: '127.0.0.1', port: 0 } },
      bindings: [{ id: 'binding/host/app.test', kind: 'host', hostnames: ['app.test'], keys: [{ sha256 }] }],
      limits: { tunnelWaitMs: 5000 },
    }));
    edge = await startEdgeProcess(['--config', config, '--workers', '2']);
    const [m] = await edge.waitForOut(/metrics on port (\d+) \(every worker's series\)/);
    const metricsPort = Number(m![1]);
    backend = await startHttpBackend('app');
    run = startCli(['http', String(backend.port), '--host', 'app.test', '--edge', `tcp://127.0.0.1:${edge.tunnelPort}`, '--key', key]);
    await run.waitForOut('Forwarding');

    // 200 GETs on fresh connections: cluster's primary hands them to the workers in turn
    const statuses = new Map<number, number>();
    for (let i = 0; i < 200; i++) {
      const { status } = await httpGet(edge.httpPort, `/r${i}`, { host: 'app.test' });
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect(statuses).to.deep.equal(new Map([[200, 200]]));

    const scrape = await httpGet(metricsPort, '/metrics');
    expect(scrape.status).to.equal(200);
    // spliced HTTP/1.1 (the default): each fresh connection is one tunnel stream
    const streams = [0, 1].map((w) => countOf(scrape.body, 'tuna_edge_streams_total', `worker="${w}"`));
    expect(streams[0]).to.be.greaterThan(0);
    expect(streams[1]).to.be.greaterThan(0);
    expect(streams[0]! + streams[1]!).to.equal(200);
    expect(countOf(scrape.body, 'tuna_edge_streams_total')).to.equal(200);
    for (const w of [0, 1]) expect(countOf(scrape.body, 'tuna_edge_tunnels', `binding="binding/host/app.test",worker="${w}"`)).to.equal(1);
    expect((await httpGet(metricsPort, '/healthz')).status).to.equal(200);
    // with listen.metrics the tunnel listener does not serve /metrics, on either worker
    for (let i = 0; i < 4; i++) expect((await httpGet(edge.tunnelPort, '/metrics')).status).to.equal(404);
  });

  it('answers /healthz 503 while its workers start, and 200 once every one listens (a pod is not ready before)', async () => {
    const metricsPort = await freePort();
    const config = join(dir, 'edge.json');
    writeFileSync(config, JSON.stringify({
      listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 }, metrics: { host: '127.0.0.1', port: metricsPort } },
      bindings: [{ id: 'binding/host/app.test', kind: 'host', hostnames: ['app.test'], keys: [{ sha256 }] }],
    }));
    const seen: number[] = [];
    let isUp = false;
    const polling = (async () => {
      // bounded: at most 3,000 polls 10 ms apart, ending once the edge said it listens
      for (let i = 0; i < 3000 && !isUp; i++) {
        const status = await httpGet(metricsPort, '/healthz').then((r) => r.status, () => undefined);
        if (status !== undefined) seen.push(status);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    edge = await startEdgeProcess(['--config', config, '--workers', '2']);
    isUp = true;
    await polling;
    expect((await httpGet(metricsPort, '/healthz')).status).to.equal(200);
    const first200 = seen.indexOf(200);
    expect(seen.slice(0, first200 === -1 ? seen.length : first200), `statuses while starting: ${seen.join(' ')}`).to.include(503);
  });
});

