import { expect } from 'chai';
import { Agent, request as httpRequest } from 'node:http';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, openSession, startTestEdge } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const APP = 'binding/host/app.test';

/** fetchStatus sends one keep-alive GET and resolves with its status after reading the whole body. */
function fetchStatus(port: number, path: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host: 'app.test' }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * loadThenLeave keeps `connections` keep-alive connections busy and, after `answers` responses,
 * destroys them all with their requests in flight, the way wrk ends a run: the tunnel's late
 * responses then meet public responses that are already closed. Resolves with the statuses seen.
 */
async function loadThenLeave(port: number, path: string, connections: number, answers: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const statuses: number[] = [];
  const worker = async (): Promise<void> => {
    while (statuses.length < answers) {
      const status = await fetchStatus(port, path, agent).catch(() => undefined);
      if (status === undefined) return;
      statuses.push(status);
      if (statuses.length >= answers) agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  agent.destroy();
  return statuses;
}

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
});
