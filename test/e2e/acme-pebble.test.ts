import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import type { Socket as UdpSocket } from 'node:dgram';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { createCertificateManager } from '../../src/edge/acme/index.js';
import type { AcmeError, CertificateManager } from '../../src/edge/acme/index.js';
import type { AcmeTransport } from '../../src/edge/acme/index.js';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { freePort, getText, handshake, installPebble, startLoopbackDns, startPebble } from '../support/pebble.js';
import type { Pebble } from '../support/pebble.js';

const RESERVED = 'app.edge.test';
const UNRESERVED = 'stranger.edge.test';
// Reserved, but our loopback DNS answers NXDOMAIN for it: pebble cannot validate.
const UNRESOLVABLE = 'app.nowhere.test';

describe('ACME issuance against pebble (TLS-ALPN-01)', function () {
  this.timeout(120_000);
  let dir: string;
  let dns: UdpSocket;
  let pebble: Pebble | undefined;
  let store: Store | undefined;
  let manager: CertificateManager | undefined;
  let edge: EdgeServer | undefined;
  let transport: AcmeTransport;
  let managementUrl: string;
  const logs: string[] = [];

  before(async function () {
    this.timeout(600_000);
    await installPebble();
  });

  beforeEach(async () => {
    [store, manager, edge, pebble] = [undefined, undefined, undefined, undefined];
    logs.length = 0;
    dir = await mkdtemp(join(tmpdir(), 'tuna-pebble-'));
    dns = await startLoopbackDns();
    // Pebble must know the edge's HTTPS port before it starts, and the edge's ACME client must
    // trust pebble's generated CA: so pick the edge's port first, start pebble, then the edge.
    const httpsPort = await freePort();
    pebble = await startPebble(dir, httpsPort, dns);
    ({ transport, managementUrl } = pebble);
    const { ca, directoryUrl } = pebble;

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
    await pebble?.stop();
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
