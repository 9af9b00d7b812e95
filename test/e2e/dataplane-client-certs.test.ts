import { expect } from 'chai';
import { X509Certificate, createHash } from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import type { Socket } from 'node:net';
import tls from 'node:tls';
import { DataPlane, StaticCertificateSource, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { ClientValidation, Listener } from '../../src/model/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { makeClientCertificate, makeTestCa } from '../support/client-certs.js';
import type { TestCa, TestClientCertificate } from '../support/client-certs.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import type { TestCertificate } from '../support/tunnel-certs.js';

const BINDING = 'binding/host/mtls';
const XFCC = 'x-forwarded-client-cert';

/** ClientKey is a client certificate to present, or none. */
type ClientKey = TestClientCertificate | undefined;

describe('data plane: client certificate validation on terminated HTTPS (Gateway spec.tls.frontend)', () => {
  let server: TestCertificate;
  let ca: TestCa;
  let alice: TestClientCertificate;
  let stranger: TestClientCertificate;
  let impostor: TestClientCertificate;
  let rsaCa: TestCa;
  let rsaAlice: TestClientCertificate;
  let rsaImpostor: TestClientCertificate;
  let backend: TestBackend;
  let plane: DataPlane;
  let strictPort: TunnelHarness;
  let lenientPort: TunnelHarness;

  before(() => {
    server = selfSignedCertificate(['strict.mtls.test', 'open.mtls.test', 'lenient.mtls.test', 'rsa-lenient.mtls.test', 'rsa-strict.mtls.test']);
    ca = makeTestCa('tuna test client CA');
    alice = makeClientCertificate(ca, '/O=tuna test/CN=alice');
    stranger = makeClientCertificate(makeTestCa('another CA'), '/CN=mallory');
    // signed by a CA with the trusted CA's very name but another key: found by name, refused by its
    // (ECDSA) signature. The same with RSA keys drops an AllowInsecureFallback connection (docs/dataplane.md).
    impostor = makeClientCertificate(makeTestCa('tuna test client CA'), '/O=tuna test/CN=alice');
    // The conformance suite's case: RSA, a same-name CA, and no key identifiers to tell the CAs apart,
    // so OpenSSL tries the trusted CA's key on the signature and fails.
    rsaCa = makeTestCa('tuna RSA client CA', { rsa: true });
    rsaAlice = makeClientCertificate(rsaCa, '/O=tuna test/CN=alice', { rsa: true, withoutKeyIdentifiers: true });
    rsaImpostor = makeClientCertificate(makeTestCa('tuna RSA client CA', { rsa: true }), '/O=tuna test/CN=alice', { rsa: true, withoutKeyIdentifiers: true });
  });

  beforeEach(async () => {
    backend = await startHttpBackend('mtls-backend');
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'svc', 'http', [{ address: '127.0.0.1', port: backend.port }]);
    const certificates = new StaticCertificateSource();
    certificates.set({ namespace: 'default', name: 'server' }, server);
    plane = new DataPlane({ endpoints, certificates });
    const valid: ClientValidation = { caPem: ca.cert, mode: 'AllowValidOnly' };
    const fallback: ClientValidation = { caPem: ca.cert, mode: 'AllowInsecureFallback' };
    const rsaFallback: ClientValidation = { caPem: rsaCa.cert, mode: 'AllowInsecureFallback' };
    const rsaValid: ClientValidation = { caPem: rsaCa.cert, mode: 'AllowValidOnly' };
    const listeners = [
      listener('strict', 443, valid),
      listener('open', 443, undefined),
      listener('lenient', 8443, fallback),
      listener('rsa-lenient', 8443, rsaFallback),
      listener('rsa-strict', 443, rsaValid),
    ];
    const graph = hostGraph([], { listeners });
    for (const l of listeners)
      graph.virtualHosts.push({ id: `${l.id}/vhost/${l.hostname}`, listenerId: l.id, hostname: l.hostname ?? '', routes: [httpRoute(l.name, [serviceBackend('svc')])] });
    graph.bindings.push({ id: BINDING, kind: 'host', hostnames: listeners.map((l) => l.hostname ?? ''), source: { group: '', kind: 'T', name: 'mtls' } });
    plane.update(graph);
    strictPort = await startTunnelHarness(plane, { bindingId: BINDING, publicPort: 443, publicProtocol: 'tls' });
    lenientPort = await startTunnelHarness(plane, { bindingId: BINDING, publicPort: 8443, publicProtocol: 'tls' });
  });

  afterEach(async () => {
    await strictPort.close();
    await lenientPort.close();
    plane.close();
    await backend.close();
  });

  function listener(name: string, port: number, clientValidation: ClientValidation | undefined): Listener {
    return {
      id: `${BINDING}/listener/${name}`,
      bindingId: BINDING,
      name,
      port,
      protocol: 'https',
      hostname: `${name}.mtls.test`,
      tls: { mode: 'terminate-in-cluster', certificates: [{ namespace: 'default', name: 'server' }], ...(clientValidation ? { clientValidation } : {}) },
      source: { group: '', kind: 'T', name },
    };
  }

  /**
   * openTls opens a CONNECT stream as the edge does after reading the SNI (`routed`) and runs a TLS
   * client over it that sends `servername` and presents `client`.
   */
  async function openTls(harness: TunnelHarness, routed: string, servername: string, client: ClientKey, alpn = 'http/1.1', maxVersion?: tls.SecureVersion): Promise<tls.TLSSocket> {
    const stream = harness.client.request({ ':method': 'CONNECT', ':authority': `${routed}:443` }, { endStream: false });
    const status = await new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))));
    expect(status).to.equal(200);
    const socket = tls.connect({ socket: stream as unknown as Socket, servername, ca: server.cert, ALPNProtocols: [alpn], ...(client ?? {}), ...(maxVersion ? { maxVersion } : {}) });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', () => resolve());
      socket.once('error', reject);
    });
    return socket;
  }

  /** get sends one HTTP/1.1 request on a TLS socket; it rejects when the server closes instead of answering (bounded: 5 s). */
  function get(socket: tls.TLSSocket, host: string, headers: Record<string, string> = {}): Promise<EchoReply> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer within 5 s')), 5000);
      const req = http.request({ createConnection: () => socket, path: '/who', headers: { host, ...headers } }, (res) => {
        let data = '';
        res.on('data', (c: Buffer) => (data += c.toString()));
        res.on('end', () => {
          clearTimeout(timer);
          if (res.statusCode !== 200) return reject(new Error(`status ${String(res.statusCode)}`));
          resolve(JSON.parse(data) as EchoReply);
        });
      });
      req.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end();
    });
  }

  /** refusal runs `attempt` and returns the error it fails with (a test failure if it succeeds). */
  async function refusal(attempt: () => Promise<unknown>): Promise<Error> {
    try {
      await attempt();
    } catch (err) {
      return err as Error;
    }
    throw new Error('the request was served');
  }

  function expectedIdentity(cert: TestClientCertificate): string {
    const x509 = new X509Certificate(cert.cert);
    return `Hash=${createHash('sha256').update(x509.raw).digest('hex')};Subject="CN=alice,O=tuna test"`;
  }

  it('serves a client whose certificate chains to the CA and tells the backend its identity', async () => {
    const socket = await openTls(strictPort, 'strict.mtls.test', 'strict.mtls.test', alice);
    const seen = await get(socket, 'strict.mtls.test');
    expect(seen.headers[XFCC]).to.equal(expectedIdentity(alice));
    socket.destroy();
  });

  it('replaces an x-forwarded-client-cert header the client sent with the verified identity', async () => {
    const socket = await openTls(strictPort, 'strict.mtls.test', 'strict.mtls.test', alice);
    const seen = await get(socket, 'strict.mtls.test', { [XFCC]: 'Hash=00;Subject="CN=admin"' });
    expect(seen.headers[XFCC]).to.equal(expectedIdentity(alice));
    socket.destroy();
  });

  it('tells the backend the identity over HTTP/2 negotiated by ALPN', async () => {
    const socket = await openTls(strictPort, 'strict.mtls.test', 'strict.mtls.test', alice, 'h2');
    const session = http2.connect('https://strict.mtls.test', { createConnection: () => socket });
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = session.request({ ':path': '/who', [XFCC]: 'Subject="CN=forged"' });
        let data = '';
        req.on('data', (c: Buffer) => (data += c.toString()));
        req.on('end', () => resolve(data));
        req.on('error', reject);
      });
      expect((JSON.parse(body) as EchoReply).headers[XFCC]).to.equal(expectedIdentity(alice));
    } finally {
      session.destroy();
    }
  });

  it('refuses a client without a certificate in the handshake on an AllowValidOnly listener', async () => {
    const err = await refusal(async () => get(await openTls(strictPort, 'strict.mtls.test', 'strict.mtls.test', undefined), 'strict.mtls.test'));
    expect(err.message).to.match(/certificate required/);
    expect(backend.requests).to.have.length(0);
  });

  it('closes the connection of a client whose certificate another CA signed before any request reaches the backend', async () => {
    await refusal(async () => get(await openTls(strictPort, 'strict.mtls.test', 'strict.mtls.test', stranger), 'strict.mtls.test'));
    expect(backend.requests).to.have.length(0);
  });

  it('serves a client without a certificate on an AllowInsecureFallback listener, with no identity and the forged header removed', async () => {
    const socket = await openTls(lenientPort, 'lenient.mtls.test', 'lenient.mtls.test', undefined);
    const seen = await get(socket, 'lenient.mtls.test', { [XFCC]: 'Hash=00;Subject="CN=admin"' });
    expect(seen.headers).to.not.have.property(XFCC);
    socket.destroy();
  });

  it('serves a client with an untrusted certificate on an AllowInsecureFallback listener without an identity', async () => {
    const socket = await openTls(lenientPort, 'lenient.mtls.test', 'lenient.mtls.test', stranger);
    const seen = await get(socket, 'lenient.mtls.test');
    expect(seen.headers).to.not.have.property(XFCC);
    socket.destroy();
  });

  it('serves a client whose certificate a CA of the trusted name but another ECDSA key signed, on an AllowInsecureFallback listener, without an identity', async () => {
    const socket = await openTls(lenientPort, 'lenient.mtls.test', 'lenient.mtls.test', impostor);
    const seen = await get(socket, 'lenient.mtls.test');
    expect(seen.headers).to.not.have.property(XFCC);
    socket.destroy();
  });

  it('refuses a client whose certificate a CA of the trusted name but another ECDSA key signed, on an AllowValidOnly listener', async () => {
    await refusal(async () => get(await openTls(strictPort, 'strict.mtls.test', 'strict.mtls.test', impostor), 'strict.mtls.test'));
    expect(backend.requests).to.have.length(0);
  });

  it('serves a client whose RSA certificate a same-name CA with another key signed, on an AllowInsecureFallback listener, without an identity', async () => {
    // Over TLS 1.2 a Node client shows what the suite's Go client shows over 1.3 (the request apart
    // from the handshake, as through an edge): the read after the handshake is where the errors an
    // RSA check left in OpenSSL's queue would surface and drop the connection.
    const socket = await openTls(lenientPort, 'rsa-lenient.mtls.test', 'rsa-lenient.mtls.test', rsaImpostor, 'http/1.1', 'TLSv1.2');
    await new Promise((r) => setTimeout(r, 100));
    const seen = await get(socket, 'rsa-lenient.mtls.test');
    expect(seen.headers).to.not.have.property(XFCC);
    socket.destroy();
  });

  it('tells the backend the identity of a trusted RSA certificate on an AllowInsecureFallback listener', async () => {
    const socket = await openTls(lenientPort, 'rsa-lenient.mtls.test', 'rsa-lenient.mtls.test', rsaAlice);
    const seen = await get(socket, 'rsa-lenient.mtls.test');
    expect(seen.headers[XFCC]).to.equal(expectedIdentity(rsaAlice));
    socket.destroy();
  });

  it('refuses a client whose RSA certificate a same-name CA with another key signed, on an AllowValidOnly listener', async () => {
    await refusal(async () => get(await openTls(strictPort, 'rsa-strict.mtls.test', 'rsa-strict.mtls.test', rsaImpostor), 'rsa-strict.mtls.test'));
    expect(backend.requests).to.have.length(0);
  });

  it('tells the backend the identity of a trusted certificate on an AllowInsecureFallback listener', async () => {
    const socket = await openTls(lenientPort, 'lenient.mtls.test', 'lenient.mtls.test', alice);
    const seen = await get(socket, 'lenient.mtls.test');
    expect(seen.headers[XFCC]).to.equal(expectedIdentity(alice));
    socket.destroy();
  });

  it('removes an x-forwarded-client-cert header a client sends to a listener that asks for no certificate', async () => {
    const socket = await openTls(strictPort, 'open.mtls.test', 'open.mtls.test', undefined);
    const seen = await get(socket, 'open.mtls.test', { [XFCC]: 'Hash=00;Subject="CN=admin"' });
    expect(seen.headers).to.not.have.property(XFCC);
    socket.destroy();
  });

  it('does not serve a ClientHello whose SNI selects a validating listener on a connection routed for one that does not', async () => {
    await refusal(async () => get(await openTls(strictPort, 'open.mtls.test', 'strict.mtls.test', undefined), 'strict.mtls.test'));
    expect(backend.requests).to.have.length(0);
  });

  it('does not serve a ClientHello whose SNI selects a listener without validation on a connection routed for a validating one', async () => {
    await refusal(async () => get(await openTls(strictPort, 'strict.mtls.test', 'open.mtls.test', alice), 'open.mtls.test'));
    expect(backend.requests).to.have.length(0);
  });
});
