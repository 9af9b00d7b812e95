/**
 * The data plane speaks TLS to a backend that has a BackendTLSPolicy (the graph's
 * ServiceBackend.tls): it verifies the certificate against the policy's CA, sends the policy's
 * hostname as SNI, checks the hostname or one of the subjectAltNames, and presents the Gateway's
 * client certificate. Real HTTPS and HTTP/2-over-TLS servers on 127.0.0.1 port 0, with a CA made
 * by the test.
 */
import { expect } from 'chai';
import http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { DataPlane, StaticCertificateSource, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { BackendTls, HttpRoute, ServiceBackend } from '../../src/model/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { makeTestPki } from '../support/backend-tls.js';
import { maskedTextFrame, readFrames } from '../support/backend-ws.js';
import { WebSocketServer } from 'ws';
import type { TestPki } from '../support/backend-tls.js';

/** Seen is what the TLS backend saw of one request. */
interface Seen {
  servername: string | false | null;
  clientCn: string | string[] | undefined;
}

describe('data plane: TLS to backends (BackendTLSPolicy)', () => {
  const cleanups: (() => unknown)[] = [];
  let pki: TestPki;
  let otherPki: TestPki;
  let endpoints: StaticEndpointResolver;
  let certificates: StaticCertificateSource;
  let plane: DataPlane;
  let seen: Seen[];
  let connections: number;

  before(() => {
    pki = makeTestPki('backend CA');
    otherPki = makeTestPki('unrelated CA');
  });

  after(() => {
    pki.close();
    otherPki.close();
  });

  beforeEach(() => {
    endpoints = new StaticEndpointResolver();
    certificates = new StaticCertificateSource();
    plane = new DataPlane({ endpoints, certificates });
    seen = [];
    connections = 0;
    cleanups.push(() => plane.close());
  });

  afterEach(async () => {
    for (const c of cleanups.reverse()) await c();
    cleanups.length = 0;
  });

  /** startHttps starts an HTTPS/1.1 backend with a certificate of the test CA, asking for (not requiring) a client certificate. */
  async function startHttps(sans: { dns?: string[]; uris?: string[] }): Promise<number> {
    const leaf = pki.issue('backend', sans);
    const server = https.createServer({ ...leaf, requestCert: true, rejectUnauthorized: false, ca: pki.ca }, (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      seen.push({ servername: socket.servername, clientCn: peer.subject?.CN });
      res.end(`tls ok ${req.url ?? ''}`);
    });
    server.on('secureConnection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    cleanups.push(() => server.closeAllConnections());
    return (server.address() as AddressInfo).port;
  }

  function tlsOf(overrides: Partial<BackendTls> = {}): BackendTls {
    return { serverName: 'backend.internal', ca: { kind: 'pem', pem: pki.ca }, ...overrides };
  }

  /** serve publishes routes `/<name>` to backends of one Service port each and returns the harness. */
  async function serve(port: number, backends: Record<string, Partial<ServiceBackend>>): Promise<TunnelHarness> {
    const routes: HttpRoute[] = Object.entries(backends).map(([name, b]) => {
      endpoints.set('default', name, 'https', [{ address: '127.0.0.1', port }]);
      return httpRoute(name, [serviceBackend(name, { portName: 'https', ...b })], { match: { path: { type: 'Prefix', value: `/${name}` } } });
    });
    plane.update(hostGraph([{ hostname: 'app.test', routes }]));
    const h = await startTunnelHarness(plane);
    cleanups.push(() => h.close());
    return h;
  }

  it('answers 200 through a backend whose certificate chains to the policy CA, sending the hostname as SNI', async () => {
    const port = await startHttps({ dns: ['backend.internal'] });
    const h = await serve(port, { web: { tls: tlsOf() } });
    const res = await h.request({ ':path': '/web/a' });
    expect([res.status, res.body]).to.deep.equal([200, 'tls ok /web/a']);
    expect(seen.map((s) => s.servername)).to.deep.equal(['backend.internal']);
  });

  it('answers 502 naming the verification failure for a CA that did not sign the backend, and keeps serving other routes', async () => {
    const port = await startHttps({ dns: ['backend.internal'] });
    const h = await serve(port, { wrong: { tls: tlsOf({ ca: { kind: 'pem', pem: otherPki.ca } }) }, right: { tls: tlsOf() } });
    const bad = await h.request({ ':path': '/wrong' });
    expect(bad.status).to.equal(502);
    // the backend sends its CA along (it asks for client certificates of that CA): OpenSSL names the untrusted root
    expect(bad.body).to.match(/^backend 127\.0\.0\.1:\d+ failed: (UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN)\n$/);
    expect(seen).to.have.length(0);
    expect((await h.request({ ':path': '/right' })).status).to.equal(200);
  });

  it('answers 502 when the certificate is not valid for the hostname', async () => {
    const port = await startHttps({ dns: ['other.internal'] });
    const h = await serve(port, { web: { tls: tlsOf() } });
    const res = await h.request({ ':path': '/web' });
    expect(res.status).to.equal(502);
    expect(res.body).to.include('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('checks subjectAltNames instead of the hostname: a Hostname or URI SAN on the certificate passes, none of them gives 502', async () => {
    const port = await startHttps({ dns: ['abc.example.com'], uris: ['spiffe://abc.example.com/test-identity'] });
    const h = await serve(port, {
      dns: { tls: tlsOf({ serverName: 'sni.example.com', subjectAltNames: [{ type: 'Hostname', value: 'abc.example.com' }] }) },
      uri: { tls: tlsOf({ serverName: 'sni.example.com', subjectAltNames: [{ type: 'URI', value: 'spiffe://abc.example.com/test-identity' }] }) },
      wildcard: { tls: tlsOf({ subjectAltNames: [{ type: 'Hostname', value: 'def.example.com' }, { type: 'URI', value: 'spiffe://def.example.com/test-identity' }] }) },
    });
    expect((await h.request({ ':path': '/dns' })).status).to.equal(200);
    expect((await h.request({ ':path': '/uri' })).status).to.equal(200);
    const miss = await h.request({ ':path': '/wildcard' });
    expect(miss.status).to.equal(502);
    expect(miss.body).to.include('TUNA_BACKEND_SAN_MISMATCH');
    // the hostname is still the SNI, though not checked
    expect(seen.map((s) => s.servername)).to.deep.equal(['sni.example.com', 'sni.example.com']);
  });

  it('presents the Gateway client certificate when the backend names one, and none otherwise', async () => {
    const port = await startHttps({ dns: ['backend.internal'] });
    certificates.set({ namespace: 'infra', name: 'client' }, pki.issue('gateway client', {}));
    const h = await serve(port, { mtls: { tls: tlsOf({ clientCertificate: { namespace: 'infra', name: 'client' } }) }, plain: { tls: tlsOf() } });
    expect((await h.request({ ':path': '/mtls' })).status).to.equal(200);
    expect((await h.request({ ':path': '/plain' })).status).to.equal(200);
    expect(seen.map((s) => s.clientCn)).to.deep.equal(['gateway client', undefined]);
  });

  it('pools connections per TLS settings: two backends on one endpoint with different SNI never share one', async () => {
    const port = await startHttps({ dns: ['a.internal', 'b.internal'] });
    const h = await serve(port, { a: { tls: tlsOf({ serverName: 'a.internal' }) }, b: { tls: tlsOf({ serverName: 'b.internal' }) } });
    for (const p of ['/a', '/b', '/a', '/b']) expect((await h.request({ ':path': p })).status).to.equal(200);
    expect(seen.map((s) => s.servername)).to.deep.equal(['a.internal', 'b.internal', 'a.internal', 'b.internal']);
    expect(connections).to.equal(2);
  });

  it('verifies an HTTP/2 backend over TLS the same way', async () => {
    const leaf = pki.issue('backend', { dns: ['backend.internal'] });
    const server = http2.createSecureServer(leaf);
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.end(`h2 sni=${String((stream.session?.socket as TLSSocket | undefined)?.servername)}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    const h = await serve((server.address() as AddressInfo).port, { good: { protocol: 'h2', tls: tlsOf() }, bad: { protocol: 'h2', tls: tlsOf({ ca: { kind: 'pem', pem: otherPki.ca } }) } });
    expect(await h.request({ ':path': '/good' }).then((r) => [r.status, r.body])).to.deep.equal([200, 'h2 sni=backend.internal']);
    expect((await h.request({ ':path': '/bad' })).status).to.equal(502);
  });

  it('opens a WebSocket to a TLS backend over verified TLS, and refuses one whose certificate the CA did not sign', async () => {
    const leaf = pki.issue('backend', { dns: ['backend.internal'] });
    const server = https.createServer(leaf);
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws, req) => ws.send(`wss sni=${String((req.socket as TLSSocket).servername)}`));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    cleanups.push(() => new Promise((r) => wss.close(() => r(undefined))));
    const h = await serve((server.address() as AddressInfo).port, { good: { protocol: 'ws', tls: tlsOf() }, bad: { protocol: 'ws', tls: tlsOf({ ca: { kind: 'pem', pem: otherPki.ca } }) } });
    const open = (path: string) => h.client.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': path, ':authority': 'app.test', 'sec-websocket-version': '13' }, { endStream: false });
    const good = open('/good');
    expect(await new Promise<number>((resolve) => good.once('response', (hd) => resolve(Number(hd[':status']))))).to.equal(200);
    const frames = readFrames(good);
    expect(await frames.next()).to.equal('wss sni=backend.internal');
    good.write(maskedTextFrame('bye'));
    good.close();
    const bad = open('/bad');
    expect(await new Promise<number>((resolve) => bad.once('response', (hd) => resolve(Number(hd[':status']))))).to.equal(502);
    bad.close();
  });
});
