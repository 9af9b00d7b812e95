import type { Socket } from 'node:net';

/**
 * Reading the SNI server name from a TLS ClientHello without terminating TLS (RFC 8446 §4.1.2,
 * RFC 6066 §3), so the edge can route raw TLS to a tunnel for in-cluster termination or
 * passthrough. The bytes read are pushed back into the socket for whoever handles it next.
 */

// A ClientHello larger than this is refused: real ones are < 2 KiB even with post-quantum key shares.
const MAX_HELLO_BYTES = 16 << 10;

/** ClientHelloResult is the parse outcome: a name, no name, or "need more bytes". */
export type ClientHelloResult = { kind: 'sni'; serverName: string } | { kind: 'no-sni' } | { kind: 'incomplete' } | { kind: 'not-tls' };

/** ClientHelloBody is the ClientHello message body (after its 4-byte header), or why there is none yet. */
export type ClientHelloBody = { kind: 'body'; body: Buffer } | { kind: 'incomplete' } | { kind: 'not-tls' };

/** readClientHelloBody joins the handshake records at the start of a TLS stream and returns the ClientHello body. */
export function readClientHelloBody(data: Buffer): ClientHelloBody {
  // Handshake messages may span several TLS records (RFC 8446 §5.1): join their payloads first.
  const handshake: Buffer[] = [];
  let offset = 0;
  let total = 0;
  let needed = -1;
  while (offset + 5 <= data.length) {
    if (data[offset] !== 0x16) return { kind: 'not-tls' };
    const length = data.readUInt16BE(offset + 3);
    if (offset + 5 + length > data.length) break;
    handshake.push(data.subarray(offset + 5, offset + 5 + length));
    total += length;
    offset += 5 + length;
    if (needed < 0 && total >= 4) {
      const first = Buffer.concat(handshake);
      if (first[0] !== 0x01) return { kind: 'not-tls' };
      needed = 4 + first.readUIntBE(1, 3);
    }
    if (needed >= 0 && total >= needed) return { kind: 'body', body: Buffer.concat(handshake).subarray(4, needed) };
  }
  if (data.length > 0 && data[0] !== 0x16) return { kind: 'not-tls' };
  return { kind: 'incomplete' };
}

/**
 * findExtension returns the data of one ClientHello extension (RFC 8446 §4.1.2): a buffer, `null`
 * when the hello has no such extension, `undefined` when the hello is malformed.
 */
export function findExtension(hello: Buffer, wanted: number): Buffer | null | undefined {
  let p = 2 + 32; // legacy_version, random
  if (p + 1 > hello.length) return undefined;
  p += 1 + hello[p]!; // legacy_session_id
  if (p + 2 > hello.length) return undefined;
  p += 2 + hello.readUInt16BE(p); // cipher_suites
  if (p + 1 > hello.length) return undefined;
  p += 1 + hello[p]!; // legacy_compression_methods
  if (p + 2 > hello.length) return null;
  const end = Math.min(hello.length, p + 2 + hello.readUInt16BE(p));
  p += 2;
  while (p + 4 <= end) {
    const type = hello.readUInt16BE(p);
    const length = hello.readUInt16BE(p + 2);
    p += 4;
    if (type === wanted) return hello.subarray(p, Math.min(end, p + length));
    p += length;
  }
  return null;
}

/** parseClientHello reads the SNI host_name from the start of a TLS stream. */
export function parseClientHello(data: Buffer): ClientHelloResult {
  const read = readClientHelloBody(data);
  if (read.kind !== 'body') return read;
  const ext = findExtension(read.body, 0);
  if (ext === undefined) return { kind: 'not-tls' };
  // server_name_list: list length (2), name_type (1, 0 = host_name), name length (2), name (RFC 6066 §3)
  if (ext === null || ext.length < 5 || ext[2] !== 0) return { kind: 'no-sni' };
  const nameLength = ext.readUInt16BE(3);
  if (5 + nameLength > ext.length) return { kind: 'not-tls' };
  return { kind: 'sni', serverName: ext.subarray(5, 5 + nameLength).toString('latin1').toLowerCase() };
}

/**
 * peekClientHello reads a whole ClientHello from the socket and pushes the bytes back for whoever
 * handles the socket next; undefined on timeout, close, non-TLS bytes or an oversized hello.
 */
export function peekClientHello(socket: Socket, timeoutMs: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    let buffered: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => done(false), timeoutMs);
    const done = (isHello: boolean): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      if (buffered.length > 0) socket.unshift(buffered);
      resolve(isHello ? buffered : undefined);
    };
    const onClose = (): void => done(false);
    const onData = (chunk: Buffer): void => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const kind = readClientHelloBody(buffered).kind;
      if (kind === 'body') done(true);
      else if (kind === 'not-tls' || buffered.length > MAX_HELLO_BYTES) done(false);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    // A socket an earlier peek paused stays paused when a 'data' listener is added.
    socket.resume();
  });
}

/** peekServerName reads a ClientHello from the socket, pushes the bytes back, and returns the SNI name ('' if none). */
export async function peekServerName(socket: Socket, timeoutMs: number): Promise<string | undefined> {
  const hello = await peekClientHello(socket, timeoutMs);
  if (hello === undefined) return undefined;
  const result = parseClientHello(hello);
  return result.kind === 'sni' ? result.serverName : result.kind === 'no-sni' ? '' : undefined;
}
