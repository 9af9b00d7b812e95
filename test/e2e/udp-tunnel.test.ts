import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import type { Socket as DgramSocket } from 'node:dgram';
import { once } from 'node:events';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { udpTarget } from '../../src/cli/quick-graph.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { UdpLimits } from '../../src/edge/fronts/udp-front.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { frameDatagram } from '../../src/wire/index.js';
import type { TunnelStreamContext, TunnelStreamHandler } from '../../src/wire/index.js';
import { openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

// UDP through the tunnel (docs/protocol.md §4.6): the edge's UDP socket, one CONNECT stream per
// flow, the agent's data plane and a UDP echo server, all on loopback.

const BINDING = 'binding/tcp-port/dns';

/** EchoServer answers every datagram with itself and remembers which source ports it saw. */
interface EchoServer {
  socket: DgramSocket;
  port: number;
  sources: Set<number>;
}

async function startEcho(): Promise<EchoServer> {
  const socket = createSocket('udp4');
  const sources = new Set<number>();
  socket.on('message', (msg, remote) => {
    sources.add(remote.port);
    socket.send(msg, remote.port, remote.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return { socket, port: socket.address().port, sources };
}

/** Client is a public UDP client socket that records what it receives. */
class Client {
  readonly received: Buffer[] = [];
  constructor(readonly socket: DgramSocket) {
    socket.on('message', (msg: Buffer) => this.received.push(msg));
  }

  static async open(): Promise<Client> {
    const socket = createSocket('udp4');
    socket.bind(0, '127.0.0.1');
    await once(socket, 'listening');
    return new Client(socket);
  }

  send(port: number, payload: Buffer | string): Promise<void> {
    return new Promise((resolve, reject) => this.socket.send(typeof payload === 'string' ? Buffer.from(payload) : payload, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
  }

  /** waitFor waits (bounded) until `n` datagrams arrived in all. */
  async waitFor(n: number, timeoutMs = 5000): Promise<Buffer[]> {
    await waitUntil(() => this.received.length >= n, timeoutMs);
    return this.received;
  }
}

function payload(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i++) out[i] = (i + seed * 7) & 0xff;
  return out;
}

/** pause waits a bounded time in which something must NOT happen. */
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('UDP flows through the tunnel', function () {
  this.timeout(30_000);
  let t: TestEdge | undefined;
  let session: TunnelSession | undefined;
  let echo: EchoServer | undefined;
  const clients: Client[] = [];

  async function start(udp: Partial<UdpLimits>, handler?: (dp: DataPlane) => TunnelStreamHandler, agentIdleMs?: number): Promise<number> {
    echo = await startEcho();
    t = await startTestEdge([{ id: BINDING, kind: 'tcp-port', port: 0, transports: ['udp'] }], { limits: { tunnelWaitMs: 500, udp } });
    const quick = udpTarget({ address: '127.0.0.1', port: echo.port }, 0, BINDING);
    const endpoints = new StaticEndpointResolver();
    endpoints.set(quick.service.namespace, quick.service.name, quick.service.portName, [quick.service.endpoint]);
    const dp = new DataPlane({ endpoints, ...(agentIdleMs !== undefined ? { udpIdleTimeoutMs: agentIdleMs } : {}) });
    dp.update(quick.graph);
    session = await openSession(t, BINDING, handler?.(dp) ?? dp);
    return t.edge.address().udp.get(BINDING)![0]!.port;
  }

  async function client(): Promise<Client> {
    const c = await Client.open();
    clients.push(c);
    return c;
  }

  afterEach(async () => {
    for (const c of clients.splice(0)) c.socket.close();
    session?.destroy();
    await t?.edge.close();
    echo?.socket.close();
    t = undefined;
    session = undefined;
    echo = undefined;
  });

  it('echoes 100 datagrams of assorted sizes in order on one flow, zero-length and 65,507 bytes included', async () => {
    const port = await start({});
    const c = await client();
    const sizes = Array.from({ length: 100 }, (_, i) => (i === 0 ? 0 : i === 50 ? 65_507 : (i * 797) % 9000));
    const sent = sizes.map((n, i) => payload(n, i));
    // bursts of 10: loopback socket buffers hold a burst, and order within and across bursts is checked
    for (let burst = 0; burst < 10; burst++) {
      for (const d of sent.slice(burst * 10, burst * 10 + 10)) await c.send(port, d);
      await c.waitFor(burst * 10 + 10);
    }
    expect(c.received.map((d) => d.length)).to.deep.equal(sizes);
    c.received.forEach((d, i) => expect(d.equals(sent[i]!), `datagram ${i}`).to.equal(true));
    expect(t!.edge.metrics.udpFlowsTotal).to.equal(1);
    expect(echo!.sources.size).to.equal(1);
  });

  it('keeps two client sockets apart as two flows, each with its own backend socket', async () => {
    const port = await start({});
    const [a, b] = [await client(), await client()];
    for (let i = 0; i < 5; i++) {
      await a.send(port, `a${i}`);
      await b.send(port, `b${i}`);
    }
    await a.waitFor(5);
    await b.waitFor(5);
    expect(a.received.map(String)).to.deep.equal(['a0', 'a1', 'a2', 'a3', 'a4']);
    expect(b.received.map(String)).to.deep.equal(['b0', 'b1', 'b2', 'b3', 'b4']);
    expect(t!.edge.metrics.udpFlowsTotal).to.equal(2);
    expect(t!.edge.metrics.udpFlowsActive).to.equal(2);
    expect(echo!.sources.size).to.equal(2);
  });

  it('closes an idle flow at the edge after its configured timeout; the next datagram opens a new flow', async () => {
    const port = await start({ idleTimeoutMs: 300 });
    const c = await client();
    await c.send(port, 'one');
    await c.waitFor(1);
    await waitUntil(() => t!.edge.metrics.udpFlowEnds('idle') === 1);
    expect(t!.edge.metrics.udpFlowsActive).to.equal(0);
    await c.send(port, 'two');
    await c.waitFor(2);
    expect(c.received.map(String)).to.deep.equal(['one', 'two']);
    expect(t!.edge.metrics.udpFlowsTotal).to.equal(2);
    // the agent closed the first flow's socket with its stream: the second came from another port
    expect(echo!.sources.size).to.equal(2);
  });

  it('closes an idle flow at the agent after its configured timeout', async () => {
    const port = await start({ idleTimeoutMs: 60_000 }, undefined, 300);
    const c = await client();
    await c.send(port, 'one');
    await c.waitFor(1);
    await waitUntil(() => t!.edge.metrics.udpFlowEnds('agent-end') === 1);
    expect(t!.edge.metrics.udpFlowsActive).to.equal(0);
  });

  it('drops and counts the datagrams of flows beyond the per-binding limit, and serves the others', async () => {
    const port = await start({ maxFlowsPerBinding: 2 });
    const [a, b, c] = [await client(), await client(), await client()];
    await a.send(port, 'a');
    await b.send(port, 'b');
    await a.waitFor(1);
    await b.waitFor(1);
    for (let i = 0; i < 3; i++) await c.send(port, `c${i}`);
    await waitUntil(() => t!.edge.metrics.udpDrops('binding-flow-limit') === 3);
    await pause(200);
    expect(c.received).to.have.length(0);
    expect(t!.edge.metrics.udpFlowsTotal).to.equal(2);
    await a.send(port, 'a again');
    await a.waitFor(2);
  });

  it('drops and counts the datagrams of a client address past its flow limit', async () => {
    const port = await start({ maxFlowsPerAddress: 1 });
    const [a, b] = [await client(), await client()];
    await a.send(port, 'a');
    await a.waitFor(1);
    await b.send(port, 'b');
    await waitUntil(() => t!.edge.metrics.udpDrops('address-flow-limit') === 1);
    await pause(200);
    expect(b.received).to.have.length(0);
  });

  it('sends no flow to an agent that did not name udp, and counts the datagrams it dropped', async () => {
    const streams: IncomingHttpHeaders[] = [];
    const port = await start({}, (dp) => ({ handleStream: (s: ServerHttp2Stream, h: IncomingHttpHeaders, ctx: TunnelStreamContext) => (streams.push(h), dp.handleStream(s, h, ctx)) }));
    const c = await client();
    await c.send(port, 'lost');
    await waitUntil(() => t!.edge.metrics.udpDrops('no-udp-agent') === 1);
    expect(streams).to.have.length(0);
    expect(t!.edge.metrics.udpFlowEnds('no-udp-agent')).to.equal(1);
  });

  it('ends only the flow whose stream carries a malformed length; the tunnel and other flows carry on', async () => {
    let isFirst = true;
    const port = await start({}, (dp) => ({
      acceptsUdp: true,
      handleStream: (s: ServerHttp2Stream, h: IncomingHttpHeaders, ctx: TunnelStreamContext) => {
        if (!isFirst) return dp.handleStream(s, h, ctx);
        isFirst = false;
        s.on('error', () => undefined);
        s.respond({ ':status': 200 });
        s.write(Buffer.concat([frameDatagram(Buffer.from('fine')), Buffer.from([0xff, 0xff])]));
      },
    }));
    const [bad, good] = [await client(), await client()];
    await bad.send(port, 'x');
    await waitUntil(() => t!.edge.metrics.udpFlowEnds('malformed') === 1);
    // the datagram before the bad length was sent before the flow ended; its 'message' event may
    // come a turn after the count above, so wait for it (waitFor fails when it never comes)
    await bad.waitFor(1);
    expect(bad.received.map(String)).to.deep.equal(['fine']);
    await good.send(port, 'still here');
    await good.waitFor(1);
    expect(good.received.map(String)).to.deep.equal(['still here']);
    expect(t!.edge.registry.count().get(BINDING)).to.equal(1);
  });

  it('serves a udp port of a dedicated address beside a TCP listener on the same number', async () => {
    echo = await startEcho();
    const probe = createSocket('udp4');
    probe.bind(0, '127.77.0.53');
    await once(probe, 'listening');
    const port = probe.address().port;
    await new Promise<void>((r) => probe.close(() => r()));
    const id = 'binding/address/127.77.0.53';
    const ports = [{ port, protocol: 'tcp' as const }, { port, protocol: 'udp' as const }];
    t = await startTestEdge([{ id, kind: 'address', address: '127.77.0.53', ports }], { limits: { tunnelWaitMs: 500 } });
    const quick = udpTarget({ address: '127.0.0.1', port: echo.port }, port, id);
    const endpoints = new StaticEndpointResolver();
    endpoints.set(quick.service.namespace, quick.service.name, quick.service.portName, [quick.service.endpoint]);
    const dp = new DataPlane({ endpoints });
    dp.update(quick.graph);
    session = await openSession(t, id, dp);
    expect(t.edge.address().udp.get(id)?.map((a) => `${a.address}:${a.port}`)).to.deep.equal([`127.77.0.53:${port}`]);
    expect(t.edge.address().bindings.get(id)?.map((a) => a.port)).to.deep.equal([port]);
    const c = await client();
    await new Promise<void>((resolve, reject) => c.socket.send('to the address', port, '127.77.0.53', (err) => (err ? reject(err) : resolve())));
    await c.waitFor(1);
    expect(c.received.map(String)).to.deep.equal(['to the address']);
  });

  it('drops and counts a flow whose binding has no tunnel, without waiting longer than tunnelWaitMs', async () => {
    const port = await start({});
    session!.destroy();
    await waitUntil(() => (t!.edge.registry.count().get(BINDING) ?? 0) === 0);
    const c = await client();
    await c.send(port, 'nobody');
    await c.send(port, 'home');
    await waitUntil(() => t!.edge.metrics.udpDrops('no-tunnel') === 2, 3000);
    expect(t!.edge.metrics.udpFlowsActive).to.equal(0);
  });
});
