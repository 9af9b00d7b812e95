import { expect } from 'chai';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { Socket } from 'node:net';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { DataPlane, StaticCertificateSource, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { Listener } from '../../src/model/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { makeSelfSigned } from '../support/backend-tls.js';
import { maskedTextFrame, readFrames } from '../support/backend-ws.js';
import type { SelfSigned } from '../support/backend-tls.js';

const BINDING = 'binding/host/secure';

describe('data plane: TLS terminated in the cluster', () => {
  let certA: SelfSigned;
  let certB: SelfSigned;
  let backend: TestBackend;
  let harness: TunnelHarness;
  let plane: DataPlane;
  let wss: WebSocketServer;

  before(() => {
    certA = makeSelfSigned('a.secure.test');
    certB = makeSelfSigned('b.secure.test');
  });

  beforeEach(async () => {
    backend = await startHttpBackend('secure-backend');
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo ${String(data)}`)));
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'svc', 'http', [{ address: '127.0.0.1', port: backend.port }]);
    endpoints.set('default', 'wsvc', 'http', [{ address: '127.0.0.1', port: (wss.address() as AddressInfo).port }]);
    const certificates = new StaticCertificateSource();
    certificates.set({ namespace: 'default', name: 'a' }, certA);
    certificates.set({ namespace: 'default', name: 'b' }, certB);
    plane = new DataPlane({ endpoints, certificates });
    const listener = (name: string, hostname: string): Listener => ({
      id: `${BINDING}/listener/${name}`,
      bindingId: BINDING,
      name,
      port: 443,
      protocol: 'https',
      hostname,
      tls: { mode: 'terminate-in-cluster', certificates: [{ namespace: 'default', name }] },
      source: { group: '', kind: 'T', name },
    });
    const graph = hostGraph([], { listeners: [listener('a', 'a.secure.test'), listener('b', 'b.secure.test')] });
    for (const name of ['a', 'b'])
      graph.virtualHosts.push({
        id: `${BINDING}/listener/${name}/vhost/${name}.secure.test`,
        listenerId: `${BINDING}/listener/${name}`,
        hostname: `${name}.secure.test`,
        routes: [
          httpRoute(`${name}-ws`, [serviceBackend('wsvc', { protocol: 'ws' })], { match: { path: { type: 'Prefix', value: '/ws' } } }),
          httpRoute(name, [serviceBackend('svc')]),
        ],
      });
    graph.bindings.push({ id: BINDING, kind: 'host', hostnames: ['a.secure.test', 'b.secure.test'], source: { group: '', kind: 'T', name: 'b' } });
    plane.update(graph);
    harness = await startTunnelHarness(plane, { bindingId: BINDING, publicPort: 443, publicProtocol: 'tls' });
  });

  afterEach(async () => {
    await harness.close();
    plane.close();
    await backend.close();
    await new Promise((r) => wss.close(() => r(undefined)));
  });

  /** openTls opens a CONNECT stream as the edge does for SNI routing and runs a TLS client over it. */
  async function openTls(servername: string, ca: string, alpn: string): Promise<tls.TLSSocket> {
    const stream = harness.client.request({ ':method': 'CONNECT', ':authority': `${servername}:443` }, { endStream: false });
    const status = await new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))));
    expect(status).to.equal(200);
    const socket = tls.connect({ socket: stream as unknown as Socket, servername, ca, ALPNProtocols: [alpn] });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', () => resolve());
      socket.once('error', reject);
    });
    return socket;
  }

  it('presents the certificate of the listener named by SNI and serves HTTP/1.1 inside', async () => {
    for (const [name, cert] of [
      ['a', certA],
      ['b', certB],
    ] as const) {
      const socket = await openTls(`${name}.secure.test`, cert.cert, 'http/1.1');
      expect(socket.getPeerCertificate().subject.CN).to.equal(`${name}.secure.test`);
      const body = await new Promise<string>((resolve, reject) => {
        const req = http.request(
          {
            createConnection: () => socket,
            path: `/hello-${name}`,
            headers: { host: `${name}.secure.test`, connection: 'keep-alive, x-private', 'x-private': 'secret', 'proxy-connection': 'keep-alive' },
          },
          (res) => {
            let data = '';
            res.on('data', (c: Buffer) => (data += c.toString()));
            res.on('end', () => resolve(data));
          },
        );
        req.once('error', reject);
        req.end();
      });
      const seen = JSON.parse(body) as EchoReply;
      expect(seen.url).to.equal(`/hello-${name}`);
      expect(seen.headers['x-forwarded-proto']).to.equal('https');
      // The request-side hop-by-hop check: HTTP/1.1 can carry what HTTP/2 cannot.
      expect(seen.headers['x-private']).to.equal(undefined);
      expect(seen.headers['proxy-connection']).to.equal(undefined);
      socket.destroy();
    }
  });

  it('bridges a WebSocket Upgrade inside the terminated TLS to the backend', async () => {
    const socket = await openTls('a.secure.test', certA.cert, 'http/1.1');
    const ws = new WebSocket('ws://a.secure.test/ws/chat', { createConnection: () => socket });
    const reply = await new Promise<string>((resolve, reject) => {
      ws.once('open', () => ws.send('over tls'));
      ws.once('message', (data) => resolve(String(data)));
      ws.once('error', reject);
    });
    expect(reply).to.equal('echo over tls');
    ws.terminate();
  });

  it('bridges a WebSocket over extended CONNECT inside HTTP/2 in the terminated TLS', async () => {
    const socket = await openTls('a.secure.test', certA.cert, 'h2');
    const session = http2.connect('https://a.secure.test', { createConnection: () => socket });
    try {
      await new Promise<void>((r) => session.once('remoteSettings', () => r()));
      const stream = session.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'https', ':path': '/ws', ':authority': 'a.secure.test', 'sec-websocket-version': '13' });
      const status = await new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))));
      expect(status).to.equal(200);
      const frames = readFrames(stream);
      stream.write(maskedTextFrame('inside h2'));
      expect(await frames.next()).to.equal('echo inside h2');
      stream.close();
    } finally {
      session.destroy();
    }
  });

  it('refuses an Upgrade to another protocol inside the terminated TLS with 501', async () => {
    const socket = await openTls('a.secure.test', certA.cert, 'http/1.1');
    socket.write('GET /ws HTTP/1.1\r\nHost: a.secure.test\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n');
    const answer = await new Promise<string>((resolve) => {
      let data = '';
      socket.on('data', (c: Buffer) => (data += c.toString()));
      socket.once('end', () => resolve(data));
    });
    expect(answer).to.match(/^HTTP\/1\.1 501 /);
  });

  it('serves HTTP/2 negotiated by ALPN inside the terminated TLS', async () => {
    const socket = await openTls('b.secure.test', certB.cert, 'h2');
    expect(socket.alpnProtocol).to.equal('h2');
    const session = http2.connect('https://b.secure.test', { createConnection: () => socket });
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = session.request({ ':path': '/over-h2' });
        let data = '';
        req.on('data', (c: Buffer) => (data += c.toString()));
        req.on('end', () => resolve(data));
        req.on('error', reject);
      });
      expect((JSON.parse(body) as EchoReply).url).to.equal('/over-h2');
    } finally {
      session.destroy();
    }
  });

  it('answers 421 over HTTP/2 when the Host belongs to another listener than the SNI, and serves its own', async () => {
    const socket = await openTls('a.secure.test', certA.cert, 'h2');
    const session = http2.connect('https://a.secure.test', { createConnection: () => socket });
    try {
      const ask = (authority: string): Promise<{ status: number; body: string }> =>
        new Promise((resolve, reject) => {
          const req = session.request({ ':path': '/coalesced', ':authority': authority });
          let status = 0;
          let body = '';
          req.once('response', (h) => (status = Number(h[':status'])));
          req.on('data', (c: Buffer) => (body += c.toString()));
          req.on('end', () => resolve({ status, body }));
          req.on('error', reject);
        });
      const misdirected = await ask('b.secure.test');
      expect(misdirected.status).to.equal(421);
      expect(misdirected.body).to.contain('b.secure.test');
      // The same connection still serves the listener its SNI chose.
      const own = await ask('a.secure.test');
      expect(own.status).to.equal(200);
      expect((JSON.parse(own.body) as EchoReply).url).to.equal('/coalesced');
      expect(backend.requests.length).to.equal(1);
    } finally {
      session.destroy();
    }
  });

  it('answers 421 over HTTP/1.1 when the Host belongs to another listener than the SNI', async () => {
    const socket = await openTls('b.secure.test', certB.cert, 'http/1.1');
    socket.write('GET /coalesced HTTP/1.1\r\nHost: a.secure.test\r\nConnection: close\r\n\r\n');
    const answer = await new Promise<string>((resolve) => {
      let data = '';
      socket.on('data', (c: Buffer) => (data += c.toString()));
      socket.once('end', () => resolve(data));
    });
    expect(answer).to.match(/^HTTP\/1\.1 421 /);
    expect(answer).to.contain('misdirected request');
  });
});

describe('data plane: TLS terminated in the cluster, decrypted bytes to a TLSRoute backend', () => {
  it('terminates with the listener certificate and forwards the plaintext to the backend', async () => {
    const cert = makeSelfSigned('raw.test');
    const seen: string[] = [];
    const backend = net.createServer((s) =>
      s.on('data', (c: Buffer) => {
        seen.push(c.toString());
        s.end(`plain:${c.toString()}`);
      }),
    );
    await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'raw', 'tcp', [{ address: '127.0.0.1', port: (backend.address() as AddressInfo).port }]);
    const certificates = new StaticCertificateSource();
    certificates.set({ namespace: 'default', name: 'raw' }, cert);
    const plane = new DataPlane({ endpoints, certificates });
    const binding = 'binding/address/default/gw';
    const listener: Listener = {
      id: `${binding}/listener/tls`,
      bindingId: binding,
      name: 'tls',
      port: 443,
      protocol: 'tls',
      hostname: 'raw.test',
      tls: { mode: 'terminate-in-cluster', certificates: [{ namespace: 'default', name: 'raw' }] },
      source: { group: '', kind: 'T', name: 'gw' },
    };
    plane.update(
      hostGraph([], {
        listeners: [listener],
        streamRoutes: [{ id: 'tlsroute', listenerId: listener.id, hostnames: ['raw.test'], backends: [serviceBackend('raw', { protocol: 'tcp', portName: 'tcp' })], source: { group: '', kind: 'T', name: 'r' } }],
      }),
    );
    const harness = await startTunnelHarness(plane, { bindingId: binding, publicPort: 443, publicProtocol: 'tls' });
    try {
      const stream = harness.client.request({ ':method': 'CONNECT', ':authority': 'raw.test:443' }, { endStream: false });
      expect(await new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))))).to.equal(200);
      const socket = tls.connect({ socket: stream as unknown as Socket, servername: 'raw.test', ca: cert.cert });
      await new Promise<void>((resolve, reject) => {
        socket.once('secureConnect', () => resolve());
        socket.once('error', reject);
      });
      const reply = await new Promise<string>((resolve) => {
        let data = '';
        socket.on('data', (c: Buffer) => (data += c.toString()));
        socket.once('end', () => resolve(data));
        socket.write('hello');
      });
      expect(reply).to.equal('plain:hello');
      expect(seen).to.deep.equal(['hello']);
      socket.destroy();
    } finally {
      await harness.close();
      plane.close();
      await new Promise((r) => backend.close(r));
    }
  });
});

describe('data plane: Terminate and Passthrough TLS listeners on one port (TLSRouteModeMixed)', () => {
  const binding = 'binding/address/default/mixed';
  let plainSeen: string[];
  let plain: net.Server;
  let secure: tls.Server;
  let plane: DataPlane;
  let harness: TunnelHarness;
  let terminateCert: SelfSigned;
  let backendCert: SelfSigned;

  beforeEach(async () => {
    terminateCert = makeSelfSigned('terminate.test');
    backendCert = makeSelfSigned('pass.test');
    plainSeen = [];
    plain = net.createServer((s) => s.on('data', (c: Buffer) => (plainSeen.push(c.toString()), s.end(`plain:${c.toString()}`))));
    // The passthrough backend terminates TLS itself, with a certificate the data plane never holds.
    secure = tls.createServer({ key: backendCert.key, cert: backendCert.cert }, (s) =>
      s.on('data', (c: Buffer) => s.end(`backend(${String((s as tls.TLSSocket & { servername?: string }).servername)}):${c.toString()}`)),
    );
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => secure.listen(0, '127.0.0.1', r));
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'plain', 'tcp', [{ address: '127.0.0.1', port: (plain.address() as AddressInfo).port }]);
    endpoints.set('default', 'secure', 'tcp', [{ address: '127.0.0.1', port: (secure.address() as AddressInfo).port }]);
    const certificates = new StaticCertificateSource();
    certificates.set({ namespace: 'default', name: 'terminate' }, terminateCert);
    plane = new DataPlane({ endpoints, certificates });
    const listener = (name: string, mode: 'terminate-in-cluster' | 'passthrough'): Listener => ({
      id: `${binding}/listener/${name}`,
      bindingId: binding,
      name,
      port: 8883,
      protocol: 'tls',
      hostname: `${name}.test`,
      tls: { mode, certificates: mode === 'passthrough' ? [] : [{ namespace: 'default', name }] },
      source: { group: '', kind: 'T', name: 'gw' },
    });
    const route = (name: string, service: string) => ({
      id: `tlsroute/${name}`,
      listenerId: `${binding}/listener/${name}`,
      hostnames: [`${name}.test`],
      backends: [serviceBackend(service, { protocol: 'tcp' as const, portName: 'tcp' })],
      source: { group: '', kind: 'T', name },
    });
    plane.update(hostGraph([], { listeners: [listener('terminate', 'terminate-in-cluster'), listener('pass', 'passthrough')], streamRoutes: [route('terminate', 'plain'), route('pass', 'secure')] }));
    harness = await startTunnelHarness(plane, { bindingId: binding, publicPort: 8883, publicProtocol: 'tls' });
  });

  afterEach(async () => {
    await harness.close();
    plane.close();
    await new Promise((r) => plain.close(r));
    await new Promise((r) => secure.close(r));
  });

  /** exchange opens a CONNECT stream as the edge does for SNI routing, runs TLS over it, writes `hello` and reads to the end. */
  async function exchange(servername: string, ca: string): Promise<{ subject: string; reply: string }> {
    const stream = harness.client.request({ ':method': 'CONNECT', ':authority': `${servername}:8883` }, { endStream: false });
    expect(await new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))))).to.equal(200);
    const socket = tls.connect({ socket: stream as unknown as Socket, servername, ca });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('secureConnect', () => resolve());
        socket.once('error', reject);
      });
      const subject = String(socket.getPeerCertificate().subject.CN);
      const reply = await new Promise<string>((resolve) => {
        let data = '';
        socket.on('data', (c: Buffer) => (data += c.toString()));
        socket.once('end', () => resolve(data));
        socket.write('hello');
      });
      return { subject, reply };
    } finally {
      socket.destroy();
    }
  }

  it('terminates the SNI of the Terminate listener and passes the SNI of the Passthrough listener to its backend untouched', async () => {
    expect(await exchange('terminate.test', terminateCert.cert)).to.deep.equal({ subject: 'terminate.test', reply: 'plain:hello' });
    // The client's TLS session ends at the backend: its certificate, its view of the SNI.
    expect(await exchange('pass.test', backendCert.cert)).to.deep.equal({ subject: 'pass.test', reply: 'backend(pass.test):hello' });
    expect(plainSeen).to.deep.equal(['hello']);
  });

  it('rejects a name neither listener serves without terminating it', async () => {
    const stream = harness.client.request({ ':method': 'CONNECT', ':authority': 'other.test:8883' }, { endStream: false });
    expect(await new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))))).to.equal(404);
    stream.destroy();
  });
});
