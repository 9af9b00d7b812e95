import { once } from 'node:events';
import type { Socket } from 'node:net';
import { HEADER_BINDING, TUNNEL_PATH, TUNNEL_UPGRADE_TOKEN } from '../../src/wire/protocol.js';
import { FRAME, frame } from './h2-frames.js';
import { dial } from './raw-sockets.js';

/**
 * A hostile agent: it opens a real tunnel (the upgrade with a valid key) and then speaks raw
 * HTTP/2 frames as the tunnel's server (docs/protocol.md §3, the agent is the HTTP/2 server), so a
 * test can send what the agent's Node session never would: floods, illegal frames, endless header
 * blocks, or nothing at all.
 */

const CLIENT_PREFACE_LENGTH = 24;

/** Frame is one HTTP/2 frame the edge sent. */
export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

/** HostileAgent is one upgraded tunnel connection driven frame by frame. */
export interface HostileAgent {
  socket: Socket;
  /** every frame the edge sent so far, in order */
  frames: Frame[];
  /** streams resolves with the id of each HEADERS frame (a new stream) the edge opens, as they come */
  onStream(fn: (streamId: number) => void): void;
  /** the GOAWAY error code the edge sent, if any */
  goawayCode(): number | undefined;
  /** closed resolves when the edge closed the connection */
  closed: Promise<void>;
  isClosed(): boolean;
}

/** openHostileAgent upgrades a connection to the tunnel listener and sends the server's SETTINGS (with `settings` pairs). */
export async function openHostileAgent(port: number, bindingId: string, key: string, settings: [number, number][] = []): Promise<HostileAgent> {
  const socket = await dial(port);
  socket.write(
    `GET ${TUNNEL_PATH} HTTP/1.1\r\nHost: edge\r\nConnection: Upgrade\r\nUpgrade: ${TUNNEL_UPGRADE_TOKEN}\r\n` +
      `Authorization: Bearer ${key}\r\n${HEADER_BINDING}: ${encodeURIComponent(bindingId)}\r\n\r\n`,
  );
  let pending: Buffer = Buffer.alloc(0);
  while (!pending.includes('\r\n\r\n')) {
    const [chunk] = (await Promise.race([once(socket, 'data'), once(socket, 'close').then(() => [Buffer.alloc(0)])])) as [Buffer];
    if (chunk.length === 0) throw new Error('the edge closed the tunnel before answering the upgrade');
    pending = Buffer.concat([pending, chunk]);
  }
  const end = pending.indexOf('\r\n\r\n') + 4;
  const head = pending.toString('latin1', 0, end);
  if (!head.startsWith('HTTP/1.1 101')) throw new Error(`upgrade refused: ${head.split('\r\n')[0]}`);
  pending = pending.subarray(end);
  const payload = Buffer.alloc(settings.length * 6);
  for (const [i, [id, value]] of settings.entries()) {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  }
  socket.write(frame(FRAME.SETTINGS, 0, 0, payload));
  const frames: Frame[] = [];
  const listeners: ((id: number) => void)[] = [];
  let goaway: number | undefined;
  let isPrefaceRead = false;
  let isClosed = false;
  const onData = (chunk: Buffer): void => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    if (!isPrefaceRead) {
      if (pending.length < CLIENT_PREFACE_LENGTH) return;
      pending = pending.subarray(CLIENT_PREFACE_LENGTH);
      isPrefaceRead = true;
    }
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      const f: Frame = { type: pending[3]!, flags: pending[4]!, streamId: pending.readUInt32BE(5) & 0x7fffffff, payload: pending.subarray(9, 9 + length) };
      frames.push(f);
      if (f.type === FRAME.GOAWAY && length >= 8) goaway = f.payload.readUInt32BE(4);
      if (f.type === FRAME.HEADERS) for (const fn of listeners) fn(f.streamId);
      pending = pending.subarray(9 + length);
    }
  };
  socket.on('data', onData);
  if (pending.length > 0) {
    const first = pending;
    pending = Buffer.alloc(0);
    onData(first);
  }
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      isClosed = true;
      resolve();
    }),
  );
  return { socket, frames, onStream: (fn) => listeners.push(fn), goawayCode: () => goaway, closed, isClosed: () => isClosed };
}

/** hpackInteger encodes an HPACK integer with an N-bit prefix (RFC 7541 §5.1), `first` holding the bits above the prefix. */
export function hpackInteger(value: number, prefixBits: number, first = 0): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([first | value]);
  const bytes = [first | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** literalField encodes one header field as a literal without indexing, new name (RFC 7541 §6.2.2). */
export function literalField(name: string, value: string): Buffer {
  const n = Buffer.from(name, 'latin1');
  const v = Buffer.from(value, 'latin1');
  return Buffer.concat([Buffer.from([0x00]), hpackInteger(n.length, 7), n, hpackInteger(v.length, 7), v]);
}

/** STATUS_200 is the HPACK block `:status: 200` (static table index 8). */
export const STATUS_200 = Buffer.from([0x88]);
