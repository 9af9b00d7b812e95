import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect as connectH2 } from 'node:http2';
import type { ClientHttp2Session, IncomingHttpHeaders } from 'node:http2';
import { connect } from 'node:net';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { BINDING, hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { openSession, startTestEdge } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

// One client cannot starve a binding's other clients. The
// agent's data plane (the real one) pools 256 sockets per backend; a greedy client holding 300
// slow requests used to take all 256 and queue everyone else behind them.

const GREEDY = 300;
const POLITE = 10;

function h2From(port: number, localAddress: string): ClientHttp2Session {
  const session = connectH2(`http://127.0.0.1:${port}`, {
    createConnection: () => connect({ host: '127.0.0.1', port, localAddress }),
  });
  session.on('error', () => undefined);
  return session;
}

/** h2Status sends one GET on the session and resolves with its status once the answer has ended. */
function h2Status(session: ClientHttp2Session, path: string): Promise<number> {
  return new Promise((resolve) => {
    const stream = session.request({ ':authority': 'app.test', ':path': path });
    stream.on('error', () => resolve(0));
    let status = 0;
    stream.on('response', (headers: IncomingHttpHeaders) => (status = Number(headers[':status'])));
    stream.resume();
    stream.on('end', () => resolve(status));
    stream.end();
  });
}

function http1Status(port: number, localAddress: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, localAddress, path, headers: { host: 'app.test' }, agent: false }, (res: IncomingMessage) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end();
  });
}

/** bounded resolves with the promise's value, or 'unanswered' after `ms` (a bound, not a timing assertion). */
function bounded<T>(promise: Promise<T>, ms: number): Promise<T | 'unanswered'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('unanswered'), ms);
    void promise.then((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

describe('edge: per-client fairness between the clients of one binding', function () {
  this.timeout(60_000);
  let backend: TestBackend;
  let plane: DataPlane;
  let t: TestEdge;
  let session: TunnelSession;
  const greedySessions: ClientHttp2Session[] = [];
  const held: ServerResponse[] = [];

  beforeEach(async () => {
    // /slow requests are held until the test lets them go; anything else is answered at once.
    backend = await startHttpBackend('app', (req, res) => {
      req.resume();
      if (req.url === '/slow') held.push(res);
      else res.end('ok');
    });
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'app', 'http', [{ address: '127.0.0.1', port: backend.port }]);
    plane = new DataPlane({ endpoints });
    plane.update(hostGraph([{ hostname: 'app.test', routes: [httpRoute('app', [serviceBackend('app')])] }]));
    t = await startTestEdge([{ id: BINDING, kind: 'host', hostnames: ['app.test'] }], { limits: { tunnelWaitMs: 2000 } });
    session = await openSession(t, BINDING, plane);
  });

  afterEach(async () => {
    for (const res of held.splice(0)) res.end('late');
    for (const s of greedySessions.splice(0)) s.destroy();
    session.destroy();
    await t.edge.close();
    plane.close();
    await backend.close();
  });

  it('answers a greedy client past its cap with 429 while another client\'s requests all succeed', async () => {
    // 300 slow requests from 127.0.0.2 on two HTTP/2 connections (250 streams each at most)
    greedySessions.push(h2From(t.httpPort, '127.0.0.2'), h2From(t.httpPort, '127.0.0.2'));
    const greedy = Array.from({ length: GREEDY }, (_, i) => h2Status(greedySessions[i % 2]!, '/slow'));
    // the edge's default cap: 128 in flight per client address and binding
    // (before the cap, 256 of them reached the backend, filling the agent's pool, and 44 queued in the agent)
    // (prom-client renders the exposition asynchronously: a bounded loop of 20 s in place of waitUntil)
    for (let i = 0; i < 2000 && held.length + (await countRequests(t, 429)) < 256; i++) await new Promise((r) => setTimeout(r, 10));
    expect(held.length + (await countRequests(t, 429))).to.be.at.least(256);
    // another client of the same binding, from 127.0.0.3, still gets every answer
    const polite = await bounded(Promise.all(Array.from({ length: POLITE }, () => http1Status(t.httpPort, '127.0.0.3', '/fast'))), 15_000);
    expect(polite).to.deep.equal(Array(POLITE).fill(200));
    expect(held.length).to.equal(128);
    for (const res of held.splice(0)) res.end('done');
    const statuses = await Promise.all(greedy);
    expect(statuses.filter((s) => s === 200)).to.have.length(128);
    expect(statuses.filter((s) => s === 429)).to.have.length(GREEDY - 128);
    // the slots came back: the greedy client is served again
    expect(await h2Status(greedySessions[0]!, '/fast')).to.equal(200);
  });
});

async function countRequests(t: TestEdge, status: number): Promise<number> {
  const line = (await t.edge.metrics.render(t.edge.registry)).split('\n').find((l) => l.startsWith(`tuna_edge_requests_total{code="${status}"}`));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}
