import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliRuns, newKey } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import type { AccessLogEntry } from '../../src/dataplane/index.js';
import type { EdgeAccessLogEntry } from '../../src/edge/index.js';

/** send makes one request through the edge's public HTTP port and reads the whole answer. */
function send(port: number, host: string, method: string, path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false, headers: { host, 'content-length': String(Buffer.byteLength(body)), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.once('error', reject);
    req.end(body);
  });
}

/**
 * The access logs of `tuna http` and `tuna edge` through a real config-mode edge: one line per
 * request, with what the request really moved, and none of its secrets.
 */
describe('tuna http --access-log, tuna edge --access-log', function () {
  this.timeout(30_000);
  const runs = new CliRuns();
  const cli = (argv: string[]): CliRun => runs.start(argv);
  let backends: TestBackend[] = [];
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-access-log-'));
  });

  afterEach(async () => {
    await runs.stopAll();
    await Promise.all(backends.map((b) => b.close()));
    rmSync(dir, { recursive: true, force: true });
    backends = [];
  });

  /**
   * publish runs an edge (per-request or spliced HTTP/1.1 forwarding, or the default) with `edgeFlags`
   * and `tuna http` with `flags`.
   */
  async function publish(forwarding: 'spliced' | 'per-request' | undefined, flags: string[], edgeFlags: string[] = []): Promise<{ http: number; agent: CliRun; edge: CliRun }> {
    const backend = await startHttpBackend('log', (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(201, { 'content-type': 'text/plain' }).end('created: twelve'));
    });
    backends.push(backend);
    const { key, sha256 } = newKey();
    const mode = forwarding === undefined ? [] : ['--http1-forwarding', forwarding];
    const edge = cli(['edge', '--tunnel', '127.0.0.1:0', '--http', '127.0.0.1:0', '--bind', `log.test=${sha256}`, '--workers', '1', ...mode, ...edgeFlags]);
    const line = await edge.waitForOut('tunnel listener on port');
    const [, tunnel, http] = /port (\d+), public HTTP on port (\d+)/.exec(line)!;
    const agent = cli(['http', String(backend.port), '--host', 'log.test', '--edge', `tcp://127.0.0.1:${tunnel}`, '--key', key, ...flags]);
    await agent.waitForOut('Forwarding log.test');
    return { http: Number(http), agent, edge };
  }

  for (const forwarding of ['spliced', 'per-request'] as const) {
    it(`writes exactly one JSON line per request with its status, bytes and redacted query (${forwarding} HTTP/1.1)`, async () => {
      const file = join(dir, 'access.log');
      const { http, agent } = await publish(forwarding, ['--access-log', file]);
      const res = await send(http, 'log.test', 'POST', '/items?access_token=sekrit-q&page=2', 'seven b', { authorization: 'Bearer sekrit-h', cookie: 'sid=sekrit-c' });
      expect(res).to.deep.equal({ status: 201, body: 'created: twelve' });
      agent.stop();
      expect(await agent.exit).to.equal(0);
      const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
      expect(lines).to.have.length(1);
      expect(lines[0]).not.to.match(/sekrit/);
      const entry = JSON.parse(lines[0]!) as AccessLogEntry;
      expect(entry).to.deep.include({
        binding: 'binding/host/log.test',
        method: 'POST',
        host: 'log.test',
        path: '/items?access_token=[redacted]&page=2',
        status: 201,
        bytesIn: 7,
        bytesOut: 15,
        aborted: false,
        client: '127.0.0.1',
      });
      expect(entry.route).to.be.a('string').and.contain('rule/0');
      expect(entry.requestId).to.be.a('string').and.not.equal('');
      expect(entry.durationMs).to.be.a('number').and.be.at.least(0);
    });
  }

  it('writes nothing without --access-log, and a template line on stdout with --access-log stdout', async () => {
    const { http, agent } = await publish('spliced', ['--access-log', 'stdout', '--access-log-format', 'ACCESS $method $host$path $status $bytesOut']);
    expect((await send(http, 'log.test', 'GET', '/t?x=1', '')).status).to.equal(201);
    expect(await agent.waitForOut('ACCESS ')).to.equal('ACCESS GET log.test/t?x=1 201 15');
    expect(agent.out.filter((l) => l.startsWith('ACCESS '))).to.have.length(1);

    const quiet = await publish('spliced', []);
    expect((await send(quiet.http, 'log.test', 'GET', '/q', '')).status).to.equal(201);
    quiet.agent.stop();
    await quiet.agent.exit;
    expect([...quiet.agent.out, ...quiet.agent.err].join('\n')).not.to.contain('/q');
  });

  it('refuses a bad sample share and an unknown template field with a usage error (exit 2)', async () => {
    for (const [flags, message] of [
      [['--access-log', 'stdout', '--access-log-sample', '0'], /--access-log-sample "0" must be a share/],
      [['--access-log', 'stdout', '--access-log-sample', '1.5'], /--access-log-sample "1.5" must be a share/],
      [['--access-log', 'stdout', '--access-log-format', '$nope'], /unknown field \$nope/],
      [['--access-log-sample', '0.5'], /need --access-log/],
    ] as const) {
      const run = cli(['http', '1', '--no-check', '--host', 'x.test', '--edge', 'tcp://127.0.0.1:1', '--key', 'k', ...flags]);
      expect(await run.exit).to.equal(2);
      expect(run.err.join('\n')).to.match(message);
    }
  });

  it('tuna edge --access-log FILE appends one JSON line per public request to the file: host, binding, status, bytes, client and tunnel, no header, the query redacted', async () => {
    const file = join(dir, 'edge-access.log');
    const { http, edge } = await publish(undefined, [], ['--access-log', file]);
    const res = await send(http, 'log.test', 'POST', '/items?access_token=sekrit-q&page=2', 'seven b', { authorization: 'Bearer sekrit-h', cookie: 'sid=sekrit-c' });
    expect(res).to.deep.equal({ status: 201, body: 'created: twelve' });
    edge.stop();
    expect(await edge.exit).to.equal(0);
    const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
    expect(lines).to.have.length(1);
    expect(lines[0]).to.not.match(/sekrit|authorization|cookie/i);
    const entry = JSON.parse(lines[0]!) as EdgeAccessLogEntry;
    expect(entry).to.deep.include({
      protocol: 'http1',
      client: '127.0.0.1',
      host: 'log.test',
      binding: 'binding/host/log.test',
      method: 'POST',
      path: '/items?access_token=[redacted]&page=2',
      status: 201,
      bytesIn: 7,
      bytesOut: 15,
      aborted: false,
    });
    expect(entry.tunnel).to.be.a('string').and.match(/^[0-9a-f]{16}$/);
    expect(entry.requestId).to.be.a('string').and.not.equal('');
  });

  it('tuna edge --access-log - writes a template line on stdout', async () => {
    const edge = cli(['edge', '--tunnel', '127.0.0.1:0', '--http', '127.0.0.1:0', '--bind', `x.test=${newKey().sha256}`, '--workers', '1', '--access-log', '-', '--access-log-format', 'EDGE $protocol $host$path $status $binding']);
    const [, , http] = /port (\d+), public HTTP on port (\d+)/.exec(await edge.waitForOut('tunnel listener on port'))!;
    expect((await send(Number(http), 'nobody.test', 'GET', '/q?key=sekrit', '')).status).to.equal(404);
    expect(await edge.waitForOut('EDGE ')).to.equal('EDGE http1 nobody.test/q?key=[redacted] 404 -');
  });

  it('tuna edge refuses an unknown template field (the agent’s $route included), a bad sample, and spliced HTTP/1.1 forwarding, naming them', async () => {
    const base = ['edge', '--tunnel', '127.0.0.1:0', '--http', '127.0.0.1:0', '--bind', `x.test=${newKey().sha256}`, '--workers', '1'];
    for (const [flags, code, message] of [
      [['--access-log', '-', '--access-log-format', '$route'], 2, /unknown field \$route/],
      [['--access-log', '-', '--access-log-sample', '2'], 2, /--access-log-sample "2" must be a share/],
      [['--access-log-format', 'json'], 2, /need --access-log/],
      [['--access-log', '-', '--http1-forwarding', 'spliced'], 78, /http1Forwarding: spliced .* access log/],
    ] as const) {
      const run = cli([...base, ...flags]);
      expect(await run.exit, flags.join(' ')).to.equal(code);
      expect(run.err.join('\n'), flags.join(' ')).to.match(message);
    }
  });
});
