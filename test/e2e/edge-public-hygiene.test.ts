import { expect } from 'chai';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { EdgePublicLimits } from '../../src/edge/config.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { closedWithin, dial } from '../support/raw-sockets.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { h2, h2Connect, http1, openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

// An anonymous client must not exhaust the edge's file descriptors.

const APP = 'binding/host/app.test';

function openDescriptors(): number {
  return readdirSync('/proc/self/fd').length;
}

/** get sends one HTTP/1.1 request from `localAddress` and returns its status. */
async function get(port: number, localAddress: string): Promise<number> {
  const req = httpRequest({ host: '127.0.0.1', port, localAddress, path: '/', headers: { host: 'app.test' }, agent: false });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  res.resume();
  await once(res, 'end');
  return res.statusCode ?? 0;
}

describe('edge: public connection hygiene (first byte, headers, half-close, limits)', function () {
  this.timeout(60_000);
  let t: TestEdge;
  let session: TunnelSession;
  const held: Socket[] = [];

  async function start(publicLimits: EdgePublicLimits, withHttps = false): Promise<void> {
    const listen = { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 }, ...(withHttps ? { https: { host: '127.0.0.1', port: 0 } } : {}) };
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }], { listen, limits: { tunnelWaitMs: 0, public: publicLimits } });
    session = await openSession(t, APP, new TestStreamHandler());
  }

  afterEach(async () => {
    for (const s of held.splice(0)) s.destroy();
    session?.destroy();
    await t?.edge.close();
  });

  it('returns the descriptor count to its baseline after 3,000 abandoned connections (silent, part of the h2 preface, part of a header)', async () => {
    await start({ maxConnections: 5000, maxConnectionsPerAddress: 5000, firstByteTimeoutMs: 60_000, headersTimeoutMs: 60_000 });
    const baseline = openDescriptors();
    const total = 3000;
    const sockets: Socket[] = [];
    for (let i = 0; i < total; i += 100) {
      const batch = await Promise.all(Array.from({ length: 100 }, () => dial(t.httpPort)));
      for (const [j, s] of batch.entries()) {
        if ((i + j) % 3 === 1) s.write('PRI * HTTP/2.0\r\n');
        if ((i + j) % 3 === 2) s.write('GET / HTTP/1.1\r\nHost: app.test\r\n');
      }
      sockets.push(...batch);
    }
    await waitUntil(() => t.edge.metrics.publicConnections >= total, 20_000);
    const peak = openDescriptors();
    for (const s of sockets) s.destroy();
    let after = openDescriptors();
    // a descriptor is closed before its socket's 'close' event runs (which lowers the gauge), so wait for both
    for (let i = 0; i < 200 && (after > baseline + 5 || t.edge.metrics.publicConnectionsOpen !== 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = openDescriptors();
    }
    console.log(`      descriptors: baseline ${baseline}, peak ${peak}, after ${after}`);
    expect(peak).to.be.greaterThan(baseline + total);
    expect(after).to.be.at.most(baseline + 5);
  });

  it('opens and abandons 20,000 connections in waves past the global limit: the excess refused at accept, every one closed, descriptors back to baseline, the edge still serving', async function () {
    this.timeout(180_000);
    // first-byte and header deadlines far away: what closes these is the client's FIN, or the limit
    await start({ maxConnections: 1500, maxConnectionsPerAddress: 2000, firstByteTimeoutMs: 120_000, headersTimeoutMs: 120_000 });
    const baseline = openDescriptors();
    const waves = 10;
    const perWave = 2000;
    let peak = baseline;
    let maxOpen = 0;
    for (let w = 0; w < waves; w++) {
      const wave: Socket[] = [];
      for (let i = 0; i < perWave; i += 200) wave.push(...(await Promise.all(Array.from({ length: 200 }, () => dial(t.httpPort)))));
      peak = Math.max(peak, openDescriptors());
      maxOpen = Math.max(maxOpen, t.edge.metrics.publicConnectionsOpen);
      // abandon them as a descriptor-exhausting attacker would: nothing, part of the h2 preface or part of a header, then a FIN
      const closed = wave.map((socket) => closedWithin(socket, 60_000));
      for (const [i, socket] of wave.entries()) socket.end(i % 3 === 0 ? '' : i % 3 === 1 ? 'PRI * HTTP/2.0\r\n' : 'GET / HTTP/1.1\r\nHost: app.test\r\n');
      const results = await Promise.all(closed);
      expect(results.filter((r) => !r.closed), `wave ${w}: connections the edge never closed`).to.have.length(0);
    }
    let after = openDescriptors();
    // a descriptor is closed before its socket's 'close' event runs (which lowers the gauge), so wait for both
    for (let i = 0; i < 200 && (after > baseline + 5 || t.edge.metrics.publicConnectionsOpen !== 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = openDescriptors();
    }
    const refused = t.edge.metrics.publicRefused('connection-limit');
    console.log(`      ${waves * perWave} connections: descriptors baseline ${baseline}, peak ${peak}, after ${after}; refused at accept ${refused}, most open ${maxOpen}`);
    expect(after).to.be.at.most(baseline + 5);
    // the rest of each wave waits in the kernel's accept backlog until slots free (then FIN, closed)
    expect(maxOpen, 'the edge holds at most maxConnections').to.equal(1500);
    expect(refused, 'the flood past maxConnections is refused at accept').to.be.greaterThan(0);
    expect(t.edge.metrics.publicConnectionsOpen).to.equal(0);
    expect(await get(t.httpPort, '127.0.0.6')).to.equal(200);
  });

  it('closes a silent connection after the first-byte timeout, and counts it', async () => {
    await start({ firstByteTimeoutMs: 200 });
    const socket = await dial(t.httpPort);
    held.push(socket);
    expect(await closedWithin(socket, 10_000)).to.deep.equal({ closed: true, bytes: 0 });
    expect(t.edge.metrics.publicTimeouts('first-byte')).to.equal(1);
    expect(await fetchMetrics(t)).to.include('tuna_edge_public_timeouts_total{phase="first-byte"} 1');
  });

  it('closes a connection whose HTTP/1.1 headers are not complete by the headers timeout', async () => {
    await start({ headersTimeoutMs: 300 });
    const socket = await dial(t.httpPort);
    held.push(socket);
    socket.write('GET / HTTP/1.1\r\nHost: app.test\r\nX-Slow: 1\r\n');
    expect((await closedWithin(socket, 10_000)).closed).to.equal(true);
    expect(t.edge.metrics.publicTimeouts('headers')).to.equal(1);
  });

  it('closes an idle HTTP/1.1 keep-alive connection and an idle HTTP/2 connection after the idle timeout', async () => {
    await start({ idleTimeoutMs: 300 });
    const socket = await dial(t.httpPort);
    held.push(socket);
    socket.write('GET / HTTP/1.1\r\nHost: app.test\r\n\r\n');
    const h1 = await closedWithin(socket, 10_000);
    expect(h1.closed).to.equal(true);
    expect(h1.bytes).to.be.greaterThan(0);
    const h2 = await dial(t.httpPort);
    held.push(h2);
    h2.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]));
    expect((await closedWithin(h2, 10_000)).closed).to.equal(true);
    expect(t.edge.metrics.publicTimeouts('idle')).to.equal(2);
  });

  it('keeps HTTP/1.1 and HTTP/2 connections whose response is quiet for longer than the idle timeout', async () => {
    await start({ idleTimeoutMs: 300 });
    expect((await http1(t.httpPort, 'app.test', '/slow?ms=1000')).status).to.equal(200);
    const client = h2Connect(t.httpPort);
    try {
      expect((await h2(client, { ':path': '/slow?ms=1000', ':authority': 'app.test' })).headers[':status']).to.equal(200);
    } finally {
      client.destroy();
    }
    expect(t.edge.metrics.publicTimeouts('idle')).to.equal(0);
  });

  it('closes a silent HTTPS connection after the first-byte timeout', async () => {
    await start({ firstByteTimeoutMs: 200 }, true);
    const socket = await dial(t.edge.address().https!.port);
    held.push(socket);
    expect(await closedWithin(socket, 5_000)).to.deep.equal({ closed: true, bytes: 0 });
    expect(t.edge.metrics.publicTimeouts('first-byte')).to.equal(1);
  });

  it('closes a connection that sends part of the HTTP/2 preface and then a FIN (no CLOSE-WAIT)', async () => {
    await start({});
    const socket = await dial(t.httpPort);
    held.push(socket);
    socket.end('PRI * HTTP/2.0\r\n');
    expect(await closedWithin(socket, 10_000)).to.deep.equal({ closed: true, bytes: 0 });
  });

  it('closes an HTTPS-sniffing connection that sends a FIN before its ClientHello', async () => {
    await start({}, true);
    const socket = await dial(t.edge.address().https!.port);
    held.push(socket);
    socket.end(Buffer.from([0x16, 0x03, 0x01]));
    // on a half-open socket the ClientHello reader would wait out its 10 s budget; the FIN closes it at once
    expect(await closedWithin(socket, 5_000)).to.deep.equal({ closed: true, bytes: 0 });
  });

  it('refuses a connection over the per-address limit at accept while another address is still served', async () => {
    await start({ maxConnectionsPerAddress: 5 });
    for (let i = 0; i < 5; i++) held.push(await dial(t.httpPort, '127.0.0.2'));
    await waitUntil(() => t.edge.metrics.publicConnections >= 5);
    const extra = await dial(t.httpPort, '127.0.0.2');
    held.push(extra);
    expect(await closedWithin(extra, 10_000)).to.deep.equal({ closed: true, bytes: 0 });
    expect(t.edge.metrics.publicRefused('address-limit')).to.equal(1);
    expect(await get(t.httpPort, '127.0.0.3')).to.equal(200);
    for (const s of held.slice(0, 5)) expect(s.destroyed).to.equal(false);
  });

  it('refuses connections over the global limit at accept and serves again once one closes', async () => {
    await start({ maxConnections: 3 });
    for (let i = 0; i < 3; i++) held.push(await dial(t.httpPort));
    await waitUntil(() => t.edge.metrics.publicConnections >= 3);
    const extra = await dial(t.httpPort, '127.0.0.4');
    held.push(extra);
    expect(await closedWithin(extra, 10_000)).to.deep.equal({ closed: true, bytes: 0 });
    expect(t.edge.metrics.publicRefused('connection-limit')).to.equal(1);
    held.shift()!.destroy();
    await waitUntil(() => t.edge.metrics.publicConnectionsOpen < 3);
    expect(await get(t.httpPort, '127.0.0.5')).to.equal(200);
    expect(await fetchMetrics(t)).to.match(/tuna_edge_public_connections_refused_total\{reason="connection-limit"\} 1/);
  });
});

async function fetchMetrics(t: TestEdge): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${t.edge.address().tunnel.port}/metrics`);
  return res.text();
}
