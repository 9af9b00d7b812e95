import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { EdgeConfigFile } from '../../src/edge/config.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { closedWithin, dial } from '../support/raw-sockets.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

// On the tunnel listener (tunnel upgrades and the control API share it):
// the public listeners' deadlines and connection limits, and no deadline on a granted tunnel.

const APP = 'binding/host/app.test';
type TunnelListenerLimits = NonNullable<NonNullable<EdgeConfigFile['limits']>['tunnelListener']>;

describe('edge: tunnel listener hygiene (first byte, TLS handshake and upgrade head, idle, limits)', function () {
  this.timeout(60_000);
  let t: TestEdge | undefined;
  const sessions: TunnelSession[] = [];
  const held: Socket[] = [];

  async function start(tunnelListener: TunnelListenerLimits, tls?: ReturnType<typeof selfSignedCertificate>): Promise<TestEdge> {
    const tunnel = { host: '127.0.0.1', port: 0, ...(tls !== undefined ? { tls } : {}) };
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'], maxConnections: 10 }], {
      listen: { tunnel, http: { host: '127.0.0.1', port: 0 } },
      limits: { tunnelWaitMs: 0, tunnelListener },
    });
    if (tls !== undefined) t.endpoint = { ...t.endpoint, tls: true, servername: 'edge.tunnel.test', ca: tls.cert };
    return t;
  }

  afterEach(async () => {
    for (const s of held.splice(0)) s.destroy();
    for (const s of sessions.splice(0)) s.destroy();
    await t?.edge.close();
    t = undefined;
  });

  it('returns the descriptor count to its baseline after 1,500 abandoned connections (silent, part of an upgrade head, idle keep-alive)', async () => {
    const edge = await start({ maxConnectionsPerAddress: 5000 });
    const descriptors = (): number => readdirSync('/proc/self/fd').length;
    const baseline = descriptors();
    const sockets: Socket[] = [];
    for (let i = 0; i < 1500; i += 100) {
      const batch = await Promise.all(Array.from({ length: 100 }, () => dial(edge.endpoint.port)));
      for (const [j, s] of batch.entries()) {
        if ((i + j) % 3 === 1) s.write('GET /.tuna/v1/tunnel HTTP/1.1\r\nUpgrade: tuna-tunnel/1\r\n');
        if ((i + j) % 3 === 2) s.write('GET /healthz HTTP/1.1\r\nHost: edge\r\n\r\n');
      }
      sockets.push(...batch);
    }
    await waitUntil(() => edge.edge.metrics.tunnelListenerOpen >= 1500, 20_000);
    const peak = descriptors();
    for (const s of sockets) s.destroy();
    let after = descriptors();
    // a descriptor is closed before its socket's 'close' event runs (which lowers the gauge), so wait for both
    for (let i = 0; i < 200 && (after > baseline + 5 || edge.edge.metrics.tunnelListenerOpen !== 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = descriptors();
    }
    console.log(`      descriptors: baseline ${baseline}, peak ${peak}, after ${after}`);
    expect(peak).to.be.greaterThan(baseline + 1500);
    expect(after).to.be.at.most(baseline + 5);
    expect(edge.edge.metrics.tunnelListenerOpen).to.equal(0);
  });

  it('closes a silent connection after the first-byte timeout and counts it', async () => {
    const edge = await start({ firstByteTimeoutMs: 200 });
    const socket = await dial(edge.endpoint.port);
    held.push(socket);
    expect(await closedWithin(socket, 10_000)).to.deep.equal({ closed: true, bytes: 0 });
    expect(edge.edge.metrics.tunnelListenerCloses('first-byte')).to.equal(1);
    expect(await edge.edge.metrics.render(edge.edge.registry)).to.include('tuna_edge_tunnel_listener_closed_total{cause="first-byte"} 1');
  });

  it('closes a connection whose upgrade request head is not complete by the headers timeout', async () => {
    const edge = await start({ headersTimeoutMs: 300 });
    const socket = await dial(edge.endpoint.port);
    held.push(socket);
    socket.write('GET /tuna/v1/tunnel HTTP/1.1\r\nHost: edge\r\nUpgrade: tuna-tunnel\r\n');
    expect((await closedWithin(socket, 10_000)).closed).to.equal(true);
    expect(edge.edge.metrics.tunnelListenerCloses('headers')).to.equal(1);
  });

  it('closes a TLS connection that sends nothing, and one whose handshake stops after part of a ClientHello', async () => {
    const edge = await start({ firstByteTimeoutMs: 200, headersTimeoutMs: 400 }, selfSignedCertificate(['edge.tunnel.test']));
    const silent = await dial(edge.endpoint.port);
    const partial = await dial(edge.endpoint.port);
    held.push(silent, partial);
    partial.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
    const [a, b] = await Promise.all([closedWithin(silent, 10_000), closedWithin(partial, 10_000)]);
    expect([a.closed, b.closed]).to.deep.equal([true, true]);
    expect(edge.edge.metrics.tunnelListenerCloses('first-byte')).to.equal(1);
    expect(edge.edge.metrics.tunnelListenerCloses('headers')).to.equal(1);
    // and the listener still grants tunnels over TLS
    sessions.push(await openSession(edge, APP, new TestStreamHandler()));
    expect((await http1(edge.httpPort, 'app.test', '/')).status).to.equal(200);
  });

  it('closes a connection that sends a FIN before its first byte (no CLOSE-WAIT)', async () => {
    const edge = await start({});
    const socket = await dial(edge.endpoint.port);
    held.push(socket);
    socket.end();
    // the first-byte deadline is 10 s; the FIN closes it at once
    expect(await closedWithin(socket, 5_000)).to.deep.equal({ closed: true, bytes: 0 });
  });

  it('closes an idle control API keep-alive connection after the idle timeout', async () => {
    const edge = await start({ idleTimeoutMs: 300 });
    const socket = await dial(edge.endpoint.port);
    held.push(socket);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.write('GET /healthz HTTP/1.1\r\nHost: edge\r\n\r\n');
    // raw, since Node's client would itself drop a socket whose keep-alive hint rounds to timeout=0;
    // the bound lies below Node's default keepAliveTimeout (5 s), which the listener had before
    expect((await closedWithin(socket, 3_000)).closed).to.equal(true);
    expect(answer).to.match(/^HTTP\/1\.1 200 /);
    expect(answer).to.match(/connection: keep-alive/i);
  });

  it('keeps a granted tunnel past the headers and idle deadlines (its liveness is PING)', async () => {
    const edge = await start({ firstByteTimeoutMs: 200, headersTimeoutMs: 200, idleTimeoutMs: 200 });
    sessions.push(await openSession(edge, APP, new TestStreamHandler()));
    // several deadlines' worth of a quiet tunnel (a bound to wait, not a timing assertion)
    await new Promise((r) => setTimeout(r, 1_000));
    expect(edge.edge.registry.count().get(APP)).to.equal(1);
    expect((await http1(edge.httpPort, 'app.test', '/')).status).to.equal(200);
    expect(edge.edge.metrics.tunnelListenerCloses('headers') + edge.edge.metrics.tunnelListenerCloses('idle')).to.equal(0);
  });

  it('refuses connections over the per-address limit at accept while an agent from another address still connects', async () => {
    const edge = await start({ maxConnectionsPerAddress: 5 });
    for (let i = 0; i < 5; i++) held.push(await dial(edge.endpoint.port, '127.0.0.2'));
    await waitUntil(() => edge.edge.metrics.tunnelListenerOpen >= 5);
    const extra = await dial(edge.endpoint.port, '127.0.0.2');
    held.push(extra);
    expect(await closedWithin(extra, 10_000)).to.deep.equal({ closed: true, bytes: 0 });
    expect(edge.edge.metrics.tunnelListenerCloses('address-limit')).to.equal(1);
    sessions.push(await openSession(edge, APP, new TestStreamHandler()));
    expect((await http1(edge.httpPort, 'app.test', '/')).status).to.equal(200);
    for (const s of held.slice(0, 5)) expect(s.destroyed).to.equal(false);
  });

  it('refuses connections over the global limit at accept and accepts again once one closes', async () => {
    const edge = await start({ maxConnections: 3 });
    for (let i = 0; i < 3; i++) held.push(await dial(edge.endpoint.port, `127.0.0.${10 + i}`));
    await waitUntil(() => edge.edge.metrics.tunnelListenerOpen >= 3);
    const extra = await dial(edge.endpoint.port, '127.0.0.20');
    held.push(extra);
    expect(await closedWithin(extra, 10_000)).to.deep.equal({ closed: true, bytes: 0 });
    expect(edge.edge.metrics.tunnelListenerCloses('connection-limit')).to.equal(1);
    held.shift()!.destroy();
    await waitUntil(() => edge.edge.metrics.tunnelListenerOpen < 3);
    sessions.push(await openSession(edge, APP, new TestStreamHandler()));
    expect((await http1(edge.httpPort, 'app.test', '/')).status).to.equal(200);
  });
});
