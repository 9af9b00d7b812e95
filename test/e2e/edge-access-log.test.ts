import { expect } from 'chai';
import { EdgeAccessLog } from '../../src/edge/index.js';
import type { EdgeAccessLogEntry } from '../../src/edge/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { h2, h2Connect, http1, openSession, startTestEdge, tcpEcho, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const WEB = 'binding/host/web.test';
const IDLE = 'binding/host/idle.test';
const DB = 'binding/tcp-port/default/db/5432';

/** The edge's access log through a real edge and a tunnel: one line per public request and per raw connection, nothing secret in it. */
describe('edge access log (tuna edge --access-log)', function () {
  this.timeout(30_000);
  let t: TestEdge;
  let session: TunnelSession;
  let dbSession: TunnelSession;
  let lines: string[];

  beforeEach(async () => {
    lines = [];
    t = await startTestEdge(
      [
        { id: WEB, kind: 'host', hostnames: ['web.test'] },
        { id: IDLE, kind: 'host', hostnames: ['idle.test'] },
        { id: DB, kind: 'tcp-port', port: 0 },
      ],
      { limits: { tunnelWaitMs: 0 } },
      { accessLog: new EdgeAccessLog({ write: (line) => lines.push(line) }) },
    );
    const handler = new TestStreamHandler();
    session = await openSession(t, WEB, handler);
    dbSession = await openSession(t, DB, handler);
  });

  afterEach(async () => {
    await session.close();
    await dbSession.close();
    await t.edge.close();
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

  it('writes one line for a TCP connection when it closes: binding, tunnel and the bytes each way', async () => {
    const port = t.edge.address().bindings.get(DB)![0]!.port;
    expect(await tcpEcho(port, 'ping over tcp')).to.equal('ping over tcp');
    await waitUntil(() => lines.length === 1);
    expect(entries()[0]).to.deep.include({ protocol: 'tcp', client: '127.0.0.1', host: null, binding: DB, tunnel: tunnelOf(DB), method: null, path: null, status: null, bytesIn: 13, bytesOut: 13, aborted: false });
  });
});
