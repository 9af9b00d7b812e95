import { expect } from 'chai';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as connectH2 } from 'node:http2';
import { connect as connectTls } from 'node:tls';
import WebSocket, { WebSocketServer } from 'ws';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, openSession, startTestEdge, tcpEcho } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const WEB = 'binding/host/app.test';
const DB = 'binding/tcp-port/default/db/5432';
const SECURE = 'binding/host/secure.test';
const EDGE_TLS = 'binding/host/edge.test';
const GATEWAY = 'binding/address/default/gw';
const ADDRESS = '127.77.0.5';

describe('tunnel: TCP, TLS, WebSocket and dedicated addresses', () => {
  const clusterCert = selfSignedCertificate(['secure.test']);
  const edgeCert = selfSignedCertificate(['edge.test']);
  let t: TestEdge;
  let wss: WebSocketServer;
  let handler: TestStreamHandler;
  let sessions: TunnelSession[];

  beforeEach(async () => {
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
    t = await startTestEdge(
      [
        { id: WEB, kind: 'host', hostnames: ['app.test'] },
        { id: DB, kind: 'tcp-port', port: 0 },
        { id: SECURE, kind: 'host', hostnames: ['secure.test'], tls: 'terminate-in-cluster' },
        { id: EDGE_TLS, kind: 'host', hostnames: ['edge.test'] },
        { id: GATEWAY, kind: 'address', address: ADDRESS, ports: [{ port: 0, protocol: 'http' }] },
      ],
      {
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 }, https: { host: '127.0.0.1', port: 0 } },
        certificates: [{ hostnames: ['edge.test'], ...edgeCert }],
        limits: { tunnelWaitMs: 0 },
      },
    );
    handler = new TestStreamHandler({ webSocketPort: (wss.address() as { port: number }).port, tls: clusterCert });
    sessions = [];
    for (const id of [WEB, DB, SECURE, EDGE_TLS, GATEWAY]) sessions.push(await openSession(t, id, handler));
  });

  afterEach(async () => {
    for (const s of sessions) s.destroy();
    await t.edge.close();
    wss.close();
  });

  it('echoes TCP through a tcp-port binding, passing the half-close on', async () => {
    const port = t.edge.address().bindings.get(DB)![0]!.port;
    expect(await tcpEcho(port, 'ping over tcp')).to.equal('ping over tcp');
    expect(handler.seen.at(-1)).to.deep.include({ bindingId: DB, publicProtocol: 'tcp', publicPort: port });
  });

  it('routes raw TLS by SNI to the tunnel, where the agent terminates it with its own certificate', async () => {
    const port = t.edge.address().https!.port;
    const socket = connectTls({ host: '127.0.0.1', port, servername: 'secure.test', ca: clusterCert.cert });
    await once(socket, 'secureConnect');
    // the peer certificate is the cluster's: the edge did not terminate
    expect(socket.getPeerCertificate().subject.CN).to.equal('secure.test');
    socket.end('ping over tls');
    const chunks: Buffer[] = [];
    for await (const chunk of socket) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).to.equal('ping over tls');
    expect(handler.seen.at(-1)).to.deep.include({ bindingId: SECURE, publicProtocol: 'tls', publicPort: port });
  });

  it('terminates TLS at the edge for edge-mode hosts over HTTP/1.1 and h2 (ALPN)', async () => {
    const port = t.edge.address().https!.port;
    const req = httpsRequest({ host: '127.0.0.1', port, servername: 'edge.test', path: '/', headers: { host: 'edge.test' }, ca: edgeCert.cert });
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    let text = '';
    for await (const chunk of res) text += String(chunk);
    expect(res.statusCode).to.equal(200);
    expect((JSON.parse(text) as { headers: Record<string, string> }).headers['x-forwarded-proto']).to.equal('https');
    const client = connectH2(`https://edge.test:${port}`, {
      createConnection: () => connectTls({ host: '127.0.0.1', port, servername: 'edge.test', ca: edgeCert.cert, ALPNProtocols: ['h2'] }),
    });
    try {
      const stream = client.request({ ':path': '/', ':authority': 'edge.test' });
      const [headers] = (await once(stream, 'response')) as [Record<string, unknown>];
      let body = '';
      for await (const chunk of stream) body += String(chunk);
      expect(headers[':status']).to.equal(200);
      expect((JSON.parse(body) as { context: { publicProtocol: string } }).context.publicProtocol).to.equal('https');
    } finally {
      client.destroy();
    }
  });

  it('relays a WebSocket through extended CONNECT and back', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${t.httpPort}/chat`, { headers: { host: 'app.test' } });
    await once(ws, 'open');
    const replies: string[] = [];
    ws.on('message', (data) => replies.push(String(data)));
    ws.send('hello');
    ws.send('again');
    const big = 'x'.repeat(200_000);
    ws.send(big);
    for (let i = 0; i < 300 && replies.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    ws.close();
    expect(replies.slice(0, 2)).to.deep.equal(['hello', 'again']);
    expect(replies[2]).to.equal(big);
    expect(handler.seen.some((c) => c.bindingId === WEB && c.publicProtocol === 'http')).to.equal(true);
  });

  it('relays extended CONNECT from a public HTTP/2 WebSocket client (RFC 8441)', async () => {
    const client = connectH2(`http://127.0.0.1:${t.httpPort}`);
    try {
      await once(client, 'remoteSettings');
      const stream = client.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/chat', ':authority': 'app.test', 'sec-websocket-version': '13' });
      const [headers] = (await once(stream, 'response')) as [Record<string, unknown>];
      expect(headers[':status']).to.equal(200);
      // one masked text frame "hi" (RFC 6455 §5.2); the echo comes back unmasked
      const mask = Buffer.from([1, 2, 3, 4]);
      const payload = Buffer.from('hi').map((b, i) => b ^ mask[i % 4]!);
      stream.write(Buffer.concat([Buffer.from([0x81, 0x80 | 2]), mask, payload]));
      const [frame] = (await once(stream, 'data')) as [Buffer];
      expect([...frame]).to.deep.equal([0x81, 2, ...Buffer.from('hi')]);
      stream.close();
    } finally {
      client.destroy();
    }
  });

  it('sends every request on a dedicated address to its binding, whatever the Host', async () => {
    const port = t.edge.address().bindings.get(GATEWAY)![0]!.port;
    const res = await http1AtAddress(ADDRESS, port, 'anything.example');
    expect(res.status).to.equal(200);
    expect((JSON.parse(res.body) as { context: { bindingId: string } }).context.bindingId).to.equal(GATEWAY);
    // the shared listener still answers 404 for that name
    expect((await http1(t.httpPort, 'anything.example', '/')).status).to.equal(404);
  });
});

async function http1AtAddress(address: string, port: number, host: string): Promise<{ status: number; body: string }> {
  const req = httpRequest({ host: address, port, path: '/', headers: { host }, agent: false });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  let body = '';
  for await (const chunk of res) body += String(chunk);
  return { status: res.statusCode ?? 0, body };
}
