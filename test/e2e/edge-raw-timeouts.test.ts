import { expect } from 'chai';
import { once } from 'node:events';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import type { EdgePublicLimits } from '../../src/edge/config.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import type { TunnelStreamHandler } from '../../src/wire/stream-handler.js';
import { openSession, startTestEdge } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

// On raw TCP ports: a first-byte deadline that a server-first protocol's
// banner satisfies, and an idle deadline that traffic either way resets.

const DB = 'binding/tcp-port/db';

/** RawBackend answers every CONNECT stream: silent, echoing, or a server-first banner then echo. */
class RawBackend implements TunnelStreamHandler {
  constructor(readonly mode: 'silent' | 'echo' | 'banner') {}

  handleStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    stream.on('error', () => undefined);
    if (headers[':method'] !== 'CONNECT') return void stream.respond({ ':status': 404 }, { endStream: true });
    stream.respond({ ':status': 200 });
    if (this.mode === 'banner') stream.write('220 ready\r\n');
    if (this.mode !== 'silent') stream.pipe(stream);
    else stream.resume();
  }
}

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** watch records what the edge sends and whether it closed before `boundMs` (a bound, not a timing assertion). */
function watch(socket: Socket, boundMs: number): { received: () => string; closed: Promise<boolean> } {
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  const closed = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), boundMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  return { received: () => text, closed };
}

describe('edge: raw TCP first-byte and idle timeouts', function () {
  this.timeout(60_000);
  let t: TestEdge | undefined;
  let session: TunnelSession | undefined;
  const held: Socket[] = [];

  async function start(mode: RawBackend['mode'], limits: EdgePublicLimits): Promise<number> {
    const port = await freePort();
    t = await startTestEdge([{ id: DB, kind: 'tcp-port', port }], { limits: { tunnelWaitMs: 2000, public: limits } });
    session = await openSession(t, DB, new RawBackend(mode));
    return port;
  }

  async function dial(port: number): Promise<Socket> {
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('error', () => undefined);
    held.push(socket);
    await once(socket, 'connect');
    return socket;
  }

  afterEach(async () => {
    for (const s of held.splice(0)) s.destroy();
    session?.destroy();
    await t?.edge.close();
    t = undefined;
  });

  it('closes a raw TCP connection on which no byte moved either way by the first-byte timeout, and counts it', async () => {
    const port = await start('silent', { tcpFirstByteTimeoutMs: 200 });
    const socket = await dial(port);
    const seen = watch(socket, 10_000);
    expect(await seen.closed).to.equal(true);
    expect(t!.edge.metrics.publicTimeouts('tcp-first-byte')).to.equal(1);
  });

  it('keeps a server-first connection whose client sends nothing: the backend\'s banner is its first byte', async () => {
    const port = await start('banner', { tcpFirstByteTimeoutMs: 200 });
    const socket = await dial(port);
    // five first-byte deadlines' worth of a silent client (a bound to wait, not a timing assertion)
    const seen = watch(socket, 1_000);
    expect(await seen.closed).to.equal(false);
    expect(seen.received()).to.equal('220 ready\r\n');
    socket.write('QUIT\r\n');
    for (let i = 0; i < 200 && !seen.received().includes('QUIT'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen.received()).to.equal('220 ready\r\nQUIT\r\n');
    expect(t!.edge.metrics.publicTimeouts('tcp-first-byte')).to.equal(0);
  });

  it('closes a raw TCP connection idle for the idle timeout, and keeps one whose bytes keep flowing', async () => {
    const port = await start('echo', { tcpIdleTimeoutMs: 1000 });
    const quiet = await dial(port);
    const busy = await dial(port);
    const quietSeen = watch(quiet, 10_000);
    const busySeen = watch(busy, 10_000);
    quiet.write('once');
    // the busy client sends a byte every 50 ms, 40 times: never 1 s without traffic
    for (let i = 0; i < 40; i++) {
      busy.write('x');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await quietSeen.closed).to.equal(true);
    expect(quietSeen.received()).to.equal('once');
    expect(busy.destroyed).to.equal(false);
    for (let i = 0; i < 200 && busySeen.received().length < 40; i++) await new Promise((r) => setTimeout(r, 10));
    expect(busySeen.received()).to.equal('x'.repeat(40));
    expect(t!.edge.metrics.publicTimeouts('tcp-idle')).to.equal(1);
    expect(await busySeen.closed).to.equal(true);
    expect(t!.edge.metrics.publicTimeouts('tcp-idle')).to.equal(2);
  });
});
