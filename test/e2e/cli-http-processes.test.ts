/**
 * `tuna http --processes N`: N agent processes publish one binding, each with its own tunnel
 * connection; the command's process is the first, restarts another that dies and, on SIGTERM,
 * drains them all and exits 0. Without --processes, as many as the CPUs it may use, fewer when
 * the key's connection cap lets fewer in, one when a policy needs one.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { getVia, newKey } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { waitUntil } from '../support/tunnel-harness.js';
import { loopbackService } from '../support/loopback-service.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { usableCpuCount } from '../../src/cli/cpu-limit.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const BINDING = 'binding/host/app.test';

describe('tuna http --processes', function () {
  this.timeout(120_000);
  const { key, sha256 } = newKey();
  let edge: EdgeServer | undefined;
  let backend: TestBackend | undefined;
  let child: ChildProcess | undefined;
  const dirs: string[] = [];

  afterEach(async () => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child = undefined;
    await edge?.close();
    await backend?.close();
    edge = undefined;
    backend = undefined;
  });

  // the default count in a process started here: the CPUs this machine (and its cgroup) lets it use
  const cpus = usableCpuCount();

  async function start(extra: string[], keyOptions: { maxConnections?: number } = {}, command?: (backendPort: number) => string[]): Promise<{ proc: ChildProcess; output: () => string; ports: { http: number } }> {
    backend = await startHttpBackend('local');
    edge = await startEdge(
      decodeEdgeConfig({
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
        bindings: [{ id: BINDING, kind: 'host', hostnames: ['app.test'], keys: [{ sha256, ...keyOptions }] }],
      }),
    );
    const tunnelPort = edge.address().tunnel.port;
    const { TUNA_PROCESSES: _unset, ...env } = process.env;
    const argv = command?.(backend.port) ?? ['http', String(backend.port), '--host', 'app.test'];
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...argv, '--edge', `tcp://127.0.0.1:${tunnelPort}`, '--inspect=false', ...extra], {
      cwd: repoRoot,
      env: { ...env, TUNA_KEY: key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let text = '';
    proc.stdout?.on('data', (c: Buffer) => (text += c.toString()));
    proc.stderr?.on('data', (c: Buffer) => (text += c.toString()));
    return { proc, output: () => text, ports: { http: edge.address().http!.port } };
  }

  function stop(proc: ChildProcess): Promise<number | null> {
    return new Promise((resolve) => {
      proc.once('exit', (code) => resolve(code));
      proc.kill('SIGTERM');
    });
  }

  const pids = (text: string): number[] => [...text.matchAll(/agent process \d+ \(pid (\d+)\) serves/g)].map((m) => Number(m[1]));

  it('runs two agent processes, each with its own tunnel connection, serves requests and exits 0 on SIGTERM after both drained', async () => {
    const { proc, output, ports } = await start(['--processes', '2']);
    await waitUntil(() => output().includes('2 agent processes serve the binding') || proc.exitCode !== null, 60_000);
    expect(output()).to.include('2 agent processes serve the binding');
    // one connection per process: the command's own (process 0) and the one it forked
    await waitUntil(() => edge!.registry.count().get(BINDING) === 2, 10_000);
    const others = pids(output());
    expect(others).to.have.length(1);
    expect(others).to.not.include(proc.pid);
    // the banner once: the first process prints it
    expect(output().match(/Forwarding app\.test/g)?.length).to.equal(1);
    for (let i = 0; i < 8; i++) expect((await getVia(ports.http, 'app.test', '/hello')).status).to.equal(200);
    const code = await stop(proc);
    expect(code, output()).to.equal(0);
    expect(output()).to.include('SIGTERM: draining 2 agent processes');
    // each process drained its own tunnels
    expect(output().match(/closing tunnels/g)?.length, output()).to.equal(2);
    for (const pid of others) expect(isAlive(pid), `agent process ${pid} still runs`).to.equal(false);
  });

  it('restarts an agent process that dies, and the binding has two connections again', async () => {
    const { proc, output } = await start(['--processes', '2']);
    await waitUntil(() => output().includes('2 agent processes serve the binding') || proc.exitCode !== null, 60_000);
    await waitUntil(() => edge!.registry.count().get(BINDING) === 2, 10_000);
    const [other] = pids(output());
    process.kill(other!, 'SIGKILL');
    await waitUntil(() => output().includes('agent process 1 exited (SIGKILL); restarting'), 10_000);
    await waitUntil(() => pids(output()).length === 2, 60_000);
    await waitUntil(() => edge!.registry.count().get(BINDING) === 2, 10_000);
    expect(await stop(proc), output()).to.equal(0);
  });

  it('exits with the refused-key status when the first process cannot start, and starts no other', async () => {
    const { proc, output } = await start(['--processes', '2', '--key', 'not-the-key']);
    const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
    // 77: the refused-key status of `tuna http` (cli-agent.test.ts)
    expect(code, output()).to.equal(77);
    expect(output()).to.match(/refused the tunnel/);
    expect(pids(output())).to.deep.equal([]);
    expect(output()).not.to.contain('not-the-key');
  });

  it('with --processes 2 and a key capped at one connection, exits with the status of the process the edge refused, and says why', async () => {
    const { proc, output } = await start(['--processes', '2'], { maxConnections: 1 });
    const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
    expect(code, output()).to.equal(77);
    expect(output()).to.match(/connection limit/);
    expect(output()).to.match(/agent process 1 exited \(77\) before it served/);
  });

  it('without --processes runs one process per usable CPU (cgroup limit, else the cores), the banner once', async function () {
    if (cpus < 2) this.skip();
    const { proc, output, ports } = await start([]);
    await waitUntil(() => output().includes(`${cpus} agent processes serve the binding`) || proc.exitCode !== null, 60_000);
    expect(output()).to.include(`${cpus} agent processes serve the binding`);
    await waitUntil(() => edge!.registry.count().get(BINDING) === cpus, 10_000);
    expect(pids(output())).to.have.length(cpus - 1);
    expect(output().match(/Forwarding app\.test/g)?.length).to.equal(1);
    expect(output()).to.not.match(/one agent process/);
    for (let i = 0; i < 4; i++) expect((await getVia(ports.http, 'app.test', '/hello')).status).to.equal(200);
    expect(await stop(proc), output()).to.equal(0);
    expect(output().match(/closing tunnels/g)?.length, output()).to.equal(cpus);
  });

  it('without --processes and a key capped at one connection, serves with the one process the cap lets in, in one line, and no error', async function () {
    if (cpus < 2) this.skip();
    const { proc, output, ports } = await start([], { maxConnections: 1 });
    await waitUntil(() => output().includes('agent processes serve the binding') || proc.exitCode !== null, 60_000);
    expect(output()).to.include(`the key's connection limit let 1 of ${cpus} agent processes connect; serving with 1`);
    expect(output()).to.not.match(/refused the tunnel|exited \(/);
    expect(edge!.registry.count().get(BINDING)).to.equal(1);
    expect((await getVia(ports.http, 'app.test', '/hello')).status).to.equal(200);
    expect(await stop(proc), output()).to.equal(0);
  });

  it('without --processes and with --rate-limit runs one process and says why in one line', async function () {
    if (cpus < 2) this.skip();
    const { proc, output, ports } = await start(['--rate-limit', '100/s']);
    await waitUntil(() => output().includes('Forwarding app.test') || proc.exitCode !== null, 60_000);
    expect(output()).to.include(`tuna http: one agent process, not ${cpus}: --rate-limit counts per process`);
    expect((await getVia(ports.http, 'app.test', '/hello')).status).to.equal(200);
    expect(edge!.registry.count().get(BINDING)).to.equal(1);
    expect(output()).to.not.include('agent processes serve the binding');
    expect(await stop(proc), output()).to.equal(0);
  });

  it("lists every process's requests in process 0's request inspector", async () => {
    const { proc, output, ports } = await start(['--processes', '2', '--inspect', '127.0.0.1:0']);
    await waitUntil(() => output().includes('2 agent processes serve the binding') || proc.exitCode !== null, 60_000);
    await waitUntil(() => edge!.registry.count().get(BINDING) === 2, 10_000);
    const page = /Inspector: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output())?.[1];
    expect(page, output()).to.be.a('string');
    // a spliced keep-alive connection holds its stream on the tunnel it reached (the first, on a
    // tie), so a second connection opened while it stays goes to the other process's tunnel
    const first = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const second = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await getOn(first, ports.http, '/one')).to.equal(200);
      expect(await getOn(second, ports.http, '/two')).to.equal(200);
      const paths = async (): Promise<string[]> => ((await (await fetch(`${page!}api/requests`)).json()) as { requests: { path: string }[] }).requests.map((r) => r.path).sort();
      // the other process hands its exchange over once it ended: a few polls at most
      let seen = await paths();
      for (let i = 0; i < 50 && seen.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await paths();
      }
      expect(seen).to.deep.equal(['/one', '/two']);
    } finally {
      first.destroy();
      second.destroy();
    }
    expect(await stop(proc), output()).to.equal(0);
  });

  it('tuna run without --processes runs one process per usable CPU, says what it publishes once, and reloads in every process', async function () {
    if (cpus < 2) this.skip();
    const dir = mkdtempSync(join(tmpdir(), 'tuna-run-processes-'));
    dirs.push(dir);
    const ingress = (path: string): string =>
      `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: site, namespace: default}\nspec:\n  ingressClassName: tuna\n  rules:\n    - host: app.test\n      http:\n        paths:\n          - {path: ${path}, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}\n`;
    const { proc, output, ports } = await start([], {}, (port) => (writeFileSync(join(dir, 'objects.yaml'), `${ingress('/')}${loopbackService('web', port)}`), ['run', '--manifests', dir]));
    await waitUntil(() => output().includes(`${cpus} agent processes serve the bindings`) || proc.exitCode !== null, 60_000);
    expect(output()).to.include(`${cpus} agent processes serve the bindings`);
    await waitUntil(() => edge!.registry.count().get(BINDING) === cpus, 10_000);
    expect(output().match(/Publishing:/g)?.length, output()).to.equal(1);
    expect(output().match(/Serving; watching the manifests/g)?.length).to.equal(1);
    expect((await getVia(ports.http, 'app.test', '/hello')).status).to.equal(200);
    // a change reaches every process (each watches the folder); process 0 alone says so
    writeFileSync(join(dir, 'objects.yaml'), `${ingress('/only')}${loopbackService('web', backend!.port)}`);
    await waitUntil(() => output().includes('Reloaded manifests'), 20_000);
    const first = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const second = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // two kept-alive connections reach two processes (a spliced connection holds its tunnel's stream)
      const statuses: number[] = [];
      for (let i = 0; i < 50; i++) {
        statuses.splice(0, 2, await getOn(first, ports.http, '/hello'), await getOn(second, ports.http, '/hello'));
        if (statuses.every((s) => s === 404)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(statuses).to.deep.equal([404, 404]);
    } finally {
      first.destroy();
      second.destroy();
    }
    expect(output().match(/Reloaded manifests/g)?.length, output()).to.equal(1);
    expect(await stop(proc), output()).to.equal(0);
  });

  it('refuses --processes 0 and a count past the limit as usage errors', async () => {
    for (const value of ['0', '65']) {
      const { proc, output } = await start(['--processes', value]);
      const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
      expect(code, output()).to.equal(2);
      expect(output()).to.include('--processes');
      await edge?.close();
      await backend?.close();
      edge = undefined;
      backend = undefined;
    }
  });
});

/** getOn sends GET `path` for app.test to the edge's public port over `agent`'s (kept-alive) connection. */
function getOn(agent: http.Agent, port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { host: 'app.test' }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
