import { expect } from 'chai';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPostgresStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelManager } from '../../src/tunnel/manager.js';
import { freshPostgresSchema } from '../support/postgres.js';
import type { PostgresTarget } from '../support/postgres.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, waitUntil } from '../support/tunnel-harness.js';
import { newTestManager } from '../support/tunnel-manager-fixture.js';
import { BASE_DOMAIN, api, reserveAndMint, seedAccount } from '../support/edge-store-harness.js';
import type { Seeded } from '../support/edge-store-harness.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** EdgeNode is one `tuna edge` child process. */
interface EdgeNode {
  child: ChildProcess;
  tunnelPort: number;
  httpPort: number;
  stderr: string[];
}

/** startNode runs `tuna edge --config FILE` on a store-mode config and waits for its ports. */
async function startNode(dir: string, name: string, target: PostgresTarget, ports = { tunnel: 0, http: 0 }): Promise<EdgeNode> {
  const config = join(dir, `${name}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      listen: { tunnel: { host: '127.0.0.1', port: ports.tunnel }, http: { host: '127.0.0.1', port: ports.http } },
      store: { url: target.connectionString, schema: target.schema, baseDomain: BASE_DOMAIN, pollMs: 200 },
      limits: { tunnelWaitMs: 3000 },
    }),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'edge', '--config', config, '--workers', '1'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
  child.stdout!.setEncoding('utf8');
  let out = '';
  const deadline = Date.now() + 30_000;
  for await (const chunk of child.stdout!) {
    out += chunk as string;
    const match = /tunnel listener on port (\d+), public HTTP on port (\d+)/.exec(out);
    if (match) return { child, tunnelPort: Number(match[1]), httpPort: Number(match[2]), stderr };
    if (Date.now() > deadline) break;
  }
  child.kill('SIGKILL');
  throw new Error(`edge ${name} did not start: ${out} ${stderr.join('')}`);
}

async function stopNode(node: EdgeNode | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (node === undefined || node.child.exitCode !== null || node.child.signalCode !== null) return;
  const exited = once(node.child, 'exit');
  node.child.kill(signal);
  const timer = setTimeout(() => node.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

describe('scale-out: two edge processes sharing PostgreSQL', function () {
  // The first suite to ask installs and starts PostgreSQL (hack/postgres.sh); child edges start through tsx.
  this.timeout(180_000);
  let dir: string;
  let target: PostgresTarget;
  let store: Store;
  let seeded: Seeded;
  let a: EdgeNode | undefined;
  let b: EdgeNode | undefined;
  let manager: TunnelManager | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-scale-out-'));
    target = await freshPostgresSchema();
    store = await openPostgresStore(target);
    seeded = await seedAccount(store);
    [a, b] = await Promise.all([startNode(dir, 'a', target), startNode(dir, 'b', target)]);
  });

  afterEach(async () => {
    manager?.destroy();
    manager = undefined;
    await Promise.all([stopNode(a), stopNode(b)]);
    a = b = undefined;
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const endpoint = (node: EdgeNode) => ({ host: '127.0.0.1', port: node.tunnelPort, tls: false });

  it('serves through node B a reservation and key made through node A, loses no request when A dies, and serves through A again after the agent reconnects', async () => {
    const host = `shop.${BASE_DOMAIN}`;
    const t = await reserveAndMint(a!.tunnelPort, seeded.reservationsToken, { kind: 'domain', hostname: host }, { protocol: 'http', maxConnections: 1 });
    manager = newTestManager(new TestStreamHandler(), new Map([['shop', t.token]]), { backoff: { baseMs: 100, maxMs: 500 } });
    manager.apply([{ bindingId: t.bindingId, edges: [endpoint(a!), endpoint(b!)], keyRef: 'shop' }]);
    await waitUntil(() => manager!.sessions(t.bindingId).length === 2, 10_000);
    expect((await http1(b!.httpPort, host, '/via-b')).status).to.equal(200);
    expect((await http1(a!.httpPort, host, '/via-a')).status).to.equal(200);

    // A dies without draining (a crash): every request through the survivor still succeeds.
    const statuses: Promise<number>[] = [];
    for (let i = 0; i < 20; i++) statuses.push(http1(b!.httpPort, host, `/before-${i}`).then((r) => r.status));
    await stopNode(a, 'SIGKILL');
    for (let i = 0; i < 40; i++) statuses.push(http1(b!.httpPort, host, `/after-${i}`).then((r) => r.status));
    expect(await Promise.all(statuses)).to.deep.equal(new Array(60).fill(200));
    await waitUntil(() => manager!.sessions(t.bindingId).length === 1, 10_000);
    expect((await http1(b!.httpPort, host, '/still')).status).to.equal(200);

    // A comes back on its ports; after the agent's next retry it serves every request again.
    a = await startNode(dir, 'a', target, { tunnel: a!.tunnelPort, http: a!.httpPort });
    await waitUntil(() => manager!.sessions(t.bindingId).length === 2, 15_000);
    const again = await Promise.all(Array.from({ length: 20 }, (_, i) => http1(a!.httpPort, host, `/back-${i}`).then((r) => r.status)));
    expect(again).to.deep.equal(new Array(20).fill(200));
  });

  it('closes within 1 s the tunnels on node A of a key revoked through node B', async () => {
    const host = `revoked.${BASE_DOMAIN}`;
    const t = await reserveAndMint(a!.tunnelPort, seeded.reservationsToken, { kind: 'domain', hostname: host }, { protocol: 'http', maxConnections: 1 });
    manager = newTestManager(new TestStreamHandler(), new Map([['k', t.token]]), { backoff: { baseMs: 5_000, maxMs: 10_000 } });
    manager.apply([{ bindingId: t.bindingId, edges: [endpoint(a!)], keyRef: 'k' }]);
    await waitUntil(() => manager!.sessions(t.bindingId).length === 1, 10_000);
    const [session] = manager.sessions(t.bindingId);
    const since = Date.now();
    const revoked = await api(b!.tunnelPort, 'DELETE', `/v1/tunnel-keys/${t.keyId}`, seeded.reservationsToken);
    expect(revoked.status).to.equal(200);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      session!.closed(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('node A kept the revoked tunnel open past 1 s')), since + 1000 - Date.now()))),
    ]);
    clearTimeout(timer);
    expect((await http1(a!.httpPort, host, '/')).status).to.equal(503);
  });
});
