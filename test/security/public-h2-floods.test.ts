import { expect } from 'chai';
import { constants as h2c } from 'node:http2';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { TunnelSession } from '../../src/tunnel/session.js';
import type { TunnelStreamContext } from '../../src/wire/stream-handler.js';
import { attack } from '../support/attack-log.js';
import { FRAME, frame, headersOnly, openRawH2, resetBurst, resetsOnly, writeAll } from '../support/h2-frames.js';
import { requestsWhile } from '../support/public-load.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

// HTTP/2 abuse on one public connection is answered on that connection only;
// the tenant's tunnel and its other clients keep working.

const APP = 'binding/host/app.test';
const BURST = 100_000;
const PER_CHUNK = 1000;

/** LateEventsHandler answers `/events` only once `begun` resolves, with one event and no end; anything else as the test handler. */
class LateEventsHandler extends TestStreamHandler {
  waiting = 0;
  constructor(readonly begun: Promise<void>) {
    super();
  }
  override handleStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, context: TunnelStreamContext): void {
    if (headers[':path'] !== '/events') return super.handleStream(stream, headers, context);
    this.waiting++;
    stream.on('error', () => undefined);
    stream.resume();
    void this.begun.then(() => {
      if (stream.destroyed || stream.closed) return;
      stream.respond({ ':status': 200, 'content-type': 'text/event-stream' });
      stream.write('data: one\n\n');
    });
  }
}

describe('attack: HTTP/2 floods on the public listener', function () {
  this.timeout(60_000);
  let t: TestEdge;
  let session: TunnelSession;

  beforeEach(async () => {
    // Every client here is 127.0.0.1: the per-client in-flight cap (128, edge-client-fairness.test.ts)
    // would stop the streams these tests need to reach the tunnel, so it is raised above their count.
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }], { limits: { tunnelWaitMs: 0, public: { maxInFlightPerClient: 5000 } } });
    session = await openSession(t, APP, new TestStreamHandler());
  });

  afterEach(async () => {
    session.destroy();
    await t.edge.close();
  });

  const loopWhile = (isDone: () => boolean): Promise<number[]> => requestsWhile(t.httpPort, 'app.test', isDone);

  it(`answers a burst of ${BURST.toLocaleString('en')} HEADERS+RST_STREAM with GOAWAY on that connection; the tunnel and another client are unaffected`, async () => {
    const tunnelBefore = t.edge.registry.all().map((x) => x.connectionId);
    const streamsBefore = t.edge.metrics.streamsTotal;
    const raw = await openRawH2(t.httpPort);
    const chunks = function* (): Generator<Buffer> {
      for (let i = 0; i < BURST / PER_CHUNK; i++) yield resetBurst('app.test', 1 + i * PER_CHUNK * 2, PER_CHUNK);
    };
    let isDone = false;
    const burst = writeAll(raw.socket, chunks()).then(async (written) => {
      raw.socket.end();
      await raw.closed;
      isDone = true;
      return written;
    });
    const statuses = await loopWhile(() => isDone);
    const written = await burst;
    const tunnelStreams = t.edge.metrics.streamsTotal - streamsBefore - statuses.length;
    attack(
      `rapid reset: HEADERS+RST_STREAM pairs written ${(written * PER_CHUNK).toLocaleString('en')} → GOAWAY ${raw.goawayCode()}, tunnel streams for them ${tunnelStreams}, ` +
        `loop requests ${statuses.length}, 5xx ${statuses.filter((s) => s >= 500 || s === 0).length}`,
    );
    expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
    expect(session.state).to.equal('open');
    expect(t.edge.registry.all().map((x) => x.connectionId)).to.deep.equal(tunnelBefore);
    expect(raw.goawayCode()).to.equal(h2c.NGHTTP2_ENHANCE_YOUR_CALM);
    expect(t.edge.metrics.publicGoaways('rapid-reset')).to.equal(1);
    // the streams reset before they were relayed never reach the tunnel; at most one window's budget does
    expect(tunnelStreams).to.be.at.most(200);
    const metrics = await (await fetch(`http://127.0.0.1:${t.edge.address().tunnel.port}/metrics`)).text();
    expect(metrics).to.include('tuna_edge_public_http2_goaways_total{reason="rapid-reset"} 1');
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(200);
  });

  it('keeps the tunnel when 10 connections each reset 10,000 streams at once, and sends each of them away', async () => {
    const tunnelBefore = t.edge.registry.all().map((x) => x.connectionId);
    const streamsBefore = t.edge.metrics.streamsTotal;
    const raws = await Promise.all(Array.from({ length: 10 }, () => openRawH2(t.httpPort)));
    let isDone = false;
    const bursts = Promise.all(
      raws.map(async (raw) => {
        const chunks = Array.from({ length: 10 }, (_, i) => resetBurst('app.test', 1 + i * PER_CHUNK * 2, PER_CHUNK));
        const written = await writeAll(raw.socket, chunks);
        raw.socket.end();
        await raw.closed;
        return written * PER_CHUNK;
      }),
    ).then((w) => {
      isDone = true;
      return w.reduce((a, b) => a + b, 0);
    });
    const statuses = await loopWhile(() => isDone);
    const written = await bursts;
    const tunnelStreams = t.edge.metrics.streamsTotal - streamsBefore - statuses.length;
    attack(
      `rapid reset on 10 connections: resets written ${written.toLocaleString('en')} → tunnel streams for them ${tunnelStreams}, ` +
        `loop requests ${statuses.length}, non-200 ${statuses.filter((s) => s !== 200).length}, tunnel state ${session.state}`,
    );
    expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
    expect(session.state).to.equal('open');
    expect(t.edge.registry.all().map((x) => x.connectionId)).to.deep.equal(tunnelBefore);
    expect(raws.map((r) => r.goawayCode())).to.deep.equal(new Array(10).fill(h2c.NGHTTP2_ENHANCE_YOUR_CALM));
    expect(t.edge.metrics.publicGoaways('rapid-reset')).to.equal(10);
    expect(tunnelStreams).to.be.at.most(10 * 200);
  });

  it('keeps the tunnel when 1,920 streams are reset after they reached it (16 connections, two rounds): the edge damps its cancels', async () => {
    const tunnelBefore = t.edge.registry.all().map((x) => x.connectionId);
    const raws = await Promise.all(Array.from({ length: 16 }, () => openRawH2(t.httpPort)));
    let isDone = false;
    const rounds = (async () => {
      for (const round of [0, 1]) {
        const firstId = 1 + round * 120;
        const active = t.edge.metrics.streamsActive;
        // the agent answers after 5 s: long enough that, on a loaded machine too, every stream is
        // still open at the tunnel when the count below sees them all, and then it is reset
        for (const raw of raws) raw.socket.write(headersOnly('app.test', '/slow?ms=5000', firstId, 60));
        await waitUntil(() => t.edge.metrics.streamsActive >= active + 16 * 60 - 10, 10_000);
        for (const raw of raws) raw.socket.write(resetsOnly(firstId, 60));
        await new Promise((r) => setTimeout(r, 700));
      }
      isDone = true;
    })();
    const statuses = await loopWhile(() => isDone);
    await rounds;
    for (const raw of raws) raw.socket.destroy();
    attack(`late resets: 1,920 streams reset after reaching the tunnel → loop requests ${statuses.length}, non-200 ${statuses.filter((s) => s !== 200).length}, tunnel state ${session.state}`);
    expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
    expect(session.state).to.equal('open');
    expect(t.edge.registry.all().map((x) => x.connectionId)).to.deep.equal(tunnelBefore);
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(200);
  });

  it('resets, once its cancel budget allows, the tunnel streams past that budget whose answer never ends (clients that left before their event stream began)', async () => {
    // 540 requests reach the tunnel from 9 connections and their clients reset them all: 500
    // cancels go at once, the other 40 wait for the budget to refill (15 a second). Their answers
    // begin only then, as event streams that never end: left to finish, those 40 stayed open for good.
    session.destroy();
    let begin = (): void => undefined;
    const begun = new Promise<void>((resolve) => (begin = resolve));
    const late = new LateEventsHandler(begun);
    session = await openSession(t, APP, late);
    await waitUntil(() => t.edge.registry.count().get(APP) === 1, 10_000);
    const raws = await Promise.all(Array.from({ length: 9 }, () => openRawH2(t.httpPort)));
    for (const raw of raws) raw.socket.write(headersOnly('app.test', '/events', 1, 60));
    await waitUntil(() => late.waiting === 9 * 60, 20_000);
    for (const raw of raws) raw.socket.write(resetsOnly(1, 60));
    await waitUntil(() => t.edge.metrics.streamsActive <= 9 * 60 - 500, 20_000);
    begin();
    // a generous bound: 40 cancels at 15 a second take under 3 s
    await waitUntil(() => t.edge.metrics.streamsActive === 0, 30_000).catch(() => undefined);
    for (const raw of raws) raw.socket.destroy();
    expect(t.edge.metrics.streamsActive, 'tunnel streams still open').to.equal(0);
    expect(t.edge.registry.all().map((x) => x.activeStreams)).to.deep.equal([0]);
    expect(session.state, 'the agent saw no more cancels than it allows').to.equal('open');
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(200);
  });

  it('answers a stream flood above the advertised concurrency with GOAWAY on that connection only', async () => {
    const raw = await openRawH2(t.httpPort);
    // 400 streams the agent answers after 2 s: 250 are allowed at once (SETTINGS_MAX_CONCURRENT_STREAMS), the rest refused
    raw.socket.write(headersOnly('app.test', '/slow?ms=2000', 1, 400));
    const isClosed = await Promise.race([raw.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
    raw.socket.destroy();
    attack(`stream flood: 400 HEADERS past a concurrency of 250 → closed ${isClosed}, GOAWAY ${raw.goawayCode()}, tunnel ${session.state}`);
    expect(isClosed).to.equal(true);
    // Node's own answer past maxSessionInvalidFrames (refused streams count): GOAWAY INTERNAL_ERROR
    expect(raw.goawayCode()).to.equal(h2c.NGHTTP2_INTERNAL_ERROR);
    expect(t.edge.metrics.publicGoaways('invalid-frames')).to.equal(1);
    expect(session.state).to.equal('open');
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(200);
  });

  for (const [what, type, payload, reason] of [
    ['PING', FRAME.PING, Buffer.alloc(8), 'ping-flood'],
    ['SETTINGS', FRAME.SETTINGS, Buffer.alloc(0), 'settings-flood'],
  ] as const) {
    it(`answers a ${what} flood with GOAWAY on that connection only`, async () => {
      const raw = await openRawH2(t.httpPort);
      const flood = Buffer.concat(Array.from({ length: 1000 }, () => frame(type, 0, 0, payload)));
      let isDone = false;
      const flooding = writeAll(raw.socket, Array.from({ length: 100 }, () => flood)).then(async (written) => {
        raw.socket.end();
        await raw.closed;
        isDone = true;
        return written;
      });
      const statuses = await loopWhile(() => isDone);
      const written = await flooding;
      attack(`${what} flood: ${(written * 1000).toLocaleString('en')} frames written → GOAWAY ${raw.goawayCode()}, loop requests ${statuses.length}, non-200 ${statuses.filter((s) => s !== 200).length}`);
      expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
      expect(raw.goawayCode()).to.equal(h2c.NGHTTP2_ENHANCE_YOUR_CALM);
      expect(t.edge.metrics.publicGoaways(reason)).to.equal(1);
      expect(session.state).to.equal('open');
    });
  }
});
