import { expect } from 'chai';
import { once } from 'node:events';
import { connect as connectTls } from 'node:tls';
import WebSocket, { WebSocketServer } from 'ws';
import { EdgeAccessLog } from '../../src/edge/index.js';
import type { EdgeAccessLogEntry } from '../../src/edge/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { h2, h2Connect, http1, openSession, startTestEdge, tcpEcho, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const WEB = 'binding/host/web.test';
const IDLE = 'binding/host/idle.test';
const DB = 'binding/tcp-port/default/db/5432';
const SECURE = 'binding/host/secure.test';

/** The edge's access log through a real edge and a tunnel: one line per public request and per raw connection, nothing secret in it. */
describe('edge access log (tuna edge --access-log)', function () {
  this.timeout(30_000);
  let t: TestEdge;
  let sessions: TunnelSession[];
  let wss: WebSocketServer;
  let lines: string[];
  const clusterCert = selfSignedCertificate(['secure.test']);

  beforeEach(async () => {
    lines = [];
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    wss.on('connection', (ws) => ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })));
    t = await startTestEdge(
      [
        { id: WEB, kind: 'host', hostnames: ['web.test'] },
        { id: IDLE, kind: 'host', hostnames: ['idle.test'] },
        { id: DB, kind: 'tcp-port', port: 0 },
        { id: SECURE, kind: 'host', hostnames: ['secure.test'], tls: 'terminate-in-cluster' },
      ],
      { listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 }, https: { host: '127.0.0.1', port: 0 } }, limits: { tunnelWaitMs: 0 } },
      { accessLog: new EdgeAccessLog({ write: (line) => lines.push(line) }) },
    );
    const handler = new TestStreamHandler({ webSocketPort: (wss.address() as { port: number }).port, tls: clusterCert });
    sessions = [];
    for (const id of [WEB, DB, SECURE]) sessions.push(await openSession(t, id, handler));
  });

  afterEach(async () => {
    for (const s of sessions) s.destroy();
    await t.edge.close();
    wss.close();
  });

  const entries = (): EdgeAccessLogEntry[] => lines.map((l) => JSON.parse(l) as EdgeAccessLogEntry);
  const tunnelOf = (bindingId: string): string => t.edge.registry.pick(bindingId)!.connectionId;

  it('writes one JSON line per HTTP/1.1 request: host, binding, status, bytes, client and the tunnel, the query redacted, no header', async () => {
    const res = await http1(t.httpPort, 'web.test', '/echo?access_token=sekrit-q&page=2', {
      method: 'POST',
      body: 'seven b',
      headers: { authorization: 'Bearer sekrit-h', cookie: 'sid=sekrit-c', 'x-api-key': 'sekrit-k' },
    });
    expect(res.status).to.equal(200);
    expect(res.body.toString()).to.equal('seven b');
    await waitUntil(() => lines.length === 1);
    expect(lines[0]).to.not.match(/sekrit|authorization|cookie/i);
    const [entry] = entries();
    expect(entry).to.deep.include({
      protocol: 'http1',
      client: '127.0.0.1',
      host: 'web.test',
      binding: WEB,
      tunnel: tunnelOf(WEB),
      method: 'POST',
      path: '/echo?access_token=[redacted]&page=2',
      status: 200,
      bytesIn: 7,
      bytesOut: 7,
      aborted: false,
    });
    expect(entry!.requestId).to.be.a('string').and.not.equal('');
    expect(entry!.durationMs).to.be.a('number').and.at.least(0);
    expect(Date.parse(entry!.time)).to.not.be.NaN;
    expect(Object.keys(entry!)).to.deep.equal(['time', 'requestId', 'protocol', 'client', 'host', 'binding', 'tunnel', 'method', 'path', 'status', 'durationMs', 'bytesIn', 'bytesOut', 'aborted']);
  });

  it('logs the edge’s own answers too: 404 for an unknown host (no binding), 503 for a binding with no tunnel (no tunnel)', async () => {
    expect((await http1(t.httpPort, 'nobody.test', '/x?password=sekrit')).status).to.equal(404);
    expect((await http1(t.httpPort, 'idle.test', '/y')).status).to.equal(503);
    await waitUntil(() => lines.length === 2);
    expect(lines.join('\n')).to.not.contain('sekrit');
    expect(entries().map((e) => [e.host, e.binding, e.tunnel, e.requestId, e.path, e.status])).to.deep.equal([
      ['nobody.test', null, null, null, '/x?password=[redacted]', 404],
      ['idle.test', IDLE, null, null, '/y', 503],
    ]);
  });

  it('writes one line per HTTP/2 request', async () => {
    const client = h2Connect(t.httpPort);
    try {
      const res = await h2(client, { ':method': 'POST', ':path': '/count?sig=sekrit', ':authority': 'web.test', authorization: 'Bearer sekrit' }, 'four');
      expect(res.headers[':status']).to.equal(200);
      expect(res.body.toString()).to.equal('4');
    } finally {
      client.close();
    }
    await waitUntil(() => lines.length === 1);
    expect(lines[0]).to.not.contain('sekrit');
    expect(entries()[0]).to.deep.include({ protocol: 'http2', host: 'web.test', binding: WEB, tunnel: tunnelOf(WEB), method: 'POST', path: '/count?sig=[redacted]', status: 200, bytesIn: 4, bytesOut: 1, aborted: false });
  });

  it('writes one line for a TLS connection routed by SNI when it closes, the SNI name as its host', async () => {
    const socket = connectTls({ host: '127.0.0.1', port: t.edge.address().https!.port, servername: 'secure.test', ca: clusterCert.cert });
    await once(socket, 'secureConnect');
    socket.end('ping over tls');
    let text = '';
    for await (const chunk of socket) text += String(chunk);
    expect(text).to.equal('ping over tls');
    await waitUntil(() => lines.length === 1);
    const [entry] = entries();
    expect(entry).to.deep.include({ protocol: 'tls', client: '127.0.0.1', host: 'secure.test', binding: SECURE, tunnel: tunnelOf(SECURE), method: null, path: null, status: null, aborted: false });
    // the handshake and the records each way, not just the 13 bytes of plaintext
    expect(entry!.bytesIn).to.be.greaterThan(13);
    expect(entry!.bytesOut).to.be.greaterThan(13);
  });

  it('writes one line for a WebSocket when it closes: status 101, the upgrade request’s query redacted', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${t.httpPort}/chat?token=sekrit`, { headers: { host: 'web.test', cookie: 'sid=sekrit' } });
    await once(ws, 'open');
    ws.send('hello');
    const [reply] = (await once(ws, 'message')) as [Buffer];
    expect(String(reply)).to.equal('hello');
    ws.close();
    await once(ws, 'close');
    await waitUntil(() => lines.length === 1);
    expect(lines[0]).to.not.contain('sekrit');
    const [entry] = entries();
    expect(entry).to.deep.include({ protocol: 'websocket', host: 'web.test', binding: WEB, tunnel: tunnelOf(WEB), method: 'GET', path: '/chat?token=[redacted]', status: 101 });
    expect(entry!.bytesIn).to.be.greaterThan(0);
    expect(entry!.bytesOut).to.be.greaterThan(0);
  });

  it('writes one line for a TCP connection when it closes: binding, tunnel and the bytes each way', async () => {
    const port = t.edge.address().bindings.get(DB)![0]!.port;
    expect(await tcpEcho(port, 'ping over tcp')).to.equal('ping over tcp');
    await waitUntil(() => lines.length === 1);
    expect(entries()[0]).to.deep.include({ protocol: 'tcp', client: '127.0.0.1', host: null, binding: DB, tunnel: tunnelOf(DB), method: null, path: null, status: null, bytesIn: 13, bytesOut: 13, aborted: false });
  });
});
