import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { Server } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createControlApi } from '../../src/edge/control/index.js';
import type { ControlApiOptions } from '../../src/edge/control/index.js';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import { openPostgresStore, openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { freshPostgresSchema } from '../support/postgres.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Ran is one finished `tuna` process. */
interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** tuna runs the real CLI as a child process (the sources through tsx), with only the TUNA_* variables given. */
function tuna(args: string[], env: Record<string, string> = {}): Promise<Ran> {
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

function json<T>(ran: Ran): T {
  expect(ran.code, ran.stderr).to.equal(0);
  return JSON.parse(ran.stdout) as T;
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

interface Minted {
  token: string;
}

/** The control-plane commands against a real store-mode edge on 127.0.0.1 (control API at /v1 of its tunnel listener). */
describe('tuna edge init, keys, reserve and release against a store-mode edge', function () {
  this.timeout(120_000);
  let dir: string;
  let edge: EdgeServer | undefined;
  let storePath: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-cli-control-'));
    storePath = join(dir, 'edge.db');
  });

  afterEach(async () => {
    await edge?.close();
    edge = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** initAndStart runs `tuna edge init` on a fresh store, then an edge on it; returns the env for the admin. */
  async function initAndStart(): Promise<{ env: Record<string, string>; adminToken: string }> {
    const init = await tuna(['edge', 'init', '--store', storePath, '--json']);
    const { token: adminToken } = json<Minted>(init);
    expect(adminToken).to.match(/^tuna_ak_/);
    expect(init.stderr).to.contain('only time the key is shown');
    const tcpPort = await freePort();
    const config = decodeEdgeConfig({
      listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
      store: { url: storePath, baseDomain: 'edge.test', portPool: { first: tcpPort, last: tcpPort } },
    });
    edge = await startEdge(config);
    return { env: { TUNA_EDGE: `http://127.0.0.1:${edge.address().tunnel.port}`, TUNA_API_KEY: adminToken }, adminToken };
  }

  it('runs init, a reservations key, a domain and a tcp port, a tunnel key, list, revoke and release', async () => {
    const { env: admin, adminToken } = await initAndStart();
    const opsRun = await tuna(['keys', 'create', '--scope', 'reservations', '--name', 'ops', '--json'], admin);
    const ops = json<Minted & { apiKey: { scopes: string[]; name: string } }>(opsRun);
    expect(ops.apiKey).to.include({ name: 'ops' });
    expect(ops.apiKey.scopes).to.deep.equal(['reservations']);
    expect(opsRun.stdout + opsRun.stderr).not.to.contain(adminToken);
    const env = { ...admin, TUNA_API_KEY: ops.token };

    const domain = json<{ reservation: { id: string; kind: string; value: string; verified: boolean }; created: boolean }>(
      await tuna(['reserve', 'domain', 'App.edge.test', '--label', 'team=web', '--json'], env),
    );
    expect(domain.created).to.equal(true);
    expect(domain.reservation).to.include({ kind: 'domain', value: 'app.edge.test', verified: true });
    const tcp = json<{ reservation: { id: string; value: string } }>(await tuna(['reserve', 'tcp', '--name', 'default/ssh', '--json'], env));
    const again = json<{ reservation: { id: string }; created: boolean }>(await tuna(['reserve', 'tcp', '--name', 'default/ssh', '--json'], env));
    expect(again).to.deep.include({ created: false });
    expect(again.reservation.id).to.equal(tcp.reservation.id);

    const before = Date.now();
    const mintRun = await tuna(
      ['keys', 'create', '--tunnel', '--reservation', domain.reservation.id, '--protocol', 'http', '--max-connections', '2', '--expires', '720h', '--label', 'cluster=prod', '--json'],
      env,
    );
    const tunnelKey = json<Minted & { tunnelKey: { id: string; reservationId: string; protocol: string; maxConnections: number; expiresAt: number; labels: object } }>(mintRun);
    expect(tunnelKey.token).to.match(/^tuna_tk_/);
    expect(tunnelKey.tunnelKey).to.deep.include({ reservationId: domain.reservation.id, protocol: 'http', maxConnections: 2, labels: { cluster: 'prod' } });
    expect(tunnelKey.tunnelKey.expiresAt).to.be.within(before + 720 * 3600_000 - 60_000, Date.now() + 720 * 3600_000 + 60_000);

    const listed = json<{ id: string }[]>(await tuna(['keys', 'list', '--tunnel', '--label', 'cluster=prod', '--json'], env));
    expect(listed.map((k) => k.id)).to.deep.equal([tunnelKey.tunnelKey.id]);
    const listRun = await tuna(['keys', 'list', '--tunnel', '--json'], env);
    expect(listRun.stdout).not.to.contain('tuna_tk_');
    expect(json<unknown[]>(await tuna(['keys', 'list', '--tunnel', '--label', 'cluster=dev', '--json'], env))).to.deep.equal([]);

    const revoke = await tuna(['keys', 'revoke', '--tunnel', tunnelKey.tunnelKey.id], env);
    expect(revoke.code, revoke.stderr).to.equal(0);
    expect(json<unknown[]>(await tuna(['keys', 'list', '--tunnel', '--json'], env))).to.deep.equal([]);

    const releaseTcp = json<{ reservation: { id: string } }>(await tuna(['release', 'tcp', tcp.reservation.value, '--json'], env));
    expect(releaseTcp.reservation.id).to.equal(tcp.reservation.id);
    const releaseDomain = await tuna(['release', 'domain', domain.reservation.id], env);
    expect(releaseDomain.code, releaseDomain.stderr).to.equal(0);
    expect(json<unknown[]>(await tuna(['reserve', 'list', '--json'], env))).to.deep.equal([]);
  });

  it('prints aligned tables with the expected columns and the new key on the last line', async () => {
    const { env } = await initAndStart();
    const created = await tuna(['keys', 'create', '--scope', 'reservations', '--scope', 'tunnels', '--name', 'ci'], env);
    expect(created.code, created.stderr).to.equal(0);
    const lines = created.stdout.trimEnd().split('\n');
    expect(lines[0]!.split(/\s+/)).to.deep.equal(['ID', 'NAME', 'SCOPES', 'ACCOUNT', 'CREATED']);
    expect(lines[1]!.split(/\s+/).slice(1, 3)).to.deep.equal(['ci', 'reservations,tunnels']);
    expect(lines.at(-1)).to.match(/^tuna_ak_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const ciEnv = { ...env, TUNA_API_KEY: lines.at(-1)! };

    const reserved = await tuna(['reserve', 'domain', 'www.example.org', '--label', 'team=web'], ciEnv);
    expect(reserved.code, reserved.stderr).to.equal(0);
    const [header, row] = reserved.stdout.trimEnd().split('\n');
    expect(header!.split(/\s+/)).to.deep.equal(['ID', 'KIND', 'VALUE', 'STATUS', 'NAME', 'LABELS', 'RESULT']);
    expect(row!.split(/\s+/).slice(1)).to.deep.equal(['domain', 'www.example.org', 'unverified', '-', 'team=web', 'created']);
    // Columns are aligned: every cell of a column starts where its header does.
    expect(row!.indexOf('www.example.org')).to.equal(header!.indexOf('VALUE'));
    expect(reserved.stderr).to.match(/_tuna-challenge\.www\.example\.org = "[^"]+"/);

    const keys = await tuna(['keys', 'list'], env);
    const keyLines = keys.stdout.trimEnd().split('\n');
    expect(keyLines).to.have.length(3);
    expect(keyLines.map((l) => l.split(/\s+/)[1])).to.deep.equal(['NAME', 'admin', 'ci']);
  });

  it('runs accounts create, list and disable with an admin key; the disabled account\'s keys then get the 401 line (exit 77)', async () => {
    const { env: admin } = await initAndStart();
    const created = await tuna(['accounts', 'create', 'team-a'], admin);
    expect(created.code, created.stderr).to.equal(0);
    const [header, row] = created.stdout.trimEnd().split('\n');
    expect(header!.split(/\s+/)).to.deep.equal(['ID', 'NAME', 'STATUS', 'CREATED', 'DISABLED']);
    const id = row!.split(/\s+/)[0]!;
    expect(row!.split(/\s+/).slice(1, 3)).to.deep.equal(['team-a', 'active']);
    expect(created.stderr).to.contain(`tuna keys create --account ${id} --scope reservations`);
    const key = json<Minted>(await tuna(['keys', 'create', '--account', id, '--scope', 'reservations', '--json'], admin));
    const tenant = { ...admin, TUNA_API_KEY: key.token };
    expect((await tuna(['reserve', 'tcp', '--json'], tenant)).code).to.equal(0);

    const listed = json<{ id: string; name: string; disabledAt: number | null }[]>(await tuna(['accounts', 'list', '--json'], admin));
    expect(listed.map((a) => [a.name, a.disabledAt])).to.deep.equal([['admin', null], ['team-a', null]]);

    const disabled = json<{ account: { id: string; disabledAt: number }; revokedApiKeyIds: string[]; revokedTunnelKeyIds: string[] }>(
      await tuna(['accounts', 'disable', id, '--json'], admin),
    );
    expect(disabled.account.id).to.equal(id);
    expect(disabled.account.disabledAt).to.be.a('number');
    expect(disabled.revokedApiKeyIds).to.have.length(1);
    const table = await tuna(['accounts', 'list'], admin);
    expect(table.stdout.trimEnd().split('\n')[2]!.split(/\s+/).slice(1, 3)).to.deep.equal(['team-a', 'disabled']);

    const refused = await tuna(['reserve', 'list'], tenant);
    expect(refused.code).to.equal(77);
    expect(refused.stderr).to.contain('the edge refused the API key (401)');
    const again = await tuna(['accounts', 'disable', id], admin);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stderr).to.contain('0 API key(s) and 0 tunnel key(s) revoked');
  });

  it('refuses accounts commands without the admin scope (exit 77), a taken name (exit 73) and an unknown account (exit 66)', async () => {
    const { env: admin } = await initAndStart();
    const ops = json<Minted>(await tuna(['keys', 'create', '--scope', 'reservations', '--json'], admin));
    const forbidden = await tuna(['accounts', 'create', 'x'], { ...admin, TUNA_API_KEY: ops.token });
    expect(forbidden.code).to.equal(77);
    expect(forbidden.stderr).to.contain('(403): it needs the admin scope');
    const taken = await tuna(['accounts', 'create', 'admin'], admin);
    expect(taken.code).to.equal(73);
    expect(taken.stderr).to.match(/^tuna accounts: conflict \(409\): account name "admin" is taken/);
    const missing = await tuna(['accounts', 'disable', '0123456789abcdef'], admin);
    expect(missing.code).to.equal(66);
    expect(missing.stderr.trim()).to.equal('tuna accounts: not found (404): account 0123456789abcdef not found');
  });

  it('refuses a second edge init and leaves the store unchanged, with exit status 73', async () => {
    const first = await tuna(['edge', 'init', '--store', storePath]);
    expect(first.code, first.stderr).to.equal(0);
    const second = await tuna(['edge', 'init', '--store', storePath, '--account', 'other']);
    expect(second.code).to.equal(73);
    expect(second.stdout).to.equal('');
    expect(second.stderr.trim()).to.equal(
      'tuna edge: the store already has accounts; nothing was changed. Create more keys with an admin key: tuna keys create --scope admin',
    );
    const store = await openSqliteStore(storePath);
    try {
      const accounts = await store.listAccounts();
      expect(accounts.map((a) => a.name)).to.deep.equal(['admin']);
      expect(await store.listApiKeys(accounts[0]!.id)).to.have.length(1);
    } finally {
      await store.close();
    }
  });

  it('turns a wrong API key into the 401 line and exit status 77, without echoing the key', async () => {
    const { env } = await initAndStart();
    const wrong = `${env.TUNA_API_KEY!.slice(0, -4)}AAAA`;
    const ran = await tuna(['reserve', 'list'], { ...env, TUNA_API_KEY: wrong });
    expect(ran.code).to.equal(77);
    expect(ran.stdout).to.equal('');
    expect(ran.stderr.trim()).to.equal(
      'tuna reserve: the edge refused the API key (401): it is wrong, revoked, or a tunnel key; check --api-key or TUNA_API_KEY',
    );
    expect(ran.stderr).not.to.contain(wrong.slice(-20));
  });

  it('says which scope is missing on 403 and that a hostname is taken on 409', async () => {
    const { env } = await initAndStart();
    const ops = json<Minted>(await tuna(['keys', 'create', '--scope', 'reservations', '--json'], env));
    const forbidden = await tuna(['keys', 'create', '--scope', 'admin'], { ...env, TUNA_API_KEY: ops.token });
    expect(forbidden.code).to.equal(77);
    expect(forbidden.stderr).to.contain('(403): it needs the admin scope');
    // A second account (made through the API by the admin) asks for the same hostname.
    const res = await fetch(`${env.TUNA_EDGE!}/v1/accounts`, {
      method: 'POST',
      headers: { 'authorization': `Bearer ${env.TUNA_API_KEY!}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'tenant-b' }),
    });
    const { account } = (await res.json()) as { account: { id: string } };
    const tenant = json<Minted>(await tuna(['keys', 'create', '--scope', 'reservations', '--account', account.id, '--json'], env));
    expect((await tuna(['reserve', 'domain', 'shop.edge.test'], { ...env, TUNA_API_KEY: ops.token })).code).to.equal(0);
    const taken = await tuna(['reserve', 'domain', 'shop.edge.test'], { ...env, TUNA_API_KEY: tenant.token });
    expect(taken.code).to.equal(73);
    expect(taken.stderr).to.match(/^tuna reserve: conflict \(409\): /);
    const missing = await tuna(['release', 'domain', 'nope.edge.test'], { ...env, TUNA_API_KEY: ops.token });
    expect(missing.code).to.equal(66);
    expect(missing.stderr).to.contain('no domain reservation "nope.edge.test" held by this account');
  });
});

/**
 * `tuna reserve domain` of a custom domain, then `tuna reserve verify`, run as child processes
 * against createControlApi on 127.0.0.1 whose DNS check reads a map the test fills (the real TXT
 * lookup has its own test, control-dns-verify.test.ts).
 */
describe('tuna against the control API alone: custom-domain verification and the rate limit', function () {
  this.timeout(60_000);
  let store: Store | undefined;
  let server: Server | undefined;

  afterEach(async () => {
    server?.close();
    await store?.close();
    server = undefined;
    store = undefined;
  });

  /** serveApi serves createControlApi over a fresh in-memory store; returns the env of a `reservations` key. */
  async function serveApi(extra: Partial<ControlApiOptions>): Promise<Record<string, string>> {
    store = await openSqliteStore(':memory:');
    const account = await store.createAccount({ name: 'a' }, 'test');
    const { token } = await store.createApiKey({ accountId: account.id, name: 'ops', scopes: ['reservations'] }, 'test');
    server = createHttpServer(createControlApi({ store, baseDomain: 'edge.test', ...extra }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { TUNA_EDGE: `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`, TUNA_API_KEY: token };
  }

  it('answers 429 with exit status 75 and the wait once wrong keys spent the budget, even for the right key', async () => {
    const env = await serveApi({ rateLimit: { capacity: 1, refillPerSecond: 0.01 } });
    const wrong = await tuna(['reserve', 'list'], { ...env, TUNA_API_KEY: `${env.TUNA_API_KEY!.slice(0, -2)}zz` });
    expect(wrong.code).to.equal(77);
    const limited = await tuna(['reserve', 'list'], env);
    expect(limited.code).to.equal(75);
    expect(limited.stderr.trim()).to.match(/^tuna reserve: the edge is rate-limiting this address after failed authentications \(429\); try again in \d+ s$/);
  });

  it('answers 409 with exit status 73 until the TXT record holds the printed token, then shows the domain ready', async () => {
    const txt = new Map<string, string>();
    const env = await serveApi({ verifyDomain: async (host, value) => txt.get(host) === value });

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

/** `tuna edge init` on PostgreSQL (the test server of test/support/postgres.ts) and on a store it cannot open. */
describe('tuna edge init on PostgreSQL', function () {
  this.timeout(600_000);

  it('initialises a schema once, refuses the second init with exit status 73, and the store holds one admin key', async () => {
    const { connectionString, schema } = await freshPostgresSchema();
    const first = await tuna(['edge', 'init', '--store', connectionString, '--schema', schema, '--account', 'ops', '--json']);
    const minted = json<Minted & { account: { name: string }; apiKey: { scopes: string[] } }>(first);
    expect(minted.account.name).to.equal('ops');
    expect(minted.apiKey.scopes).to.deep.equal(['admin']);
    const second = await tuna(['edge', 'init', '--store', connectionString, '--schema', schema]);
    expect(second.code).to.equal(73);
    const store = await openPostgresStore({ connectionString, schema });
    try {
      const accounts = await store.listAccounts();
      expect(accounts.map((a) => a.name)).to.deep.equal(['ops']);
      expect((await store.authenticateApiKey(minted.token))?.scopes).to.deep.equal(['admin']);
    } finally {
      await store.close();
    }
  });

  it('exits with status 78 when the store cannot be opened, without echoing the URL and its password', async () => {
    const port = await freePort();
    const ran = await tuna(['edge', 'init', '--store', `postgres://tuna:s3cret-pw@127.0.0.1:${port}/tuna`]);
    expect(ran.code).to.equal(78);
    expect(ran.stderr).to.match(/^tuna edge: cannot open the PostgreSQL store: /);
    expect(ran.stderr).not.to.contain('s3cret-pw');
    expect(ran.stdout).to.equal('');
  });
});
