// cli-release-cluster.test.ts — `tuna release --cluster-id ID` (what the chart's uninstall hook
// runs) against a store-mode edge on loopback: every reservation of that cluster is released and
// every tunnel key of it revoked, another cluster's are untouched, and bad flags name themselves.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** tuna runs the CLI (sources through tsx) and resolves with its exit code and output. */
function tuna(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TUNA_')));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('tuna release --cluster-id (the uninstall hook)', function () {
  this.timeout(90_000);
  let store: Store;
  let edge: StoreEdge;
  let client: ControlClient;
  let work: string;
  let keyFile: string;

  before(async () => {
    store = await openSqliteStore(':memory:');
    edge = await startStoreEdge(store);
    const seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, seeded.reservationsToken);
    work = mkdtempSync(path.join(tmpdir(), 'tuna-release-cluster-'));
    keyFile = path.join(work, 'apiKey');
    writeFileSync(keyFile, seeded.reservationsToken);
  });

  after(async () => {
    await edge?.edge.close();
    await store?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** hold reserves a hostname labelled with a cluster and mints a tunnel key for it. */
  async function hold(cluster: string, name: string): Promise<void> {
    const labels = { 'tuna.dev/cluster': cluster };
    const { reservation } = await client.reserve({ kind: 'domain', hostname: `${name}.${BASE_DOMAIN}`, labels });
    await client.mintTunnelKey({ reservationId: reservation.id, protocol: 'http', labels });
  }

  it('releases every reservation and revokes every key of that cluster, and nothing of another', async () => {
    await hold('gone', 'a');
    await hold('gone', 'b');
    await hold('kept', 'c');
    // a key of the cluster whose reservation is not labelled (revoked on its own)
    const { reservation } = await client.reserve({ kind: 'domain', hostname: `d.${BASE_DOMAIN}` });
    await client.mintTunnelKey({ reservationId: reservation.id, protocol: 'http', labels: { 'tuna.dev/cluster': 'gone' } });

    const ran = await tuna(['release', '--cluster-id', 'gone', '--edge', `tcp://127.0.0.1:${edge.controlPort}`, '--api-key-file', keyFile, '--settle', '0', '--json']);
    expect(ran.code, ran.stderr).to.equal(0);
    // a second pass finds nothing: settled
    expect(JSON.parse(ran.stdout)).to.deep.equal({ released: 2, retained: 0, revoked: 3, passes: 2, isSettled: true });
    const live = async (cluster: string) => (await client.listTunnelKeys({ 'tuna.dev/cluster': cluster })).tunnelKeys.filter((k) => k.revokedAt === null);
    expect(await live('gone')).to.deep.equal([]);
    expect((await client.listReservations({ 'tuna.dev/cluster': 'gone' })).reservations).to.deep.equal([]);
    expect(await live('kept')).to.have.length(1);
    expect((await client.listReservations({ 'tuna.dev/cluster': 'kept' })).reservations.map((r) => r.value)).to.deep.equal([`c.${BASE_DOMAIN}`]);
    expect((await client.listReservations()).reservations.map((r) => r.value), 'an unlabelled reservation stays').to.include(`d.${BASE_DOMAIN}`);

    const again = await tuna(['release', '--cluster-id', 'gone', '--edge', `tcp://127.0.0.1:${edge.controlPort}`, '--api-key-file', keyFile, '--settle', '0']);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stderr).to.include('cluster gone: 0 reservation(s) released, 0 tunnel key(s) revoked');
  });

  it('keeps the reservation of a reclaimPolicy Retain Domain or TCPPort for the account, its keys revoked, relabelled away from the cluster', async () => {
    const cluster = 'retaining';
    const base = { 'tuna.dev/cluster': cluster, 'tuna.dev/owner-kind': 'Domain.tuna.dev' };
    const kept = await client.reserve({ kind: 'domain', hostname: `kept.${BASE_DOMAIN}`, labels: { ...base, 'tuna.dev/reclaim-policy': 'Retain' } });
    const dropped = await client.reserve({ kind: 'domain', hostname: `dropped.${BASE_DOMAIN}`, labels: { ...base, 'tuna.dev/reclaim-policy': 'Delete' } });
    for (const r of [kept, dropped]) await client.mintTunnelKey({ reservationId: r.reservation.id, protocol: 'http', labels: { 'tuna.dev/cluster': cluster } });

    const ran = await tuna(['release', '--cluster-id', cluster, '--edge', `tcp://127.0.0.1:${edge.controlPort}`, '--api-key-file', keyFile, '--settle', '0', '--json']);
    expect(ran.code, ran.stderr).to.equal(0);
    expect(JSON.parse(ran.stdout)).to.include({ released: 1, retained: 1, revoked: 2, isSettled: true });
    expect(ran.stderr).to.include(`kept domain kept.${BASE_DOMAIN} for the account (reclaimPolicy Retain`);
    expect((await client.listReservations({ 'tuna.dev/cluster': cluster })).reservations).to.deep.equal([]);
    const retained = (await client.listReservations({ 'tuna.dev/retained-from': cluster })).reservations;
    expect(retained.map((r) => [r.id, r.value, r.labels['tuna.dev/reclaim-policy']])).to.deep.equal([[kept.reservation.id, `kept.${BASE_DOMAIN}`, 'Retain']]);
    expect((await client.listReservations()).reservations.map((r) => r.value)).to.not.include(`dropped.${BASE_DOMAIN}`);
    expect((await client.listTunnelKeys({ 'tuna.dev/cluster': cluster })).tunnelKeys.filter((k) => k.revokedAt === null)).to.deep.equal([]);
  });

  it('names a bad --settle, an empty --cluster-id, and a stray argument', async () => {
    const edgeFlags = ['--edge', `tcp://127.0.0.1:${edge.controlPort}`, '--api-key-file', keyFile];
    const settle = await tuna(['release', '--cluster-id', 'x', '--settle', 'soon', ...edgeFlags]);
    expect(settle.code).to.not.equal(0);
    expect(settle.stderr).to.include('settle');
    const empty = await tuna(['release', '--cluster-id', '', ...edgeFlags]);
    expect(empty.stderr).to.include('--cluster-id must not be empty');
    const stray = await tuna(['release', '--cluster-id', 'x', 'domain', ...edgeFlags]);
    expect(stray.stderr).to.include('--cluster-id takes no "domain"');
  });
});
