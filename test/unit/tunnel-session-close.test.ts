import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { TunnelSession } from '../../src/tunnel/session.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import { FakeClock } from '../support/tunnel-fake-clock.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const APP = 'binding/host/app.test';
const DRAIN_MS = 7_777;

/**
 * TunnelSession.close() with nothing in flight ends the connection without waiting for any timer
 * (`tuna http` exits at once on SIGTERM); with a stream in flight it still drains.
 * The clock is fake and never advanced unless a test fires a timer by hand, so "settles without a
 * timer" is a count (clock.now() === 0), not a timing.
 */
describe('tunnel session close', () => {
  let t: TestEdge;
  let clock: FakeClock;
  let handler: TestStreamHandler;
  let session: TunnelSession;

  beforeEach(async () => {
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }], { limits: { tunnelWaitMs: 0 } });
    clock = new FakeClock();
    handler = new TestStreamHandler();
    session = new TunnelSession({ edge: t.endpoint, bindingId: APP, key: t.keys.get(APP)!, dialer: new NetEdgeDialer(), clock, handler, drainTimeoutMs: DRAIN_MS });
    await session.connect();
    await waitUntil(() => t.edge.registry.count().get(APP) === 1);
  });

  afterEach(async () => {
    handler.releaseEvents();
    session.destroy();
    await t.edge.close();
  });

  /** settled resolves true once the promise settles, false if it has not within a bounded real wait. */
  async function settled(p: Promise<void>): Promise<boolean> {
    let done = false;
    void p.then(() => (done = true));
    await waitUntil(() => done).catch(() => undefined);
    return done;
  }

  /** openEvents starts GET /events and resolves with the response once its first event arrived. */
  async function openEvents(): Promise<{ res: IncomingMessage; rest: Promise<string> }> {
    const req = httpRequest({ host: '127.0.0.1', port: t.httpPort, path: '/events', headers: { host: 'app.test' }, agent: false });
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.setEncoding('utf8');
    let text = '';
    res.on('data', (c: string) => (text += c));
    const rest = new Promise<string>((resolve) => res.once('end', () => resolve(text)).once('close', () => resolve(text)));
    await waitUntil(() => text.includes('data: one'));
    return { res, rest };
  }

  it('settles with nothing in flight without any timer firing, after serving a request', async () => {
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(200);
    const closing = session.close();
    expect(await settled(closing), 'close() settled').to.equal(true);
    expect(clock.now(), 'fake time advanced').to.equal(0);
    expect(session.state).to.equal('closed');
    expect(session.error).to.equal(undefined);
    await waitUntil(() => (t.edge.registry.count().get(APP) ?? 0) === 0);
  });

  it('lets a stream in flight finish, then settles as it closes, without any timer firing', async () => {
    const { rest } = await openEvents();
    const closing = session.close();
    // the edge has the notice: it opens no new stream here, and the open one goes on
    await waitUntil(() => t.edge.registry.all().every((tunnel) => !tunnel.isAvailable));
    expect(session.state).to.equal('draining');
    handler.releaseEvents();
    expect(await rest).to.equal('data: one\n\ndata: two\n\n');
    expect(await settled(closing), 'close() settled').to.equal(true);
    expect(clock.now(), 'fake time advanced').to.equal(0);
    expect(session.error).to.equal(undefined);
  });

  it('keeps a stream that never finishes until the drain timeout, then ends it', async () => {
    const { rest } = await openEvents();
    const closing = session.close();
    await waitUntil(() => t.edge.registry.all().every((tunnel) => !tunnel.isAvailable));
    // with a stream in flight, close() waits for the drain timer, armed and not yet fired
    const drain = clock.pending().find((timer) => timer.ms === DRAIN_MS);
    expect(drain, 'drain timer armed').to.not.equal(undefined);
    expect(session.state).to.equal('draining');
    drain!.isCleared = true;
    drain!.fn();
    expect(await settled(closing), 'close() settled').to.equal(true);
    expect(session.state).to.equal('closed');
    expect(await rest).to.not.include('data: two');
  });
});
