import { expect } from 'chai';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { attack } from '../support/attack-log.js';
import { FRAME, frame, writeAll } from '../support/h2-frames.js';
import { STATUS_200, literalField, openHostileAgent } from '../support/hostile-agent.js';
import type { HostileAgent } from '../support/hostile-agent.js';
import { requestsWhile } from '../support/public-load.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

// A hostile agent holds a valid tunnel key for its own binding and speaks raw HTTP/2 on the tunnel:
// floods, illegal frames, endless header blocks, a stream it never reads. The edge and another
// tenant's binding must not notice (docs/security.md "Attack suite").

const GOOD = 'binding/host/good.test';
const EVIL = 'binding/host/evil.test';
const FLOOD = 100_000;
const PER_CHUNK = 1000;

describe('attack: a hostile agent on the tunnel', function () {
  this.timeout(60_000);
  let t: TestEdge;
  let good: TunnelSession;
  const agents: HostileAgent[] = [];

  beforeEach(async () => {
    t = await startTestEdge(
      [
        { id: GOOD, kind: 'host', hostnames: ['good.test'] },
        { id: EVIL, kind: 'host', hostnames: ['evil.test'], maxConnections: 20 },
      ],
      { limits: { tunnelWaitMs: 0 } },
    );
    good = await openSession(t, GOOD, new TestStreamHandler());
  });

  afterEach(async () => {
    for (const a of agents.splice(0)) a.socket.destroy();
    good.destroy();
    await t.edge.close();
  });

  async function hostile(settings: [number, number][] = []): Promise<HostileAgent> {
    const agent = await openHostileAgent(t.endpoint.port, EVIL, t.keys.get(EVIL)!, settings);
    agents.push(agent);
    await waitUntil(() => (t.edge.registry.count().get(EVIL) ?? 0) > 0);
    return agent;
  }

  /** underAttack runs the attack while the other tenant's client sends requests, and checks that tenant after it. */
  async function underAttack(run: () => Promise<void>): Promise<{ statuses: number[]; failed: number }> {
    const tunnelBefore = t.edge.registry.all().filter((x) => x.bindingId === GOOD).map((x) => x.connectionId);
    let isDone = false;
    const attacking = run().finally(() => (isDone = true));
    const statuses = await requestsWhile(t.httpPort, 'good.test', () => isDone);
    await attacking;
    expect(good.state, 'the other tenant\'s tunnel').to.equal('open');
    expect(t.edge.registry.all().filter((x) => x.bindingId === GOOD).map((x) => x.connectionId)).to.deep.equal(tunnelBefore);
    expect((await http1(t.httpPort, 'good.test', '/')).status).to.equal(200);
    return { statuses, failed: statuses.filter((s) => s !== 200).length };
  }

  /** closedBy waits (bounded) for the edge to close the hostile connection. */
  async function closedBy(agent: HostileAgent, boundMs = 10_000): Promise<boolean> {
    await Promise.race([agent.closed, new Promise((r) => setTimeout(r, boundMs))]);
    return agent.isClosed();
  }

  for (const [what, type, payload] of [
    ['PING', FRAME.PING, Buffer.alloc(8)],
    ['SETTINGS', FRAME.SETTINGS, Buffer.alloc(0)],
  ] as const) {
    it(`answers a flood of ${FLOOD.toLocaleString('en')} ${what} frames from an agent by closing that tunnel; the other tenant is served throughout`, async () => {
      const agent = await hostile();
      const chunk = Buffer.concat(Array.from({ length: PER_CHUNK }, () => frame(type, 0, 0, payload)));
      let written = 0;
      const { statuses, failed } = await underAttack(async () => {
        written = (await writeAll(agent.socket, Array.from({ length: FLOOD / PER_CHUNK }, () => chunk))) * PER_CHUNK;
        await closedBy(agent);
      });
      const acks = agent.frames.filter((f) => f.type === type && (f.flags & 0x1) === 1).length;
      attack(`tunnel ${what} flood: ${written.toLocaleString('en')} frames written → ${acks.toLocaleString('en')} acknowledged, GOAWAY ${agent.goawayCode()}, tunnel closed ${agent.isClosed()}; other tenant ${statuses.length} requests, ${failed} failed`);
      expect(failed).to.equal(0);
      expect(agent.isClosed(), 'the edge closes the flooding tunnel').to.equal(true);
    });
  }

  it(`closes a tunnel whose agent sends ${FLOOD.toLocaleString('en')} RST_STREAM frames; the other tenant is served throughout`, async () => {
    const agent = await hostile();
    const cancel = Buffer.from([0, 0, 0, 0x8]);
    let written = 0;
    const { statuses, failed } = await underAttack(async () => {
      const chunks = function* (): Generator<Buffer> {
        for (let c = 0; c < FLOOD / PER_CHUNK; c++) yield Buffer.concat(Array.from({ length: PER_CHUNK }, (_, i) => frame(FRAME.RST_STREAM, 0, 1 + 2 * (c * PER_CHUNK + i), cancel)));
      };
      written = (await writeAll(agent.socket, chunks())) * PER_CHUNK;
      await closedBy(agent);
    });
    attack(`tunnel RST_STREAM flood: ${written.toLocaleString('en')} frames written for streams never opened → GOAWAY ${agent.goawayCode()}, tunnel closed ${agent.isClosed()}; other tenant ${statuses.length} requests, ${failed} failed`);
    expect(failed).to.equal(0);
    expect(agent.isClosed()).to.equal(true);
  });

  it('answers the public clients of an agent that resets every stream (502) while the other tenant is served', async () => {
    const agent = await hostile();
    agent.onStream((id) => agent.socket.write(frame(FRAME.RST_STREAM, 0, id, Buffer.from([0, 0, 0, 0x2]))));
    const evilStatuses: number[] = [];
    const { statuses, failed } = await underAttack(async () => {
      for (let i = 0; i < 200; i++) evilStatuses.push((await http1(t.httpPort, 'evil.test', `/r${i}`).catch(() => ({ status: 0 }))).status);
    });
    const answered = evilStatuses.filter((s) => s >= 500).length;
    attack(`agent resets every stream: 200 public requests to its binding → ${answered} answered 5xx by the edge (${[...new Set(evilStatuses)].join('/')}); other tenant ${statuses.length} requests, ${failed} failed`);
    expect(answered).to.equal(200);
    expect(failed).to.equal(0);
  });

  const ILLEGAL: [string, Buffer][] = [
    ['DATA on stream 0', frame(FRAME.DATA, 0, 0, Buffer.from('x'))],
    ['PUSH_PROMISE (push is off)', frame(FRAME.PUSH_PROMISE, FRAME.END_HEADERS, 1, Buffer.concat([Buffer.from([0, 0, 0, 2]), STATUS_200]))],
    ['HEADERS on a stream the agent may not open', frame(FRAME.HEADERS, FRAME.END_HEADERS | FRAME.END_STREAM, 2, STATUS_200)],
    // a frame head announcing 16 MiB - 1 (past the 64 KiB the edge allows), then 1 KiB of it
    ['a frame past the maximum frame size', Buffer.concat([Buffer.from([0xff, 0xff, 0xff, FRAME.PING, 0, 0, 0, 0, 0]), Buffer.alloc(1024)])],
    ['a connection window past 2^31-1', Buffer.concat([frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.from([0x7f, 0xff, 0xff, 0xff])), frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.from([0x7f, 0xff, 0xff, 0xff]))])],
    ['SETTINGS with an initial window past 2^31-1', frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 4, 0x80, 0, 0, 0]))],
    ['a PING of 7 bytes', frame(FRAME.PING, 0, 0, Buffer.alloc(7))],
    ['CONTINUATION without HEADERS', frame(FRAME.CONTINUATION, FRAME.END_HEADERS, 1, STATUS_200)],
    ['garbage', Buffer.from('\xde\xad\xbe\xef'.repeat(64), 'latin1')],
  ];

  it(`closes the tunnel of an agent that sends an illegal frame (${ILLEGAL.length} kinds), each on its own, and the other tenant is served`, async () => {
    const outcomes: string[] = [];
    const { statuses, failed } = await underAttack(async () => {
      for (const [what, bytes] of ILLEGAL) {
        const agent = await hostile();
        agent.socket.write(bytes);
        const isClosed = await closedBy(agent);
        outcomes.push(`${what}: GOAWAY ${agent.goawayCode() ?? '-'}${isClosed ? ', closed' : ', OPEN'}`);
      }
    });
    attack(`illegal frames from an agent → ${outcomes.join('; ')}; other tenant ${statuses.length} requests, ${failed} failed`);
    expect(outcomes.filter((o) => o.endsWith('OPEN'))).to.deep.equal([]);
    expect(failed).to.equal(0);
  });

  it('refuses an endless response header block (HEADERS + 4 MiB of CONTINUATION): the public client gets a 5xx, the other tenant is served', async () => {
    const agent = await hostile();
    const field = literalField('x-huge', 'h'.repeat(16 * 1024 - 16));
    agent.onStream((id) => {
      const frames = [frame(FRAME.HEADERS, 0, id, STATUS_200), ...Array.from({ length: 256 }, () => frame(FRAME.CONTINUATION, 0, id, field))];
      void writeAll(agent.socket, frames);
    });
    let evil = 0;
    const { statuses, failed } = await underAttack(async () => {
      evil = (await http1(t.httpPort, 'evil.test', '/').catch(() => ({ status: 0 }))).status;
      await closedBy(agent);
    });
    attack(`huge response headers: HEADERS + 256 × 16 KiB CONTINUATION (limit 64 KiB) → public client ${evil}, GOAWAY ${agent.goawayCode()}, tunnel closed ${agent.isClosed()}; other tenant ${statuses.length} requests, ${failed} failed`);
    expect(evil).to.be.within(500, 599);
    expect(failed).to.equal(0);
  });

  it('holds an upload to an agent that never reads its stream to the flow-control window, not the body', async () => {
    const agent = await hostile();
    let opened = 0;
    agent.onStream(() => opened++);
    const body = 64 << 20;
    const req = httpRequest({ host: '127.0.0.1', port: t.httpPort, method: 'POST', path: '/upload', headers: { host: 'evil.test', 'content-length': String(body) }, agent: false });
    req.on('error', () => undefined);
    const chunk = Buffer.alloc(64 << 10);
    let offered = 0;
    const { statuses, failed } = await underAttack(async () => {
      // write until the edge stops taking bytes (backpressure), for at most 3 s
      const deadline = Date.now() + 3000;
      while (offered < body && Date.now() < deadline) {
        offered += chunk.length;
        if (!req.write(chunk)) await Promise.race([once(req, 'drain'), new Promise((r) => setTimeout(r, 500))]);
      }
    });
    const taken = req.socket?.bytesWritten ?? 0;
    req.destroy();
    attack(`never-read stream: a 64 MiB upload to an agent that sends no WINDOW_UPDATE → ${(taken / 1048576).toFixed(1)} MiB taken by the edge in 3 s, ${opened} stream opened; other tenant ${statuses.length} requests, ${failed} failed`);
    expect(opened).to.equal(1);
    expect(taken, 'the edge buffers a bounded part of the body, not all of it').to.be.below(16 << 20);
    expect(failed).to.equal(0);
  });
});
