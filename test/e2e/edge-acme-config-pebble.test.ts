import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import type { Socket as UdpSocket } from 'node:dgram';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { initEdge, loadEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { connectAgent, reserveAndMint } from '../support/edge-store-harness.js';
import { freePort, getText, handshake, installPebble, PEBBLE_DOMAIN, startLoopbackDns, startPebble } from '../support/pebble.js';
import type { Pebble } from '../support/pebble.js';
import { waitUntil } from '../support/tunnel-harness.js';

const HOST = `shop.${PEBBLE_DOMAIN}`;

/** httpsGet sends GET https://HOST/path to the edge with full verification against `ca`. */
function httpsGet(port: number, path: string, ca: string): Promise<{ status: number; body: string; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, servername: HOST, ca, headers: { host: HOST }, path, agent: false }, (res) => {
      const fingerprint = new X509Certificate((res.socket as TLSSocket).getPeerCertificate().raw).fingerprint256;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), fingerprint }));
      res.on('error', reject);
    });
    req.once('error', reject);
    req.end();
  });
}

describe('edge started from a config file with an acme section (pebble)', function () {
  this.timeout(120_000);
  let dir: string;
  let dns: UdpSocket | undefined;
  let pebble: Pebble | undefined;
  let edge: EdgeServer | undefined;
  let session: TunnelSession | undefined;
  const logs: string[] = [];

  before(async function () {
    this.timeout(600_000);
    await installPebble();
  });

  beforeEach(async () => {
    [dns, pebble, edge, session] = [undefined, undefined, undefined, undefined];
    logs.length = 0;
    dir = await mkdtemp(join(tmpdir(), 'tuna-edge-acme-'));
    dns = await startLoopbackDns();
    const httpsPort = await freePort();
    pebble = await startPebble(join(dir, 'pebble'), httpsPort, dns);
    // The config lives in its own folder and names the account key and pebble's CA relative to it.
    await mkdir(join(dir, 'etc'));
    const yaml = [
      'listen:',
      '  tunnel: { host: 127.0.0.1, port: 0 }',
      `  https: { host: 127.0.0.1, port: ${httpsPort} }`,
      'store:',
      `  url: ${JSON.stringify(join(dir, 'edge.db'))}`,
      `  baseDomain: ${PEBBLE_DOMAIN}`,
      '  pollMs: 200',
      'acme:',
      `  directoryUrl: ${pebble.directoryUrl}`,
      '  accountKeyFile: acme-account.pem',
      `  contact: ["mailto:ops@${PEBBLE_DOMAIN}"]`,
      '  caFile: ../pebble/ca.pem',
      '',
    ].join('\n');
    await writeFile(join(dir, 'etc', 'edge.yaml'), yaml);
  });

  afterEach(async () => {
    session?.destroy();
    await edge?.close();
    await pebble?.stop();
    dns?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('orders a certificate when a domain is reserved through the control API and serves HTTPS on that host with it', async () => {
    // First start: the admin key, as `tuna edge init` makes it, in the store the config names.
    const seeding = await openSqliteStore(join(dir, 'edge.db'));
    const { adminKey } = await initEdge(seeding);
    await seeding.close();

    edge = await startEdge(await loadEdgeConfig(join(dir, 'etc', 'edge.yaml')), { log: (line) => logs.push(line) });
    const { tunnel, https } = edge.address();
    // The account key was created next to the config file, readable by its owner only.
    expect((await stat(join(dir, 'etc', 'acme-account.pem'))).mode & 0o777).to.equal(0o600);

    const minted = await reserveAndMint(tunnel.port, adminKey.token, { kind: 'domain', hostname: HOST }, { protocol: 'http' });
    expect(minted.bindingId).to.equal(`binding/host/${HOST}`);
    // No client has connected to HOST yet: the order was placed because of the reservation.
    await waitUntil(() => logs.some((l) => l.startsWith(`certificate for ${HOST} issued`)), 60_000);

    session = await connectAgent({ host: '127.0.0.1', port: tunnel.port, tls: false }, minted.bindingId, minted.token);
    const root = await getText(pebble!.transport, `${pebble!.managementUrl}/roots/0`);
    const intermediate = new X509Certificate(await getText(pebble!.transport, `${pebble!.managementUrl}/intermediates/0`));
    const leaf = new X509Certificate((await handshake(https!.port, HOST, root)).raw);
    expect(leaf.subjectAltName).to.equal(`DNS:${HOST}`);
    expect(leaf.checkIssued(intermediate)).to.equal(true);
    expect(leaf.verify(intermediate.publicKey)).to.equal(true);

    const answer = await httpsGet(https!.port, '/over-acme', root);
    expect(answer.fingerprint).to.equal(leaf.fingerprint256);
    expect(answer.status).to.equal(200);
    expect((JSON.parse(answer.body) as { headers: Record<string, string> }).headers).to.include({ ':path': '/over-acme', ':authority': HOST });
    expect(logs.filter((l) => l.startsWith(`certificate for ${HOST} issued`))).to.have.length(1);
  });
});
