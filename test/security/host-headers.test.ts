import { expect } from 'chai';
import { once } from 'node:events';
import { connect } from 'node:net';
import type { ClientHttp2Session } from 'node:http2';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { constants as h2c } from 'node:http2';
import { attack } from '../support/attack-log.js';
import { FRAME, frame, getHeaderBlock, openRawH2 } from '../support/h2-frames.js';
import { literalField } from '../support/hostile-agent.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { h2, h2Connect, openSession, startTestEdge } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const APP = 'binding/host/app.test';
const OTHER = 'binding/host/other.test';

/** rawStatus sends a raw HTTP/1.1 request head and returns the status code of the answer. */
async function rawStatus(port: number, head: string): Promise<number> {
  const socket = connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  socket.write(head);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) {
    chunks.push(chunk as Buffer);
    if (Buffer.concat(chunks).includes('\r\n')) break;
  }
  socket.destroy();
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(Buffer.concat(chunks).toString('latin1'))?.[1] ?? 0);
}

/** The Host the edge routes by is the only Host there is. */
describe('attack: ambiguous Host headers are refused', () => {
  let t: TestEdge;
  let session: TunnelSession;
  let handler: TestStreamHandler;
  let client: ClientHttp2Session | undefined;

  beforeEach(async () => {
    t = await startTestEdge(
      [
        { id: APP, kind: 'host', hostnames: ['app.test'] },
        { id: OTHER, kind: 'host', hostnames: ['other.test'] },
      ],
      { limits: { tunnelWaitMs: 0 } },
    );
    handler = new TestStreamHandler();
    session = await openSession(t, APP, handler);
  });
  afterEach(async () => {
    client?.destroy();
    client = undefined;
    session.destroy();
    await t.edge.close();
  });

  it('answers 400 to an HTTP/1.1 request with two Host fields (RFC 9112 §3.2) and never reaches the tunnel', async () => {
    const differing = await rawStatus(t.httpPort, 'GET / HTTP/1.1\r\nHost: app.test\r\nHost: other.test\r\nConnection: close\r\n\r\n');
    const cased = await rawStatus(t.httpPort, 'GET / HTTP/1.1\r\nhost: app.test\r\nHOST: app.test\r\nConnection: close\r\n\r\n');
    attack(`two Host fields on HTTP/1.1: differing → ${differing}, same name in two cases → ${cased}, tunnel streams ${t.edge.metrics.streamsTotal}`);
    expect([differing, cased]).to.deep.equal([400, 400]);
    expect(t.edge.metrics.streamsTotal).to.equal(0);
    expect(await rawStatus(t.httpPort, 'GET / HTTP/1.1\r\nHost: app.test\r\nConnection: close\r\n\r\n')).to.equal(200);
  });

  it('answers 400 to an HTTP/2 request whose Host disagrees with :authority (RFC 9113 §8.3.1), 200 when they agree', async () => {
    client = h2Connect(t.httpPort);
    const mismatch = await h2(client, { ':method': 'GET', ':path': '/', ':authority': 'app.test', host: 'other.test' });
    attack(`HTTP/2 Host other.test against :authority app.test → ${mismatch.headers[':status']}, tunnel streams ${t.edge.metrics.streamsTotal}`);
    expect(mismatch.headers[':status']).to.equal(400);
    expect(t.edge.metrics.streamsTotal).to.equal(0);
    const agree = await h2(client, { ':method': 'GET', ':path': '/', ':authority': 'app.test', host: 'APP.test' });
    expect(agree.headers[':status']).to.equal(200);
  });

  it('refuses an HTTP/2 request carrying two host fields (one agreeing with :authority) before the edge routes it: RST_STREAM, no tunnel stream', async () => {
    const raw = await openRawH2(t.httpPort);
    const block = Buffer.concat([getHeaderBlock('app.test'), literalField('host', 'app.test'), literalField('host', 'other.test')]);
    raw.socket.write(frame(FRAME.HEADERS, FRAME.END_HEADERS | FRAME.END_STREAM, 1, block));
    const deadline = Date.now() + 5000;
    while (raw.resetCode(1) === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    raw.socket.destroy();
    attack(`HTTP/2 with two host fields (app.test, other.test) and :authority app.test → RST_STREAM ${raw.resetCode(1)}, tunnel streams ${t.edge.metrics.streamsTotal}`);
    expect(raw.resetCode(1)).to.equal(h2c.NGHTTP2_PROTOCOL_ERROR);
    expect(t.edge.metrics.streamsTotal).to.equal(0);
    expect(handler.seen).to.deep.equal([]);
  });
});
