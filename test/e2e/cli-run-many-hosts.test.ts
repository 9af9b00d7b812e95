import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { getVia, newKey, startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { BASE_DOMAIN, api, reserveAndMint, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import { loopbackService } from '../support/loopback-service.js';

/**
 * One `tuna run --manifests` serves every binding of its graph, each with its
 * own key (`--keys FILE`) or with one account key of scope `tunnels`; a refusal names the binding.
 */
describe('tuna run publishes many hosts', function () {
  this.timeout(30_000);
  const keyA = newKey();
  const keyB = newKey();
  const keyC = newKey();
  let edge: EdgeServer | undefined;
  let store: Store | undefined;
  let runs: CliRun[] = [];
  let backend: TestBackend;
  let dir: string;
  let keysDir: string;

  beforeEach(async () => {
    backend = await startHttpBackend('web');
    dir = mkdtempSync(join(tmpdir(), 'tuna-many-'));
    keysDir = mkdtempSync(join(tmpdir(), 'tuna-keys-'));
  });

  /** keysFile writes a --keys file outside the manifests folder (it is not a manifest). */
  function keysFile(text: string): string {
    const path = join(keysDir, 'keys.yaml');
    writeFileSync(path, text);
    return path;
  }
  afterEach(async () => {
    for (const r of runs) r.stop();
    await Promise.all(runs.map((r) => r.exit.catch(() => 0)));
    runs = [];
    await edge?.close();
    edge = undefined;
    await store?.close();
    store = undefined;
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(keysDir, { recursive: true, force: true });
  });

  async function configEdge(): Promise<{ http: number; tunnel: number }> {
    const binding = (host: string, sha256: string) => ({ id: `binding/host/${host}`, kind: 'host', hostnames: [host], keys: [{ sha256 }] });
    edge = await startEdge(
      decodeEdgeConfig({
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
        bindings: [binding('a.test', keyA.sha256), binding('b.test', keyB.sha256), binding('c.test', keyC.sha256)],
      }),
    );
    return { http: edge.address().http!.port, tunnel: edge.address().tunnel.port };
  }

  function run(argv: string[]): CliRun {
    const r = startCli(argv);
    runs.push(r);
    return r;
  }

  async function backendOf(port: number, host: string): Promise<string> {
    const res = await getVia(port, host, '/');
    return res.status === 200 ? (JSON.parse(res.body) as EchoReply).backend : `HTTP ${res.status}`;
  }

  it('serves three hosts from one process: two keys from --keys (by hostname and by binding id), the third from --key', async () => {
    const ports = await configEdge();
    writeFileSync(join(dir, 'objects.yaml'), manifests(['a.test', 'b.test', 'c.test'], backend.port));
    const keys = keysFile(`a.test: ${keyA.key}\nbinding/host/b.test: ${keyB.key}\n`);
    const r = run(['run', '--manifests', dir, '--keys', keys, '--edge', `tcp://127.0.0.1:${ports.tunnel}`, '--key', keyC.key]);
    await r.waitForOut('Serving');
    for (const host of ['a.test', 'b.test', 'c.test']) expect(await backendOf(ports.http, host), host).to.equal('web');
  });

  it('carries the three hosts over one tunnel connection, each attached with its own key', async () => {
    const ports = await configEdge();
    writeFileSync(join(dir, 'objects.yaml'), manifests(['a.test', 'b.test', 'c.test'], backend.port));
    const keys = keysFile(`a.test: ${keyA.key}\nb.test: ${keyB.key}\nc.test: ${keyC.key}\n`);
    const r = run(['run', '--manifests', dir, '--keys', keys, '--edge', `tcp://127.0.0.1:${ports.tunnel}`]);
    await r.waitForOut('Serving');
    const tunnels = edge!.registry.all();
    expect(tunnels.map((t) => t.bindingId).sort()).to.deep.equal(['binding/host/a.test', 'binding/host/b.test', 'binding/host/c.test']);
    expect(new Set(tunnels.map((t) => t.socket)).size).to.equal(1);
    expect(new Set(tunnels.map((t) => t.keyId)).size).to.equal(3);
    for (const host of ['a.test', 'b.test', 'c.test']) expect(await backendOf(ports.http, host), host).to.equal('web');
  });

  it('names the refused binding and the key it tried (never the key), and exits 77', async () => {
    const ports = await configEdge();
    writeFileSync(join(dir, 'objects.yaml'), manifests(['a.test', 'b.test'], backend.port));
    const keys = keysFile(`a.test: ${keyA.key}\nb.test: ${keyC.key}\n`);
    const r = run(['run', '--manifests', dir, '--keys', keys, '--edge', `tcp://127.0.0.1:${ports.tunnel}`]);
    expect(await r.exit).to.equal(77);
    const err = r.err.join('\n');
    expect(err).to.contain('binding binding/host/b.test (b.test) with the key from --keys entry b.test: edge refused the tunnel (HTTP 403)');
    expect(err).not.to.contain('binding/host/a.test');
    expect(err).to.contain('check --key');
    expect(err).not.to.contain(keyC.key);
  });

  it('refuses, naming it, a binding that has no key in --keys and no --key', async () => {
    const ports = await configEdge();
    writeFileSync(join(dir, 'objects.yaml'), manifests(['a.test', 'b.test'], backend.port));
    const keys = keysFile(`a.test: ${keyA.key}\n`);
    const r = run(['run', '--manifests', dir, '--keys', keys, '--edge', `tcp://127.0.0.1:${ports.tunnel}`]);
    expect(await r.exit).to.equal(2);
    expect(r.err.join('\n')).to.contain('binding binding/host/b.test (b.test) has no key');
  });

  it('serves two store-mode reservations with their own tunnel keys (naming the one whose key is revoked later), and with one account key of scope tunnels', async () => {
    store = await openSqliteStore(':memory:');
    const running = await startStoreEdge(store);
    edge = running.edge;
    const seeded = await seedAccount(store);
    const hosts = [`one.${BASE_DOMAIN}`, `two.${BASE_DOMAIN}`];
    const minted = await Promise.all(hosts.map((h) => reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: h }, { protocol: 'http' })));
    writeFileSync(join(dir, 'objects.yaml'), manifests(hosts, backend.port));
    const keys = keysFile(hosts.map((h, i) => `${h}: ${minted[i]!.token}`).join('\n'));
    const perBinding = run(['run', '--manifests', dir, '--keys', keys, '--edge', `tcp://127.0.0.1:${running.endpoint.port}`]);
    await perBinding.waitForOut('Serving');
    for (const h of hosts) expect(await backendOf(running.httpPort, h), h).to.equal('web');
    // A key revoked while serving: the agent says which binding lost its tunnel and why, once, and
    // the other binding keeps serving.
    expect((await api(running.controlPort, 'DELETE', `/v1/tunnel-keys/${minted[1]!.keyId}`, seeded.reservationsToken)).status).to.equal(200);
    const refused = `binding binding/host/${hosts[1]!} (${hosts[1]!}) with the key from --keys entry ${hosts[1]!}: edge refused the tunnel (HTTP 403)`;
    for (let i = 0; i < 100 && !perBinding.err.some((l) => l.includes(refused)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(perBinding.err.filter((l) => l.includes(refused)), perBinding.err.join('\n')).to.have.length(1);
    expect(await backendOf(running.httpPort, hosts[0]!)).to.equal('web');
    perBinding.stop();
    expect(await perBinding.exit).to.equal(0);
    const account = await api(running.controlPort, 'POST', '/v1/api-keys', seeded.adminToken, { name: 'laptop', scopes: ['tunnels'] });
    const oneKey = run(['run', '--manifests', dir, '--edge', `tcp://127.0.0.1:${running.endpoint.port}`, '--key', account.body['token'] as string]);
    await oneKey.waitForOut('Serving');
    for (const h of hosts) expect(await backendOf(running.httpPort, h), h).to.equal('web');
  });
});

/** manifests: one Ingress with a rule per host, all to Service web. */
function manifests(hosts: string[], port: number): string {
  const rules = hosts.map((h) => `    - host: ${h}\n      http:\n        paths:\n          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}\n`).join('');
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: site, namespace: default}
spec:
  ingressClassName: tuna
  rules:
${rules}${loopbackService('web', port)}`;
}
