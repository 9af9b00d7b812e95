import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getVia, newKey, startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';

/** LogLine is one event of `--log-format json`. */
interface LogLine {
  time: string;
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** events parses every line a command wrote; each must be one JSON object with time, level and msg. */
function events(lines: string[]): LogLine[] {
  return lines.map((line) => {
    expect(line, 'one event per line').not.to.contain('\n');
    const event = JSON.parse(line) as LogLine;
    expect(event.time).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(['info', 'warn', 'error']).to.include(event.level);
    expect(event.msg).to.be.a('string');
    return event;
  });
}

/** waitForEvent resolves with the first event whose msg contains `text`. */
async function waitForEvent(run: CliRun, text: string): Promise<LogLine> {
  await run.waitForOut(text);
  return events(run.out).find((e) => e.msg.includes(text))!;
}

describe('--log-format json on the long-running commands', function () {
  this.timeout(30_000);
  const { key, sha256 } = newKey();
  let runs: CliRun[] = [];
  let backends: TestBackend[] = [];
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-log-'));
  });

  afterEach(async () => {
    for (const r of runs) r.stop();
    await Promise.all(runs.map((r) => r.exit.catch(() => 0)));
    await Promise.all(backends.map((b) => b.close()));
    rmSync(dir, { recursive: true, force: true });
    runs = [];
    backends = [];
  });

  function cli(argv: string[], env: NodeJS.ProcessEnv = {}): CliRun {
    const run = startCli(argv, env);
    runs.push(run);
    return run;
  }

  it('logs tuna edge and tuna http as JSON lines: banners with their ports, tunnels up and down, a quiet stop', async () => {
    const backend = await startHttpBackend('local');
    backends.push(backend);
    writeFileSync(
      join(dir, 'edge.yaml'),
      `listen: {tunnel: {host: 127.0.0.1, port: 0}, http: {host: 127.0.0.1, port: 0}}\nbindings: [{id: binding/host/j.test, kind: host, hostnames: [j.test], keys: [{sha256: ${sha256}}]}]\n`,
    );
    const edge = cli(['edge', '--config', join(dir, 'edge.yaml'), '--log-format', 'json', '--workers', '1']);
    const banner = await waitForEvent(edge, 'tunnel listener on port');
    expect(banner).to.include({ level: 'info' });
    expect(banner.tunnelPort).to.be.a('number');
    expect(banner.httpPort).to.be.a('number');
    const agent = cli(['http', String(backend.port), '--host', 'j.test', '--edge', `tcp://127.0.0.1:${String(banner.tunnelPort)}`, '--key', key], { TUNA_LOG_FORMAT: 'json' });
    const forwarding = await waitForEvent(agent, 'Forwarding j.test');
    expect(forwarding.level).to.equal('info');
    expect((await getVia(banner.httpPort as number, 'j.test', '/')).status).to.equal(200);
    await waitForEvent(edge, 'up for binding/host/j.test');
    agent.stop();
    expect(await agent.exit).to.equal(0);
    edge.stop();
    expect(await edge.exit).to.equal(0);
    for (const run of [edge, agent]) expect(run.err, 'nothing on stderr in JSON mode').to.deep.equal([]);
    expect(events(agent.out).map((e) => e.msg)).to.deep.equal(['Forwarding j.test → http://127.0.0.1:' + String(backend.port), 'SIGTERM: closing tunnels (in-flight requests finish first)']);
    const edgeMessages = events(edge.out).map((e) => e.msg);
    expect(edgeMessages.at(-1)).to.match(/down for binding\/host\/j\.test|draining the edge/);
    expect(edgeMessages).to.include('SIGTERM: draining the edge');
  });

  it('logs what tuna run publishes as one event, with the summary in detail', async () => {
    const demo = fileURLToPath(new URL('../../examples/demo', import.meta.url));
    writeFileSync(
      join(dir, 'ingress.yaml'),
      'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: site, namespace: default}\nspec:\n  ingressClassName: tuna\n  rules: [{host: run.test, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: missing, port: {number: 80}}}}]}}]\n',
    );
    const run = cli(['run', '--manifests', demo, '--manifests', dir, '--once', '--log-format', 'json']);
    expect(await run.exit).to.equal(0);
    const [publishing, ...rest] = events(run.out);
    expect(publishing).to.deep.include({ level: 'info', msg: 'Publishing:' });
    expect(publishing!.detail).to.be.an('array').with.length(1);
    expect((publishing!.detail as string[])[0]).to.contain('demo.localhost');
    // run.test's Service does not exist: the problem is a warning event, on stdout like every JSON line.
    expect(rest.map((e) => [e.level, e.msg])).to.deep.equal([['warn', 'Problems in the manifests:']]);
    expect(JSON.stringify(rest[0]!.detail)).to.contain('missing');
    expect(run.err).to.deep.equal([]);
  });

  it('reports a failure as a JSON line with its exit status', async () => {
    const run = cli(['http', '3000', '--no-check', '--edge', 'tcp://127.0.0.1:1', '--key', key, '--log-format=json']);
    expect(await run.exit).to.equal(69);
    const [failure] = events(run.out);
    expect(failure).to.deep.include({ level: 'error', exitCode: 69 });
    expect(failure!.msg).to.match(/^tuna http: cannot reach edge/);
    expect(run.err).to.deep.equal([]);
  });

  it('refuses an unknown format, naming the flag', async () => {
    const run = cli(['edge', '--config', join(dir, 'none.yaml'), '--log-format', 'yaml']);
    expect(await run.exit).to.equal(2);
    expect(run.err.join('\n')).to.match(/^tuna edge: --log-format "yaml" /);
  });
});
