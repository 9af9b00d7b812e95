/**
 * src/tunnel/handshake: the upgrade resolves only after the upgrade request's own write is done.
 * An edge can answer 101 and send its SETTINGS before a TLS socket's write callback has run; the
 * agent's HTTP/2 session, started on that answer, would then write while the TLS write is still
 * current, which aborts Node in TLSWrap::DoWrite. A socket that holds its write callback shows it.
 */
import { expect } from 'chai';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { upgradeTunnel } from '../../src/tunnel/handshake.js';
import { TunnelProtocolError } from '../../src/tunnel/errors.js';

/** HeldSocket records what is written and runs each write's callback only when told to. */
class HeldSocket extends Duplex {
  readonly written: Buffer[] = [];
  #held: Array<(err?: Error | null) => void> = [];

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.written.push(chunk);
    this.#held.push(callback);
  }

  /** release runs the held write callbacks, with err if given. */
  release(err?: Error): void {
    for (const callback of this.#held.splice(0)) callback(err);
  }

  get heldWrites(): number {
    return this.#held.length;
  }
}

const request = { host: 'edge.test', binding: { id: 'b1', key: 'k1' }, connectionId: 'c1', timeoutMs: 5_000 };
const upgraded = 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: tuna-tunnel/1\r\nConnection: Upgrade\r\n\r\n';

function settle<T>(promise: Promise<T>): { state: () => 'pending' | 'resolved' | 'rejected'; value: () => T | undefined } {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  let value: T | undefined;
  promise.then(
    (v) => {
      state = 'resolved';
      value = v;
    },
    () => (state = 'rejected'),
  );
  return { state: () => state, value: () => value };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('tunnel upgrade and its own write', () => {
  it('waits for the request write to complete before resolving on a 101 that came first', async () => {
    const socket = new HeldSocket();
    const result = settle(upgradeTunnel(socket as unknown as Socket, request));
    await turn();
    expect(socket.heldWrites).to.equal(1);
    expect(Buffer.concat(socket.written).toString('latin1')).to.match(/^GET .* HTTP\/1\.1\r\n/);
    // the edge answers, with its HTTP/2 preface in the same segment, before the write has completed
    socket.push(Buffer.from(upgraded + 'PREFACE'));
    await turn();
    await turn();
    expect(result.state()).to.equal('pending');
    socket.release();
    await turn();
    expect(result.state()).to.equal('resolved');
    expect(result.value()!.headers['upgrade']).to.equal('tuna-tunnel/1');
    // the bytes after the head are left in the socket for the HTTP/2 session
    socket.resume();
    const rest = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
    expect(rest.toString('latin1')).to.equal('PREFACE');
  });

  it('resolves at once on a 101 that arrives after the write completed', async () => {
    const socket = new HeldSocket();
    const result = settle(upgradeTunnel(socket as unknown as Socket, request));
    await turn();
    socket.release();
    await turn();
    expect(result.state()).to.equal('pending');
    socket.push(Buffer.from(upgraded));
    await turn();
    expect(result.state()).to.equal('resolved');
  });

  it('rejects when the socket closes while the write is still held after a 101', async () => {
    const socket = new HeldSocket();
    const promise = upgradeTunnel(socket as unknown as Socket, request);
    await turn();
    socket.push(Buffer.from(upgraded));
    await turn();
    socket.destroy();
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(TunnelProtocolError);
  });
});
