import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { derInteger, derOid, derTag, derUtcTime } from '../../src/edge/acme/der.js';
import { createCsr, createTlsAlpnCertificate, derToPem } from '../../src/edge/acme/index.js';
import { parseAlpnOffer } from '../../src/edge/fronts/index.js';

describe('acme DER encoding', () => {
  const cases: [string, Buffer, string][] = [
    ['the RSA OID', derOid('1.2.840.113549.1.1.1'), '06092a864886f70d010101'],
    ['the acmeIdentifier OID (RFC 8737 §6.1)', derOid('1.3.6.1.5.5.7.1.31'), '06082b0601050507011f'],
    ['integer 0', derInteger(0), '020100'],
    ['integer 128 with a leading zero (sign bit)', derInteger(128), '02020080'],
    ['integer bytes with redundant zeros trimmed', derInteger(Buffer.from([0, 0, 0x7f])), '02017f'],
    ['a 200-byte body with a long-form length', derTag(0x04, Buffer.alloc(200)).subarray(0, 3), '0481c8'],
    ['UTCTime (RFC 5280 §4.1.2.5.1)', derUtcTime(new Date('2026-03-04T05:06:07Z')), '170d3236303330343035303630375a'],
  ];
  for (const [name, got, hex] of cases) {
    it(`encodes ${name}`, () => expect(got.toString('hex')).to.equal(hex));
  }
});

describe('acme CSR and challenge certificate', () => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

  it('builds a CSR whose signature and SAN request openssl accepts', function () {
    const dir = mkdtempSync(join(tmpdir(), 'tuna-csr-'));
    try {
      const file = join(dir, 'req.pem');
      writeFileSync(file, derToPem(createCsr(['app.example.test', 'www.example.test'], privateKey), 'CERTIFICATE REQUEST'));
      const text = execFileSync('openssl', ['req', '-in', file, '-noout', '-verify', '-text'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      expect(text).to.match(/Subject: CN\s?=\s?app\.example\.test/);
      expect(text).to.include('DNS:app.example.test, DNS:www.example.test');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('builds a self-signed TLS-ALPN-01 certificate with the SAN and the critical acmeIdentifier digest', () => {
    const keyAuthorization = 'token.thumbprint';
    const der = createTlsAlpnCertificate('app.example.test', keyAuthorization, privateKey, new Date('2026-01-01T00:00:00Z'));
    const cert = new X509Certificate(der);
    expect(cert.subjectAltName).to.equal('DNS:app.example.test');
    expect(cert.verify(cert.publicKey)).to.equal(true);
    expect(cert.checkPrivateKey(privateKey)).to.equal(true);
    // Extension: OID, BOOLEAN TRUE, OCTET STRING { OCTET STRING (32) digest } (RFC 8737 §3).
    const digest = createHash('sha256').update(keyAuthorization).digest();
    const expected = Buffer.concat([Buffer.from('06082b0601050507011f0101ff04220420', 'hex'), digest]);
    expect(der.includes(expected)).to.equal(true);
  });
});

describe('acme ALPN offer', () => {
  let server: Server;
  afterEach(() => server.close());

  // Captures the first bytes a real Node TLS client sends.
  async function captureHello(alpn: string[] | undefined): Promise<Buffer> {
    server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = tlsConnect({ host: '127.0.0.1', port, servername: 'app.example.test', ...(alpn ? { ALPNProtocols: alpn } : {}) });
    client.on('error', () => {});
    const [socket] = await accepted;
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    socket.destroy();
    client.destroy();
    return chunk;
  }

  it('reads acme-tls/1 from a real ClientHello', async () => {
    expect(parseAlpnOffer(await captureHello(['acme-tls/1']))).to.deep.equal(['acme-tls/1']);
  });

  it('reads every protocol in order', async () => {
    expect(parseAlpnOffer(await captureHello(['h2', 'http/1.1']))).to.deep.equal(['h2', 'http/1.1']);
  });

  it('returns an empty offer for a ClientHello without ALPN and undefined for a cut one', async () => {
    const hello = await captureHello(undefined);
    expect(parseAlpnOffer(hello)).to.deep.equal([]);
    expect(parseAlpnOffer(hello.subarray(0, 40))).to.equal(undefined);
    expect(parseAlpnOffer(Buffer.from('GET / HTTP/1.1\r\n'))).to.equal(undefined);
  });
});
