import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { getVia, newKey } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { loadThenLeave } from '../support/public-load.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import { waitUntil } from '../support/tunnel-harness.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** DRAIN_TIMEOUT_MS is how long a tunnel of `tuna http` waits for in-flight streams (src/tunnel/session.ts). */
const DRAIN_TIMEOUT_MS = 30_000;

/** Exited is how a process ended and how long after the signal. */
interface Exited {
  code: number | null;
  signal: NodeJS.Signals | null;
  afterSignalMs: number;
}

describe('tuna http: SIGTERM with nothing in flight', function () {
  this.timeout(120_000);
  const { key, sha256 } = newKey();
  let edge: EdgeServer | undefined;
  let backend: TestBackend | undefined;
  let child: ChildProcess | undefined;
  // A TLS tunnel, as in use: TLS records bring many frames at once, which is when answers meet clients that just left.
  const tunnelCert = selfSignedCertificate(['127.0.0.1']);
  const dir = mkdtempSync(join(tmpdir(), 'tuna-sigterm-'));
  const caFile = join(dir, 'tunnel-ca.pem');
  writeFileSync(caFile, tunnelCert.cert);

  after(() => rmSync(dir, { recursive: true, force: true }));

  afterEach(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child = undefined;
    await edge?.close();
    await backend?.close();
    edge = undefined;
    backend = undefined;
  });

  /** startHttp runs `tuna http` as its own process (the sources, through tsx) and resolves once it forwards. */
  async function startHttp(backendPort: number, tunnelPort: number): Promise<{ proc: ChildProcess; output: () => string }> {
    // one process: this is the drain of one agent with its clients gone; with the default of one
    // per CPU the others attach their tunnels while the load below runs, a different case
    // (cli-http-processes.test.ts stops several)
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'http', String(backendPort), '--host', 'app.test', '--edge', `tls://127.0.0.1:${tunnelPort}`, '--ca', caFile, '--processes', '1'], {
      cwd: repoRoot,
      env: { ...process.env, TUNA_KEY: key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    let text = '';
    proc.stdout?.on('data', (c: Buffer) => (text += c.toString()));
    proc.stderr?.on('data', (c: Buffer) => (text += c.toString()));
    await waitUntil(() => text.includes('Forwarding app.test') || proc.exitCode !== null, 60_000);
    if (!text.includes('Forwarding app.test')) throw new Error(`tuna http did not start: ${text}`);
    return { proc, output: () => text };
  }

  function stop(proc: ChildProcess): Promise<Exited> {
    return new Promise((resolve) => {
      const signalled = Date.now();
      proc.once('exit', (code, signal) => resolve({ code, signal, afterSignalMs: Date.now() - signalled }));
      proc.kill('SIGTERM');
    });
  }

  it('exits 0 at once after its requests were answered and after clients left mid-request, not after the drain timeout', async () => {
    backend = await startHttpBackend('local');
    edge = await startEdge(
      decodeEdgeConfig({
        listen: { tunnel: { host: '127.0.0.1', port: 0, tls: tunnelCert }, http: { host: '127.0.0.1', port: 0 } },
        bindings: [{ id: 'binding/host/app.test', kind: 'host', hostnames: ['app.test'], keys: [{ sha256 }] }],
      }),
    );
    const ports = { http: edge.address().http!.port, tunnel: edge.address().tunnel.port };
    const { proc, output } = await startHttp(backend.port, ports.tunnel);
    expect((await getVia(ports.http, 'app.test', '/hello')).status).to.equal(200);
    // What a load run leaves behind: clients that left with their answers in flight.
    for (let round = 0; round < 3; round++) await loadThenLeave(ports.http, '/bytes', 64, 300);
    await waitUntil(() => edge!.metrics.streamsActive === 0, 10_000).catch(() => undefined);
    const leftOpen = edge.metrics.streamsActive;
    const exited = await stop(proc);
    expect(exited.code, output()).to.equal(0);
    expect(output()).to.include('SIGTERM: closing tunnels');
    // A generous bound, not a timing: a tunnel that waits for a stream nobody will finish ends
    // only when the drain timeout destroys it.
    expect(exited.afterSignalMs, 'exited before the drain timeout').to.be.below(DRAIN_TIMEOUT_MS);
    expect(leftOpen, 'tunnel streams still open at the edge before the signal').to.equal(0);
  });
});
