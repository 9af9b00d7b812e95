import { expect } from 'chai';
import { createHash, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { connect as tlsConnect } from 'node:tls';
import { CertificateManager, TlsAlpnChallenges, createSelfSignedCertificate, derToPem } from '../../src/edge/acme/index.js';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';

const HOST = 'app.example.test';
const KEY_AUTHORIZATION = 'tok.thumb';

function connect(port: number, alpn: string[]): Promise<{ raw: Buffer; alpn: string | false | null }> {
  return new Promise((resolve, reject) => {
    // No verification on purpose: the challenge certificate is self-signed (RFC 8737 §3); we compare bytes.
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: HOST, ALPNProtocols: alpn, rejectUnauthorized: false }, () => {
      resolve({ raw: socket.getPeerCertificate().raw, alpn: socket.alpnProtocol });
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

describe('edge HTTPS listener and TLS-ALPN-01', () => {
  let edge: EdgeServer;
  let store: Store;
  let manager: CertificateManager;
  let regular: X509Certificate;

  beforeEach(async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const der = createSelfSignedCertificate({ hostnames: [HOST], key: privateKey, notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000) });
    regular = new X509Certificate(der);
    const challenges = new TlsAlpnChallenges();
    challenges.set(HOST, KEY_AUTHORIZATION, new Date());
    store = await openSqliteStore(':memory:');
    manager = new CertificateManager({
      store,
      challenges,
      staticCertificates: [{ hostnames: [HOST], cert: derToPem(der, 'CERTIFICATE'), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }],
    });
    edge = await startEdge(decodeEdgeConfig({ listen: { tunnel: { host: '127.0.0.1', port: 0 }, https: { host: '127.0.0.1', port: 0 } } }), {
      certificateProvider: manager,
    });
  });

  afterEach(async () => {
    manager.close();
    edge.destroy();
    await store.close();
  });

  it('answers a validator offering acme-tls/1 with the challenge certificate for its SNI name', async () => {
    const got = await connect(edge.address().https!.port, ['acme-tls/1']);
    expect(got.alpn).to.equal('acme-tls/1');
    const digest = createHash('sha256').update(KEY_AUTHORIZATION).digest();
    expect(got.raw.includes(digest)).to.equal(true);
    expect(new X509Certificate(got.raw).subjectAltName).to.equal(`DNS:${HOST}`);
  });

  it('keeps serving the regular certificate to h2 and HTTP/1.1 clients while a challenge is in flight', async () => {
    const got = await connect(edge.address().https!.port, ['h2', 'http/1.1']);
    expect(got.alpn).to.equal('h2');
    expect(new X509Certificate(got.raw).fingerprint256).to.equal(regular.fingerprint256);
  });
});
