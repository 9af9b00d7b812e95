import { once } from 'node:events';
import { connect } from 'node:net';
import type { Socket } from 'node:net';

// A raw HTTP/2 frame writer for abuse tests (RFC 9113 §4.1 frame layout), so a test can send
// what no well-behaved client library would: thousands of HEADERS+RST_STREAM, PING or SETTINGS
// floods on one connection.

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** FRAME holds the frame types and flags the abuse tests use. */
export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
  END_STREAM: 0x1,
  END_HEADERS: 0x4,
} as const;

/** frame encodes one HTTP/2 frame. */
export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** getHeaderBlock is an HPACK block for `GET <path> http` with `:authority` (and a path other than `/`) as literals never indexed (RFC 7541 §6.2.2). */
export function getHeaderBlock(authority: string, path = '/'): Buffer {
  const value = Buffer.from(authority, 'latin1');
  const pathValue = Buffer.from(path, 'latin1');
  // 0x82 :method GET, 0x86 :scheme http, 0x84 :path / (static table); 0x11 / 0x14 = never-indexed literal, name index 1 (:authority) / 4 (:path)
  const pathField = path === '/' ? Buffer.from([0x84]) : Buffer.concat([Buffer.from([0x14, pathValue.length]), pathValue]);
  return Buffer.concat([Buffer.from([0x82, 0x86]), pathField, Buffer.from([0x11, value.length]), value]);
}

/** headersOnly encodes `count` HEADERS (END_STREAM) frames from stream `firstId` on. */
export function headersOnly(authority: string, path: string, firstId: number, count: number): Buffer {
  const block = getHeaderBlock(authority, path);
  return Buffer.concat(Array.from({ length: count }, (_, i) => frame(FRAME.HEADERS, FRAME.END_HEADERS | FRAME.END_STREAM, firstId + 2 * i, block)));
}

/** resetsOnly encodes RST_STREAM(CANCEL) for `count` streams from `firstId` on. */
export function resetsOnly(firstId: number, count: number): Buffer {
  const cancel = Buffer.from([0, 0, 0, 0x8]);
  return Buffer.concat(Array.from({ length: count }, (_, i) => frame(FRAME.RST_STREAM, 0, firstId + 2 * i, cancel)));
}

/** resetBurst encodes `count` HEADERS (END_STREAM) + RST_STREAM(CANCEL) pairs from stream `firstId` on. */
export function resetBurst(authority: string, firstId: number, count: number): Buffer {
  const block = getHeaderBlock(authority);
  const cancel = Buffer.from([0, 0, 0, 0x8]);
  const parts: Buffer[] = [];
  for (let i = 0, id = firstId; i < count; i++, id += 2) {
    parts.push(frame(FRAME.HEADERS, FRAME.END_HEADERS | FRAME.END_STREAM, id, block), frame(FRAME.RST_STREAM, 0, id, cancel));
  }
  return Buffer.concat(parts);
}

/** RawH2 is one raw HTTP/2 connection: what it read back, and whether the server sent GOAWAY. */
export interface RawH2 {
  socket: Socket;
  /** the GOAWAY error code received, if any */
  goawayCode(): number | undefined;
  /** the RST_STREAM error code received for a stream, if any */
  resetCode(streamId: number): number | undefined;
  /** closed resolves when the server closed the connection */
  closed: Promise<void>;
}

/** openRawH2 connects to 127.0.0.1:port, sends the preface and an empty SETTINGS frame, and parses the frames that come back. */
export async function openRawH2(port: number): Promise<RawH2> {
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]));
  let pending: Buffer = Buffer.alloc(0);
  let goaway: number | undefined;
  const resets = new Map<number, number>();
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 9) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < 9 + length) break;
      if (pending[3] === FRAME.GOAWAY && length >= 8) goaway = pending.readUInt32BE(9 + 4);
      if (pending[3] === FRAME.RST_STREAM && length === 4) resets.set(pending.readUInt32BE(5) & 0x7fffffff, pending.readUInt32BE(9));
      pending = pending.subarray(9 + length);
    }
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, goawayCode: () => goaway, resetCode: (id) => resets.get(id), closed };
}

/** writeAll writes the chunks with backpressure, stopping when the socket is gone; returns the chunks written. */
export async function writeAll(socket: Socket, chunks: Iterable<Buffer>): Promise<number> {
  let written = 0;
  for (const chunk of chunks) {
    if (socket.destroyed || socket.writableEnded) break;
    const ok = socket.write(chunk);
    written++;
    if (!ok) {
      await Promise.race([once(socket, 'drain'), once(socket, 'close')]);
    }
  }
  return written;
}
