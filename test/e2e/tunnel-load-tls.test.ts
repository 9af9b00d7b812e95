import { expect } from 'chai';
import { Agent } from 'node:http';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { fetchStatus, loadThenLeave } from '../support/public-load.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const APP = 'binding/host/app.test';

describe('tunnel: concurrent keep-alive load through a TLS tunnel', () => {
  const tunnelCert = selfSignedCertificate(['edge.tunnel.test']);
  let t: TestEdge;
  let sessions: TunnelSession[];
  let agent: Agent;

  beforeEach(async () => {
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }], {
      listen: { tunnel: { host: '127.0.0.1', port: 0, tls: tunnelCert }, http: { host: '127.0.0.1', port: 0 } },
      limits: { tunnelWaitMs: 0 },
    });
    t.endpoint = { ...t.endpoint, tls: true, servername: 'edge.tunnel.test', ca: tunnelCert.cert };
    sessions = [await openSession(t, APP, new TestStreamHandler()), await openSession(t, APP, new TestStreamHandler())];
    agent = new Agent({ keepAlive: true, maxSockets: 32 });
  });

  afterEach(async () => {
    agent.destroy();
    for (const s of sessions) s.destroy();
    await t.edge.close();
  });

  it('answers every request of 32 keep-alive connections with 200', async () => {
    const statuses = await Promise.all(Array.from({ length: 640 }, (_, i) => fetchStatus(t.httpPort, i % 2 === 0 ? '/' : '/bytes?n=4096', agent)));
    expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
    expect(agent.sockets['127.0.0.1:' + String(t.httpPort) + ':']?.length ?? 0).to.be.at.most(32);
  });

  it('stays up when clients leave with responses in flight, and serves the next requests', async () => {
    // answers that arrive after their client left: the relay must drop them, not throw.
    for (const path of ['/bytes?n=1024', '/slow?ms=2', '/bytes?n=65536'])
      for (let round = 0; round < 3; round++) expect(await loadThenLeave(t.httpPort, path, 64, 400)).to.not.include(502);
    const statuses = await Promise.all(Array.from({ length: 320 }, () => fetchStatus(t.httpPort, '/bytes?n=1024', agent)));
    expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(200);
  });

  it('frees every tunnel stream of the clients that left, so a draining tunnel has nothing to wait for', async () => {
    // An answer that arrived whole (END_STREAM) just as its client left used to stay buffered in
    // a closed, never-read tunnel stream: Node frees such a stream only once it is read to its
    // end, so the tunnel connection held it open and `tuna http` waited out its drain timeout.
    for (let round = 0; round < 4; round++) await loadThenLeave(t.httpPort, '/bytes?n=1024', 64, 300);
    // Bounded wait for the last cancels to cross the tunnel; a leaked stream never comes back.
    await waitUntil(() => t.edge.metrics.streamsActive === 0, 10_000).catch(() => undefined);
    expect(t.edge.metrics.streamsActive).to.equal(0);
  });
});
