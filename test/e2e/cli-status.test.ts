import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getVia, startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { api } from '../support/edge-store-harness.js';
import type { StatusReport } from '../../src/cli/status-report.js';

/**
 * `tuna status --edge` against a real store-mode edge (its embedded SQLite store) with a real
 * agent publishing through it: the binding, its tunnel, its key's expiry, from the control API and
 * the edge's /metrics.
 */
describe('tuna status --edge', function () {
  this.timeout(60_000);
  let runs: CliRun[] = [];
  let backends: TestBackend[] = [];
  let dir: string;

  function cli(argv: string[]): CliRun {
    const run = startCli(argv);
    runs.push(run);
    return run;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-status-'));
  });

  afterEach(async () => {
    for (const r of runs.reverse()) r.stop();
    await Promise.all(runs.map((r) => r.exit.catch(() => 0)));
    await Promise.all(backends.map((b) => b.close()));
    rmSync(dir, { recursive: true, force: true });
    runs = [];
    backends = [];
  });

  /** startEdge initialises a store, runs an edge on it and returns its ports and the admin key. */
  async function startEdge(): Promise<{ tunnel: number; http: number; admin: string }> {
    const db = join(dir, 'edge.db');
    const init = cli(['edge', 'init', '--store', db, '--json']);
    expect(await init.exit).to.equal(0);
    const admin = (JSON.parse(init.out.join('\n')) as { token: string }).token;
    const edge = cli(['edge', '--tunnel', '127.0.0.1:0', '--http', '127.0.0.1:0', '--store', db, '--base-domain', 'status.test', '--workers', '1']);
    const line = await edge.waitForOut('tunnel listener on port');
    const [, tunnel, http] = /port (\d+), public HTTP on port (\d+)/.exec(line)!;
    return { tunnel: Number(tunnel), http: Number(http), admin };
  }

  /** status runs `tuna status` to its end. */
  async function status(argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const run = cli(['status', ...argv]);
    const code = await run.exit;
    return { code, out: run.out.join('\n'), err: run.err.join('\n') };
  }

  it('lists a live binding with its tunnel, its edge and its tunnel key\'s expiry, as JSON and as a table', async () => {
    const { tunnel, http, admin } = await startEdge();
    const reserved = await api(tunnel, 'POST', '/v1/reservations', admin, { kind: 'domain', hostname: 'app.status.test', labels: { team: 'web' } });
    expect(reserved.status).to.equal(201);
    const reservationId = (reserved.body as { reservation: { id: string } }).reservation.id;
    const minted = await api(tunnel, 'POST', '/v1/tunnel-keys', admin, { reservationId, protocol: 'http' });
    expect(minted.status).to.equal(201);
    const { token, tunnelKey } = minted.body as { token: string; tunnelKey: { expiresAt: number } };
    const edgeUrl = `http://127.0.0.1:${tunnel}`;

    // before any agent: the binding is listed with no tunnel
    const before = JSON.parse((await status(['--edge', edgeUrl, '--api-key', admin, '-o', 'json'])).out) as StatusReport;
    expect(before.bindings.map((b) => [b.id, b.tunnels])).to.deep.equal([['binding/host/app.status.test', 0]]);

    const backend = await startHttpBackend('status');
    backends.push(backend);
    const agent = cli(['http', String(backend.port), '--host', 'app.status.test', '--edge', `tcp://127.0.0.1:${tunnel}`, '--key', token]);
    await agent.waitForOut('Forwarding app.status.test');
    expect((await getVia(http, 'app.status.test', '/')).status).to.equal(200);

    const ran = await status(['--edge', edgeUrl, '--api-key', admin, '-o', 'json']);
    expect(ran.code, ran.err).to.equal(0);
    const report = JSON.parse(ran.out) as StatusReport;
    expect(report).to.deep.include({ view: 'edge', source: edgeUrl, notes: [] });
    expect(report.edge?.baseDomain).to.equal('status.test');
    expect(report.bindings).to.deep.equal([
      {
        id: 'binding/host/app.status.test',
        kind: 'domain',
        addresses: ['app.status.test'],
        from: ['team=web'],
        tunnels: 1,
        edges: [edgeUrl],
        heldBack: [],
        certificateExpiresAt: null,
        keyExpiresAt: tunnelKey.expiresAt,
        lastError: null,
      },
    ]);

    const table = await status(['--edge', edgeUrl, '--api-key', admin]);
    expect(table.code, table.err).to.equal(0);
    const [header, row, ...rest] = table.out.split('\n');
    expect(header!.split(/\s+/)).to.deep.equal(['BINDING', 'KIND', 'ADDRESSES', 'FROM', 'TUNNELS', 'EDGES', 'HELD-BACK', 'CERT-EXPIRES', 'KEY-EXPIRES', 'LAST-ERROR']);
    expect(row!.split(/\s+/)).to.deep.equal(['binding/host/app.status.test', 'domain', 'app.status.test', 'team=web', '1', edgeUrl, '-', '-', new Date(tunnelKey.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z'), '-']);
    expect(rest).to.deep.equal([]);
    expect(table.out + table.err).not.to.contain(admin);
    expect(table.out + table.err).not.to.contain(token);
  });

  it('says the tunnels are unknown (?) to a key without the admin scope, and lists an unverified custom domain as held back', async () => {
    const { tunnel, admin } = await startEdge();
    const ops = await api(tunnel, 'POST', '/v1/api-keys', admin, { name: 'ops', scopes: ['reservations'] });
    const opsToken = (ops.body as { token: string }).token;
    expect((await api(tunnel, 'POST', '/v1/reservations', opsToken, { kind: 'domain', hostname: 'www.example.org', name: 'default/web' })).status).to.equal(201);

    const table = await status(['--edge', `http://127.0.0.1:${tunnel}`, '--api-key', opsToken]);
    expect(table.code, table.err).to.equal(0);
    const row = table.out.split('\n')[1]!;
    expect(row.split(/\s+/).slice(0, 6)).to.deep.equal(['binding/host/www.example.org', 'domain', 'www.example.org', 'default/web', '?', `http://127.0.0.1:${tunnel}`]);
    expect(row).to.contain('Unverified: the DNS TXT record _tuna-challenge.www.example.org must hold the verification token');
    expect(table.err).to.contain('note: tunnel connections unknown:');
    expect(table.err).to.contain('admin API key only');

    const json = JSON.parse((await status(['--edge', `http://127.0.0.1:${tunnel}`, '--api-key', opsToken, '--json'])).out) as StatusReport;
    expect(json.bindings[0]!.tunnels).to.equal(null);
    expect(json.notes).to.have.length(1);
  });

  it('refuses the cluster view without --base-domain and mixed views with a usage error (exit 2)', async () => {
    const noDomain = await status(['--kubeconfig', join(dir, 'none')]);
    expect(noDomain.code).to.equal(2);
    expect(noDomain.err).to.contain('--base-domain');
    const mixed = await status(['--kubeconfig', join(dir, 'none'), '--base-domain', 'a.test', '--edge', 'http://127.0.0.1:1']);
    expect(mixed.code).to.equal(2);
    expect(mixed.err).to.contain('excludes --edge');
  });
});
