import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createControlApi } from '../../src/edge/control/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

function tuna(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TUNA_')));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: repoRoot, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * `tuna reserve domain` of a custom domain, then `tuna reserve verify`, run as child processes
 * against createControlApi on 127.0.0.1 whose DNS check reads a map the test fills (the real TXT
 * lookup has its own test, control-dns-verify.test.ts).
 */
describe('tuna reserve verify of a custom domain', function () {
  this.timeout(60_000);
  let store: Store | undefined;
  let server: Server | undefined;

  afterEach(async () => {
    server?.close();
    await store?.close();
    server = undefined;
    store = undefined;
  });

  it('answers 409 with exit status 73 until the TXT record holds the printed token, then shows the domain ready', async () => {
    store = await openSqliteStore(':memory:');
    const account = await store.createAccount({ name: 'a' }, 'test');
    const { token } = await store.createApiKey({ accountId: account.id, name: 'ops', scopes: ['reservations'] }, 'test');
    const txt = new Map<string, string>();
    server = createServer(createControlApi({ store, baseDomain: 'edge.test', verifyDomain: async (host, value) => txt.get(host) === value }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const env = { TUNA_EDGE: `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`, TUNA_API_KEY: token };

    const reserved = await tuna(['reserve', 'domain', 'www.example.org'], env);
    expect(reserved.code, reserved.stderr).to.equal(0);
    const printed = /_tuna-challenge\.www\.example\.org = "([^"]+)", then run tuna reserve verify www\.example\.org/.exec(reserved.stderr);
    expect(printed, reserved.stderr).not.to.equal(null);

    const early = await tuna(['reserve', 'verify', 'www.example.org'], env);
    expect(early.code).to.equal(73);
    expect(early.stderr).to.match(/^tuna reserve: conflict \(409\): no TXT record _tuna-challenge\.www\.example\.org/);

    txt.set('www.example.org', printed![1]!);
    const verified = await tuna(['reserve', 'verify', 'WWW.example.org.'], env);
    expect(verified.code, verified.stderr).to.equal(0);
    const [header, row] = verified.stdout.trimEnd().split('\n');
    expect(header!.split(/\s+/)).to.deep.equal(['ID', 'KIND', 'VALUE', 'STATUS', 'NAME', 'LABELS']);
    expect(row!.split(/\s+/).slice(1, 4)).to.deep.equal(['domain', 'www.example.org', 'ready']);
  });
});
