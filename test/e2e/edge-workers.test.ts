import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { newKey, startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { countOf, httpGet, scrapeWorkers, startEdgeProcess, stopEdgeProcess } from '../support/edge-process.js';
import type { EdgeProcess } from '../support/edge-process.js';
import { BASE_DOMAIN, api, reserveAndMint, seedAccount } from '../support/edge-store-harness.js';
import { openPostgresStore, openStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { freshPostgresSchema } from '../support/postgres.js';

/**
 * `tuna edge --workers N` runs N processes sharing the listeners. A tunnel
 * connection lands on one worker, so the agent holds one per worker (the 101 names the worker,
 * docs/protocol.md §9.8) and every worker has every binding. The edge runs as a real process
 * (the primary forks); the agent is `tuna http` in this process. Counts, not timings.
 */
describe('tuna edge --workers: worker processes sharing the listeners', function () {
  this.timeout(120_000);
  const { key, sha256 } = newKey();
  let dir: string;
  let edge: EdgeProcess | undefined;
  let runs: CliRun[] = [];
  let backends: TestBackend[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-workers-'));
  });
  afterEach(async () => {
    for (const r of runs) r.stop();
    await Promise.all(runs.map((r) => r.exit.catch(() => 0)));
    await stopEdgeProcess(edge, 'SIGKILL');
    await Promise.all(backends.map((b) => b.close()));
    rmSync(dir, { recursive: true, force: true });
    edge = undefined;
    runs = [];
    backends = [];
  });

  // Config mode with `workers: 2` in the file (no flag); a worker without the binding yet waits for it.
  async function configModeEdge(): Promise<EdgeProcess> {
    const config = join(dir, 'edge.json');
    writeFileSync(config, JSON.stringify({
      workers: 2,
      listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
      bindings: [{ id: 'binding/host/app.test', kind: 'host', hostnames: ['app.test'], keys: [{ sha256 }] }],
      limits: { tunnelWaitMs: 5000 },
    }));
    edge = await startEdgeProcess(['--config', config]);
    return edge;
  }

  async function agentFor(tunnelPort: number, host: string, token: string): Promise<void> {
    const backend = await startHttpBackend('app');
    backends.push(backend);
    const run = startCli(['http', String(backend.port), '--host', host, '--edge', `tcp://127.0.0.1:${tunnelPort}`, '--key', token]);
    runs.push(run);
    await run.waitForOut('Forwarding');
  }

  // 200 GETs, each on a fresh connection: cluster's primary hands them to the workers in turn.
  async function statuses(httpPort: number, host: string, n = 200): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const { status } = await httpGet(httpPort, `/r${i}`, { host });
      out.set(status, (out.get(status) ?? 0) + 1);
    }
    return out;
  }

  function workerPids(e: EdgeProcess): Map<number, number[]> {
    const pids = new Map<number, number[]>();
    for (const m of e.out().matchAll(/worker (\d+) \(pid (\d+)\) ready/g)) pids.set(Number(m[1]), [...(pids.get(Number(m[1])) ?? []), Number(m[2])]);
    return pids;
  }

  it('answers 200 requests over fresh connections, all 200, and both workers serve the binding', async () => {
    const e = await configModeEdge();
    await agentFor(e.tunnelPort, 'app.test', key);
    expect(await statuses(e.httpPort, 'app.test')).to.deep.equal(new Map([[200, 200]]));
    const scrapes = await scrapeWorkers(e.tunnelPort, 2);
    expect([...scrapes.keys()].sort()).to.deep.equal([0, 1]);
    // spliced HTTP/1.1 (the default): each fresh connection is one tunnel stream, its request counted by the agent, not in requests_total
    const served = [0, 1].map((w) => countOf(scrapes.get(w)!, 'tuna_edge_streams_total'));
    // each worker answered some from its own connection of the agent; together, all 200.
    expect(served[0]).to.be.greaterThan(0);
    expect(served[1]).to.be.greaterThan(0);
    expect(served[0]! + served[1]!).to.equal(200);
    for (const w of [0, 1]) expect(countOf(scrapes.get(w)!, 'tuna_edge_tunnels', 'binding="binding/host/app.test"')).to.equal(1);
  });

  it('restarts a killed worker, and the restarted worker serves the binding again', async () => {
    const e = await configModeEdge();
    await agentFor(e.tunnelPort, 'app.test', key);
    const [old] = workerPids(e).get(1)!;
    process.kill(old!, 'SIGKILL');
    await e.waitForOut(/worker 1 \(pid \d+\) ready/, 2);
    const pids = workerPids(e).get(1)!;
    expect(pids).to.have.length(2);
    expect(pids[1]).to.not.equal(old);
    // the killed worker had answered nothing: every request worker 1 counts now is the new process's.
    expect(await statuses(e.httpPort, 'app.test')).to.deep.equal(new Map([[200, 200]]));
    const scrapes = await scrapeWorkers(e.tunnelPort, 2);
    expect(countOf(scrapes.get(1)!, 'tuna_edge_streams_total')).to.be.greaterThan(0);
    expect(countOf(scrapes.get(1)!, 'tuna_edge_tunnels', 'binding="binding/host/app.test"')).to.equal(1);
  });

  it('drains every worker on SIGTERM to the primary and exits 0 with nothing in flight', async () => {
    const e = await configModeEdge();
    await agentFor(e.tunnelPort, 'app.test', key);
    expect(await statuses(e.httpPort, 'app.test', 20)).to.deep.equal(new Map([[200, 20]]));
    const pids = [...workerPids(e).values()].flat();
    expect(pids).to.have.length(2);
    expect(await stopEdgeProcess(e, 'SIGTERM')).to.equal(0);
    expect(e.stderr()).to.contain("SIGTERM: draining the edge's 2 workers");
    for (const pid of pids) expect(() => process.kill(pid, 0), `worker pid ${pid} still runs`).to.throw(/ESRCH/);
  });

  it('exits with the worker\'s status and its reason when a worker cannot listen, restarting nothing', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const failed = await startEdgeProcess(['--tunnel', `127.0.0.1:${port}`, '--bind', `app.test=${sha256}`, '--workers', '2']).then(
        () => 'started',
        (err: Error) => err.message,
      );
      expect(failed).to.match(/tuna edge exited \(78\)/);
      expect(failed).to.contain('EADDRINUSE');
      expect(failed).to.contain('worker 0 exited (78) before it listened');
      expect(failed).to.not.contain('restarting');
    } finally {
      taken.close();
    }
  });

  // store mode on either store: the test seeds it, the edge's worker 0 opens it first.
  const stores: { name: string; open: () => Promise<{ store: Store; section: Record<string, unknown> }> }[] = [
    { name: 'SQLite', open: async () => ({ store: await openStore(join(dir, 'edge.db')), section: { url: join(dir, 'edge.db') } }) },
    {
      name: 'PostgreSQL',
      open: async () => {
        const target = await freshPostgresSchema();
        return { store: await openPostgresStore(target), section: { url: target.connectionString, schema: target.schema } };
      },
    },
  ];
  for (const backend of stores) it(`cuts a revoked key on every worker (store mode, ${backend.name})`, async function () {
    this.timeout(240_000);
    const { store, section } = await backend.open();
    const seeded = await seedAccount(store);
    await store.close();
    const config = join(dir, 'edge.json');
    writeFileSync(config, JSON.stringify({
      listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
      // a feed read only every minute: the other worker hears of the revocation from the primary's relay (SQLite) or NOTIFY (PostgreSQL)
      store: { ...section, baseDomain: BASE_DOMAIN, pollMs: 60_000 },
      limits: { tunnelWaitMs: 300 },
    }));
    edge = await startEdgeProcess(['--config', config, '--workers', '2']);
    const minted = await reserveAndMint(edge.tunnelPort, seeded.reservationsToken, { kind: 'domain', hostname: `rev.${BASE_DOMAIN}` }, { protocol: 'http' });
    await agentFor(edge.tunnelPort, minted.value, minted.token);
    expect(await statuses(edge.httpPort, minted.value, 20)).to.deep.equal(new Map([[200, 20]]));
    const auth = { authorization: `Bearer ${seeded.adminToken}` };
    const before = await scrapeWorkers(edge.tunnelPort, 2, auth);
    for (const w of [0, 1]) expect(countOf(before.get(w)!, 'tuna_edge_tunnels', `binding="${minted.bindingId}"`), `worker ${w} before`).to.equal(1);
    const revoked = await api(edge.tunnelPort, 'DELETE', `/v1/tunnel-keys/${minted.keyId}`, seeded.reservationsToken);
    expect(revoked.status).to.equal(200);
    // bounded: every worker drops the binding's tunnel (the revoking one at once, the other on the primary's relay or its feed)
    let left = [1, 1];
    for (let i = 0; i < 50 && left.some((n) => n > 0); i++) {
      const scrapes = await scrapeWorkers(edge.tunnelPort, 2, auth);
      left = [0, 1].map((w) => (scrapes.has(w) ? countOf(scrapes.get(w)!, 'tuna_edge_tunnels', `binding="${minted.bindingId}"`) : 1));
      if (left.some((n) => n > 0)) await new Promise((r) => setTimeout(r, 100));
    }
    expect(left).to.deep.equal([0, 0]);
    const after = await statuses(edge.httpPort, minted.value, 10);
    expect(after.get(200) ?? 0).to.equal(0);
  });
});
