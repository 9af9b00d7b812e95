import { expect } from 'chai';
import { TunnelSession } from '../../src/tunnel/session.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import type { TunnelError } from '../../src/tunnel/errors.js';
import { FakeClock } from '../support/tunnel-fake-clock.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const APP = 'binding/host/app.test';

describe('tunnel session liveness', () => {
  let t: TestEdge;
  let clock: FakeClock;
  let session: TunnelSession;

  beforeEach(async () => {
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }], { limits: { tunnelWaitMs: 0 } });
    clock = new FakeClock();
    session = new TunnelSession({
      edge: t.endpoint,
      bindingId: APP,
      key: t.keys.get(APP)!,
      dialer: new NetEdgeDialer(),
      clock,
      handler: new TestStreamHandler(),
      pingIntervalMs: 5000,
      pingTimeoutMs: 3000,
    });
    await session.connect();
    await waitUntil(() => t.edge.registry.count().get(APP) === 1);
  });

  afterEach(async () => {
    session.destroy();
    await t.edge.close();
  });

  it('sends a PING every interval and keeps the session while the edge answers', async () => {
    for (let i = 0; i < 3; i++) {
      expect(clock.pending().map((p) => p.ms)).to.deep.equal([5000]);
      clock.fireNext();
      expect(clock.pending().map((p) => p.ms)).to.deep.equal([3000]);
      await waitUntil(() => clock.pending().length === 1 && clock.pending()[0]!.ms === 5000);
    }
    expect(session.state).to.equal('open');
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(200);
  });

  it('destroys the session with TUNA_TUNNEL_TIMEOUT when a PING is not answered in time', async () => {
    const closed = new Promise<TunnelError | undefined>((resolve) => session.once('close', (err) => resolve(err as TunnelError | undefined)));
    clock.fireNext(); // PING sent
    clock.fireNext(); // its deadline passes before the ack is read
    const err = await closed;
    expect(err?.code).to.equal('TUNA_TUNNEL_TIMEOUT');
    expect(session.state).to.equal('closed');
    await waitUntil(() => (t.edge.registry.count().get(APP) ?? 0) === 0);
  });
});
