import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getVia, startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { api } from '../support/edge-store-harness.js';

/**
 * Trying `tuna edge` needed a hand-written YAML with a SHA-256 digest. Now
 * `tuna edge key` mints a config-mode key and prints the flag, and `tuna edge` runs from flags in
 * config mode (`--bind`) or store mode (`--store`, then `tuna edge init`).
 */
function status(port: number, host: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent, headers: { host } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end();
  });
}

describe('tuna edge quick start without YAML', function () {
  this.timeout(30_000);
  let runs: CliRun[] = [];
  let backends: TestBackend[] = [];
  let dirs: string[] = [];

  function cli(argv: string[]): CliRun {
    const run = startCli(argv);
    runs.push(run);
    return run;
  }
  afterEach(async () => {
    for (const r of runs.reverse()) r.stop();
    await Promise.all(runs.map((r) => r.exit.catch(() => 0)));
    await Promise.all(backends.map((b) => b.close()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    runs = [];
    backends = [];
    dirs = [];
  });

  async function edgePorts(run: CliRun): Promise<{ tunnel: number; http: number }> {
    const line = await run.waitForOut('tunnel listener on port');
    const [, tunnel, http] = /port (\d+), public HTTP on port (\d+)/.exec(line)!;
    return { tunnel: Number(tunnel), http: Number(http) };
  }

  it('mints a config-mode key once with its digest, the --bind flag and the config line', async () => {
    const run = cli(['edge', 'key', '--host', 'q.test']);
    expect(await run.exit).to.equal(0);
    const key = run.out[0]!;
    expect(key).to.match(/^tuna_ck_[A-Za-z0-9_-]{43}$/);
    const sha256 = createHash('sha256').update(key).digest('hex');
    expect(run.out).to.include(`sha256: ${sha256}`);
    expect(run.out.join('\n')).to.contain(`--bind q.test=${sha256}`);
    expect(run.out.join('\n')).to.contain(`- {id: binding/host/q.test, kind: host, hostnames: ["q.test"], keys: [{sha256: ${sha256}}]}`);
    expect(run.out.filter((l) => l.includes(key))).to.have.length(1);
    expect(run.err.join('\n')).to.contain('only time the key is shown');
  });

  it('runs a config-mode edge from --bind flags, and an agent publishes through it with the minted key', async () => {
    const backend = await startHttpBackend('quick');
    backends.push(backend);
    const minted = cli(['edge', 'key', '--host', 'q.test', '--json']);
    expect(await minted.exit).to.equal(0);
    const { key, sha256 } = JSON.parse(minted.out.join('\n')) as { key: string; sha256: string };
    const edge = cli(['edge', '--tunnel', '127.0.0.1:0', '--http', '127.0.0.1:0', '--bind', `q.test=${sha256}`, '--workers', '1']);
    const ports = await edgePorts(edge);
    const agent = cli(['http', String(backend.port), '--host', 'q.test', '--edge', `tcp://127.0.0.1:${ports.tunnel}`, '--key', key]);
    await agent.waitForOut('Forwarding q.test');
    const res = await getVia(ports.http, 'q.test', '/hi');
    expect([res.status, (JSON.parse(res.body) as EchoReply).backend]).to.deep.equal([200, 'quick']);
  });

  it('forwards per request with --http1-forwarding per-request, one tunnel stream per request of a keep-alive connection', async () => {
    const backend = await startHttpBackend('modes');
    backends.push(backend);
    const minted = cli(['edge', 'key', '--host', 'm.test', '--json']);
    expect(await minted.exit).to.equal(0);
    const { key, sha256 } = JSON.parse(minted.out.join('\n')) as { key: string; sha256: string };
    const edge = cli(['edge', '--tunnel', '127.0.0.1:0', '--http', '127.0.0.1:0', '--bind', `m.test=${sha256}`, '--http1-forwarding', 'per-request', '--workers', '1']);
    const ports = await edgePorts(edge);
    const agent = cli(['http', String(backend.port), '--host', 'm.test', '--edge', `tcp://127.0.0.1:${ports.tunnel}`, '--key', key]);
    await agent.waitForOut('Forwarding m.test');
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 3; i++) expect(await status(ports.http, 'm.test', keepAlive)).to.equal(200);
    } finally {
      keepAlive.destroy();
    }
    const metrics = await getVia(ports.tunnel, 'edge', '/metrics');
    expect(/^tuna_edge_streams_total (\d+)$/m.exec(metrics.body)?.[1]).to.equal('3');
  });

  it('runs a store-mode edge from --store, initialised by tuna edge init, with its control API on the tunnel port', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tuna-quick-'));
    dirs.push(dir);
    const db = join(dir, 'edge.db');
    const init = cli(['edge', 'init', '--store', db, '--json']);
    expect(await init.exit).to.equal(0);
    const token = (JSON.parse(init.out.join('\n')) as { token: string }).token;
    const edge = cli(['edge', '--tunnel', '127.0.0.1:0', '--http', '127.0.0.1:0', '--store', db, '--base-domain', 'quick.test', '--workers', '1']);
    const ports = await edgePorts(edge);
    const info = await api(ports.tunnel, 'GET', '/v1/edge', token);
    expect(info.status).to.equal(200);
    expect(JSON.stringify(info.body)).to.contain('quick.test');
  });

  const refusals: [string[], RegExp][] = [
    [['edge'], /pass --config FILE, or --tunnel/],
    [['edge', '--config', 'x.yaml', '--tunnel', '127.0.0.1:0'], /--config and --tunnel exclude each other/],
    [['edge', '--http', '127.0.0.1:0', '--bind', `a.test=${'0'.repeat(64)}`], /--tunnel HOST:PORT is required/],
    [['edge', '--tunnel', '127.0.0.1:0', '--store', 'x.db', '--bind', `a.test=${'0'.repeat(64)}`], /--store .* and --bind .* exclude each other/],
    [['edge', '--tunnel', '127.0.0.1:0', '--bind', 'a.test=abc'], /--bind a.test: the digest must be 64 lowercase hex digits/],
    [['edge', '--tunnel', 'nowhere', '--bind', `a.test=${'0'.repeat(64)}`], /--tunnel "nowhere" is not HOST:PORT/],
    [['edge', '--tunnel', '127.0.0.1:0', '--bind', `a.test=${'0'.repeat(64)}`, '--workers', '0'], /--workers.*whole number from 1/],
    [['edge', '--tunnel', '127.0.0.1:0', '--bind', `a.test=${'0'.repeat(64)}`, '--http1-forwarding', 'both'], /http1-forwarding/],
  ];
  for (const [argv, message] of refusals) {
    it(`refuses tuna ${argv.join(' ')} with a usage error`, async () => {
      const run = cli(argv);
      expect(await run.exit).to.equal(2);
      expect(run.err.join('\n')).to.match(message);
    });
  }
});
