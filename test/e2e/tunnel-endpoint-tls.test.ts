import { expect } from 'chai';
import type { TLSSocket } from 'node:tls';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import type { TunnelError } from '../../src/tunnel/errors.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';
import { newTestManager } from '../support/tunnel-manager-fixture.js';

const APP = 'binding/host/app.test';

describe('tunnel: TLS tunnel endpoint, revocation and agent shutdown', () => {
  const tunnelCert = selfSignedCertificate(['edge.tunnel.test']);
  let t: TestEdge;
  let sessions: TunnelSession[];

  beforeEach(async () => {
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }], {
      listen: { tunnel: { host: '127.0.0.1', port: 0, tls: tunnelCert }, http: { host: '127.0.0.1', port: 0 } },
      limits: { tunnelWaitMs: 0 },
    });
    t.endpoint = { ...t.endpoint, tls: true, servername: 'edge.tunnel.test', ca: tunnelCert.cert };
    sessions = [];
  });

  afterEach(async () => {
    for (const s of sessions) s.destroy();
    await t.edge.close();
  });

  it('upgrades over TLS, verifying the edge certificate, and serves requests', async () => {
    sessions.push(await openSession(t, APP, new TestStreamHandler()));
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(200);
  });

  it('fails with TUNA_EDGE_UNREACHABLE when the edge certificate is not trusted', async () => {
    const err = await openSession(t, APP, new TestStreamHandler(), { edge: { ...t.endpoint, ca: undefined } }).then(
      () => undefined,
      (e: TunnelError) => e,
    );
    expect(err?.code).to.equal('TUNA_EDGE_UNREACHABLE');
  });

  it('dials every connection with one shared TLS context per set of trust anchors, still verifying each', async () => {
    const dialer = new NetEdgeDialer();
    const signal = new AbortController().signal;
    const sockets = await Promise.all([0, 1, 2].map(() => dialer.dial(t.endpoint, signal)));
    try {
      expect(sockets.map((s) => (s as TLSSocket).authorized)).to.deep.equal([true, true, true]);
      expect(dialer.secureContextCount).to.equal(1);
      const stranger = selfSignedCertificate(['edge.tunnel.test']);
      const refused = await dialer.dial({ ...t.endpoint, ca: stranger.cert }, signal).then(
        (s) => (s.destroy(), undefined),
        (e: TunnelError) => e,
      );
      expect(refused?.code).to.equal('TUNA_EDGE_UNREACHABLE');
      expect(dialer.secureContextCount).to.equal(2);
      const again = await dialer.dial(t.endpoint, signal);
      sockets.push(again);
      expect(dialer.secureContextCount).to.equal(2);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('drains the connections of a revoked key', async () => {
    const session = await openSession(t, APP, new TestStreamHandler());
    sessions.push(session);
    await t.edge.closeTunnels((tunnel) => tunnel.bindingId === APP);
    await session.closed();
    expect(t.edge.registry.count().get(APP) ?? 0).to.equal(0);
  });

  it('lets in-flight requests finish when the tunnel manager closes', async () => {
    const handler = new TestStreamHandler();
    const manager = newTestManager(handler, new Map([['k', t.keys.get(APP)!]]));
    try {
      manager.apply([{ bindingId: APP, edges: [t.endpoint], connections: 2, keyRef: 'k' }]);
      await waitUntil(() => t.edge.registry.count().get(APP) === 2);
      const inFlight = Array.from({ length: 6 }, (_, i) => http1(t.httpPort, 'app.test', `/slow?ms=300&i=${i}`));
      await waitUntil(() => handler.seen.length === 6);
      await manager.close();
      expect((await Promise.all(inFlight)).map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
      expect(manager.sessions()).to.have.length(0);
    } finally {
      manager.destroy();
    }
  });
});
