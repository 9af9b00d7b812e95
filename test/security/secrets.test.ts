import { expect } from 'chai';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attack } from '../support/attack-log.js';
import { startCli } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { api, secretOf } from '../support/edge-store-harness.js';
import { spawnTuna, startEdgeProcess, stopEdgeProcess } from '../support/edge-process.js';
import type { EdgeProcess, TunaProcess } from '../support/edge-process.js';
import { http1, waitUntil } from '../support/tunnel-harness.js';

// Secrets never reach a log: a real `tuna edge` (store mode) and a real `tuna http`, as their own
// processes, with every line of output they have (JSON logs, the agent's access log), through a
// scenario that logs failures on both sides; and the store file is the owner's only
// (docs/security.md "Attack suite").

const HOST = 'app.tuna.test';

describe('attack: secrets in the logs of an edge and an agent', function () {
  this.timeout(90_000);
  let dir: string;
  let backend: TestBackend;
  let edge: EdgeProcess | undefined;
  let agent: TunaProcess | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tuna-secrets-'));
    backend = await startHttpBackend('app');
  });

  after(async () => {
    await stopEdgeProcess(agent);
    await stopEdgeProcess(edge);
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes none of six keys (nor their secrets) into any line either process prints, and keeps the store file 0600', async () => {
    const storeFile = join(dir, 'edge.db');
    const init = startCli(['edge', 'init', '--store', storeFile, '--json']);
    expect(await init.exit).to.equal(0);
    const adminToken = (JSON.parse(init.out.join('\n')) as { token: string }).token;
    edge = await startEdgeProcess(['--tunnel', '127.0.0.1:0', '--http', '127.0.0.1:0', '--store', storeFile, '--base-domain', 'tuna.test', '--workers', '1', '--log-format', 'json']);
    const port = edge.tunnelPort;
    const minted: string[] = [adminToken];
    const reservations = await api(port, 'POST', '/v1/api-keys', adminToken, { name: 'operator', scopes: ['reservations'] });
    const reservationsToken = reservations.body['token'] as string;
    const cliKey = await api(port, 'POST', '/v1/api-keys', adminToken, { name: 'cli', scopes: ['tunnels'] });
    minted.push(reservationsToken, cliKey.body['token'] as string);
    const reserved = await api(port, 'POST', '/v1/reservations', reservationsToken, { kind: 'domain', hostname: HOST });
    const reservationId = (reserved.body['reservation'] as { id: string }).id;
    const tunnelKey = await api(port, 'POST', '/v1/tunnel-keys', reservationsToken, { reservationId, protocol: 'http' });
    const tunnelToken = tunnelKey.body['token'] as string;
    const keyId = (tunnelKey.body['tunnelKey'] as { id: string }).id;
    minted.push(tunnelToken);

    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, `${tunnelToken}\n`, { mode: 0o600 });
    agent = spawnTuna(['http', String(backend.port), '--host', HOST, '--edge', `tcp://127.0.0.1:${port}`, '--key-file', keyFile, '--log-format', 'json', '--access-log', 'stdout'], {
      TUNA_INSPECT: 'false',
    });
    await agent.waitForOut(/Forwarding/);
    // requests that carry credentials: an Authorization header and credential-like query values
    const served = await http1(edge.httpPort, HOST, `/login?token=${encodeURIComponent(adminToken)}&api_key=${encodeURIComponent(reservationsToken)}`, {
      headers: { authorization: `Bearer ${tunnelToken}`, cookie: `session=${secretOf(adminToken)}` },
    });
    expect(served.status).to.equal(200);
    // failures log on both sides: wrong keys on the control API and the tunnel, a rotation, then a revocation the agent sees
    const wrong = `${tunnelToken.slice(0, -6)}AAAAAA`;
    minted.push(wrong);
    expect((await api(port, 'GET', '/v1/account', wrong)).status).to.equal(401);
    const wrongAgent = spawnTuna(['http', String(backend.port), '--host', HOST, '--edge', `tcp://127.0.0.1:${port}`, '--key', wrong, '--log-format', 'json'], { TUNA_INSPECT: 'false' });
    await new Promise((resolve) => wrongAgent.child.once('exit', resolve));
    const rotated = await api(port, 'POST', `/v1/tunnel-keys/${keyId}/rotate`, reservationsToken, { graceSeconds: 0 });
    minted.push(rotated.body['token'] as string);
    await api(port, 'DELETE', `/v1/tunnel-keys/${keyId}`, reservationsToken);
    await waitUntil(() => /refused|revoked|403/i.test(agent!.out() + agent!.stderr()), 20_000);
    await stopEdgeProcess(agent);
    await stopEdgeProcess(edge);

    const outputs = {
      edge: edge.out() + edge.stderr(),
      agent: agent.out() + agent.stderr(),
      'agent with a wrong key': wrongAgent.out() + wrongAgent.stderr(),
    };
    const secrets = minted.flatMap((token) => [token, secretOf(token)]);
    const lines = Object.values(outputs).join('\n').split('\n').filter((l) => l.trim() !== '').length;
    const found = Object.entries(outputs).flatMap(([who, text]) => secrets.filter((s) => text.includes(s)).map((s) => `${who}: …${s.slice(-6)}`));
    const modes = ['', '-wal', '-shm'].filter((suffix) => existsSync(storeFile + suffix)).map((suffix) => `edge.db${suffix} ${(statSync(storeFile + suffix).mode & 0o777).toString(8)}`);
    attack(`secrets in logs: ${minted.length} keys (${secrets.length} strings with their secrets) against ${lines} lines of edge and agent output → ${found.length} found; store files ${modes.join(', ')}`);
    expect(outputs.edge).to.include('tunnel refused');
    expect(outputs.agent).to.match(/"status":200/);
    expect(found).to.deep.equal([]);
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(storeFile + suffix)) expect(statSync(storeFile + suffix).mode & 0o777, `edge.db${suffix}`).to.equal(0o600);
  });

  it('tightens a store file left 0644 to 0600 when a real edge opens it', async () => {
    const storeFile = join(dir, 'loose.db');
    const init = startCli(['edge', 'init', '--store', storeFile, '--json']);
    expect(await init.exit).to.equal(0);
    chmodSync(storeFile, 0o644);
    const loose = await startEdgeProcess(['--tunnel', '127.0.0.1:0', '--http', '127.0.0.1:0', '--store', storeFile, '--workers', '1']);
    await stopEdgeProcess(loose);
    const mode = statSync(storeFile).mode & 0o777;
    attack(`loose store file: edge.db chmod 644, then tuna edge opens it → ${mode.toString(8)}`);
    expect(mode).to.equal(0o600);
  });
});
