/**
 * `tuna http --processes N`: N agent processes publish one binding, each with its own tunnel
 * connection; the primary restarts one that dies and, on SIGTERM, drains them all and exits 0.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { getVia, newKey } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { waitUntil } from '../support/tunnel-harness.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const BINDING = 'binding/host/app.test';

describe('tuna http --processes', function () {
  this.timeout(120_000);
  const { key, sha256 } = newKey();
  let edge: EdgeServer | undefined;
  let backend: TestBackend | undefined;
  let child: ChildProcess | undefined;

  afterEach(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child = undefined;
    await edge?.close();
    await backend?.close();
    edge = undefined;
    backend = undefined;
  });

  async function start(extra: string[]): Promise<{ proc: ChildProcess; output: () => string; ports: { http: number } }> {
    backend = await startHttpBackend('local');
    edge = await startEdge(
      decodeEdgeConfig({
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
        bindings: [{ id: BINDING, kind: 'host', hostnames: ['app.test'], keys: [{ sha256 }] }],
      }),
    );
    const tunnelPort = edge.address().tunnel.port;
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'http', String(backend.port), '--host', 'app.test', '--edge', `tcp://127.0.0.1:${tunnelPort}`, '--inspect=false', ...extra], {
      cwd: repoRoot,
      env: { ...process.env, TUNA_KEY: key },
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
    // one connection per process, from two processes other than the primary
    await waitUntil(() => edge!.registry.count().get(BINDING) === 2, 10_000);
    const agents = pids(output());
    expect(new Set(agents).size).to.equal(2);
    expect(agents).to.not.include(proc.pid);
    // the banner once: the first process prints it
    expect(output().match(/Forwarding app\.test/g)?.length).to.equal(1);
    for (let i = 0; i < 8; i++) expect((await getVia(ports.http, 'app.test', '/hello')).status).to.equal(200);
    const code = await stop(proc);
    expect(code, output()).to.equal(0);
    expect(output()).to.include('SIGTERM: draining 2 agent processes');
    // each process drained its own tunnels
    expect(output().match(/closing tunnels/g)?.length, output()).to.equal(2);
    for (const pid of agents) expect(isAlive(pid), `agent process ${pid} still runs`).to.equal(false);
  });

  it('restarts an agent process that dies, and the binding has two connections again', async () => {
    const { proc, output } = await start(['--processes', '2']);
    await waitUntil(() => output().includes('2 agent processes serve the binding') || proc.exitCode !== null, 60_000);
    await waitUntil(() => edge!.registry.count().get(BINDING) === 2, 10_000);
    const [first] = pids(output());
    process.kill(first!, 'SIGKILL');
    await waitUntil(() => output().includes('agent process 0 exited (SIGKILL); restarting') || output().includes('agent process 1 exited (SIGKILL); restarting'), 10_000);
    await waitUntil(() => pids(output()).length === 3, 60_000);
    await waitUntil(() => edge!.registry.count().get(BINDING) === 2, 10_000);
    expect(await stop(proc), output()).to.equal(0);
  });

  it('exits with the status of a process that cannot start, and says why', async () => {
    // a key the edge refuses: every process fails its first connection, and the primary exits with that status
    const { proc, output } = await start(['--processes', '2', '--key', 'not-the-key']);
    const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
    // 77: the refused-key status of `tuna http` (cli-agent.test.ts), passed on by the primary
    expect(code, output()).to.equal(77);
    expect(output()).to.match(/refused the tunnel/);
    expect(output()).to.match(/agent process \d exited \(77\) before it served/);
    expect(output()).not.to.contain('not-the-key');
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
