import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { createSocket } from 'node:dgram';
import type { Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createCertificateManager, createHttpsTransport } from '../../src/edge/acme/index.js';
import type { AcmeError, CertificateManager } from '../../src/edge/acme/index.js';
import type { AcmeTransport } from '../../src/edge/acme/index.js';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';

const SCRIPT = fileURLToPath(new URL('../../hack/pebble.sh', import.meta.url));
const RESERVED = 'app.edge.test';
const UNRESERVED = 'stranger.edge.test';
// Reserved, but our loopback DNS answers NXDOMAIN for it: pebble cannot validate.
const UNRESOLVABLE = 'app.nowhere.test';

/**
 * startLoopbackDns answers A queries under edge.test with 127.0.0.1 and AAAA with no records
 * (RFC 1035 §4.1): pebble validates a challenge by connecting to the address of the name.
 */
async function startLoopbackDns(): Promise<UdpSocket> {
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    let offset = 12;
    const labels: string[] = [];
    while (offset < query.length && query[offset] !== 0) {
      labels.push(query.subarray(offset + 1, offset + 1 + query[offset]!).toString('ascii'));
      offset += query[offset]! + 1;
    }
    const qtype = query.readUInt16BE(offset + 1);
    const questionEnd = offset + 5;
    const isOurs = labels.join('.').toLowerCase().endsWith('edge.test');
    const answer = isOurs && qtype === 1 ? [Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1])] : [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(isOurs ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer.length, 6);
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...answer]), peer.port, peer.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return socket;
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// Polls pebble's directory until it answers (bounded: 100 tries, 100 ms apart).
async function waitForPebble(transport: AcmeTransport, url: string, pebble: ChildProcess): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (pebble.exitCode !== null) throw new Error(`pebble exited with ${pebble.exitCode}`);
    const ok = await transport({ method: 'GET', url }).then((r) => r.status === 200, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('pebble did not start');
}

async function getText(transport: AcmeTransport, url: string): Promise<string> {
  const res = await transport({ method: 'GET', url });
  expect(res.status, url).to.equal(200);
  return res.body.toString('utf8');
}

/** handshake connects with SNI and full verification against `ca`, resolving to the peer chain. */
function handshake(port: number, servername: string, ca: string): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, ca, ALPNProtocols: ['http/1.1'] }, () => {
      const peer = socket.getPeerCertificate(true);
      socket.end();
      resolve(peer);
    });
    socket.once('error', reject);
  });
}

describe('ACME issuance against pebble (TLS-ALPN-01)', function () {
  this.timeout(120_000);
  let dir: string;
  let dns: UdpSocket;
  let pebble: ChildProcess;
  let store: Store | undefined;
  let manager: CertificateManager | undefined;
  let edge: EdgeServer | undefined;
  let transport: AcmeTransport;
  let managementUrl: string;
  const logs: string[] = [];

  before(async function () {
    this.timeout(600_000);
    await promisify(execFile)(SCRIPT, ['install'], { timeout: 590_000 });
  });

  beforeEach(async () => {
    [store, manager, edge] = [undefined, undefined, undefined];
    logs.length = 0;
    dir = await mkdtemp(join(tmpdir(), 'tuna-pebble-'));
    dns = await startLoopbackDns();
    // Pebble must know the edge's HTTPS port before it starts, and the edge's ACME client must
    // trust pebble's generated CA: so pick the edge's port first, start pebble, then the edge.
    const [acmePort, managementPort, unusedHttpPort, httpsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    managementUrl = `https://127.0.0.1:${managementPort}`;
    const dnsAddress = `127.0.0.1:${(dns.address() as AddressInfo).port}`;
    const args = ['start', dir, String(acmePort), String(managementPort), String(httpsPort), String(unusedHttpPort), dnsAddress];
    pebble = spawn(SCRIPT, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    pebble.stdout!.on('data', (chunk: Buffer) => output.push(chunk));
    pebble.stderr!.on('data', (chunk: Buffer) => output.push(chunk));
    let ca: string | undefined;
    for (let i = 0; i < 100 && ca === undefined; i++) {
      // ca.pem is written before cert.pem: once cert.pem exists, ca.pem is complete.
      ca = await readFile(join(dir, 'cert.pem'), 'utf8').then(() => readFile(join(dir, 'ca.pem'), 'utf8')).catch(() => undefined);
      if (ca === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (ca === undefined) throw new Error(`pebble.sh wrote no CA: ${Buffer.concat(output).toString('utf8')}`);
    transport = createHttpsTransport({ ca });
    const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
    await waitForPebble(transport, directoryUrl, pebble).catch((err: Error) => {
      throw new Error(`${err.message}: ${Buffer.concat(output).toString('utf8')}`);
    });

    store = await openSqliteStore(':memory:');
    const account = await store.createAccount({ name: 'acme-test' }, 'test');
    for (const hostname of [RESERVED, UNRESOLVABLE]) {
      await store.createReservation({ accountId: account.id, spec: { kind: 'domain', hostname, domainType: 'subdomain' } }, 'test');
    }
    manager = await createCertificateManager({
      store,
      acme: { directoryUrl, accountKeyFile: join(dir, 'account.pem'), caPem: ca },
      log: (line) => logs.push(line),
    });
    edge = await startEdge(
      decodeEdgeConfig({
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, https: { host: '127.0.0.1', port: httpsPort } },
        bindings: [{ id: 'binding/host/app', kind: 'host', hostnames: [RESERVED], tls: 'edge' }],
      }),
      { certificateProvider: manager },
    );
  });

  afterEach(async () => {
    manager?.close();
    edge?.destroy();
    if (pebble.exitCode === null) {
      pebble.kill('SIGTERM');
      await once(pebble, 'exit');
    }
    dns.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('issues a certificate for a reserved host on its first HTTPS request and serves it, chained to pebble\'s root', async () => {
    const root = await getText(transport, `${managementUrl}/roots/0`);
    const intermediate = new X509Certificate(await getText(transport, `${managementUrl}/intermediates/0`));
    const port = edge!.address().https!.port;

    // Full verification against pebble's root only: the chain and the name must both check out.
    const peer = await handshake(port, RESERVED, root);
    const leaf = new X509Certificate(peer.raw);
    expect(leaf.subjectAltName).to.equal(`DNS:${RESERVED}`);
    expect(leaf.checkIssued(intermediate)).to.equal(true);
    expect(leaf.verify(intermediate.publicKey)).to.equal(true);

    const stored = await store!.getCertificate(RESERVED);
    expect(stored?.notAfter).to.equal(Date.parse(leaf.validTo));
    expect(new X509Certificate(stored!.chainPem).fingerprint256).to.equal(leaf.fingerprint256);

    // An HTTPS request over the same listener answers (no tunnel is connected: an edge error page).
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port, servername: RESERVED, ca: root, headers: { host: RESERVED }, path: '/' }, (res) => {
        expect(new X509Certificate((res.socket as TLSSocket).getPeerCertificate().raw).fingerprint256).to.equal(leaf.fingerprint256);
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.once('error', reject);
      req.end();
    });
    expect(status).to.be.within(400, 599);
  });

  it('starts no order for a hostname nobody reserved, so its handshake fails', async () => {
    const root = await getText(transport, `${managementUrl}/roots/0`);
    const port = edge!.address().https!.port;
    const failure = await handshake(port, UNRESERVED, root).then(() => undefined, (err: Error) => err);
    expect(failure).to.be.instanceOf(Error);
    expect(await store!.getCertificate(UNRESERVED)).to.equal(undefined);
    expect(logs.filter((l) => l.includes(UNRESERVED))).to.deep.equal([]);
  });

  it('fails an order whose name does not resolve with TUNA_ACME_CHALLENGE_FAILED and pebble\'s problem type', async () => {
    const err = (await manager!.ensure(UNRESOLVABLE).catch((e: unknown) => e)) as AcmeError;
    expect(err.code).to.equal('TUNA_ACME_CHALLENGE_FAILED');
    expect(err.problem?.type).to.match(/^urn:ietf:params:acme:error:/);
    expect(await store!.getCertificate(UNRESOLVABLE)).to.equal(undefined);
    expect(logs.some((l) => l.includes(UNRESOLVABLE) && l.includes('TUNA_ACME_CHALLENGE_FAILED'))).to.equal(true);
  });
});
