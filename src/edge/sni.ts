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

/** parseClientHello reads the SNI host_name from the start of a TLS stream. */
export function parseClientHello(data: Buffer): ClientHelloResult {
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
    if (needed >= 0 && total >= needed) return parseHello(Buffer.concat(handshake).subarray(4, needed));
  }
  if (data.length > 0 && data[0] !== 0x16) return { kind: 'not-tls' };
  return { kind: 'incomplete' };
}

function parseHello(hello: Buffer): ClientHelloResult {
  let p = 2 + 32; // legacy_version, random
  if (p + 1 > hello.length) return { kind: 'not-tls' };
  p += 1 + hello[p]!; // legacy_session_id
  if (p + 2 > hello.length) return { kind: 'not-tls' };
  p += 2 + hello.readUInt16BE(p); // cipher_suites
  if (p + 1 > hello.length) return { kind: 'not-tls' };
  p += 1 + hello[p]!; // legacy_compression_methods
  if (p + 2 > hello.length) return { kind: 'no-sni' };
  const end = Math.min(hello.length, p + 2 + hello.readUInt16BE(p));
  p += 2;
  while (p + 4 <= end) {
    const type = hello.readUInt16BE(p);
    const length = hello.readUInt16BE(p + 2);
    p += 4;
    if (type === 0 && p + 5 <= end) {
      // server_name_list: list length (2), name_type (1, 0 = host_name), name length (2), name
      if (hello[p + 2] !== 0) return { kind: 'no-sni' };
      const nameLength = hello.readUInt16BE(p + 3);
      if (p + 5 + nameLength > end) return { kind: 'not-tls' };
      return { kind: 'sni', serverName: hello.subarray(p + 5, p + 5 + nameLength).toString('latin1').toLowerCase() };
    }
    p += length;
  }
  return { kind: 'no-sni' };
}

/** peekServerName reads a ClientHello from the socket, pushes the bytes back, and returns the SNI name ('' if none). */
export function peekServerName(socket: Socket, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let buffered: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => done(undefined), timeoutMs);
    const done = (name: string | undefined): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      if (buffered.length > 0) socket.unshift(buffered);
      resolve(name);
    };
    const onClose = (): void => done(undefined);
    const onData = (chunk: Buffer): void => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const result = parseClientHello(buffered);
      if (result.kind === 'sni') done(result.serverName);
      else if (result.kind === 'no-sni') done('');
      else if (result.kind === 'not-tls' || buffered.length > MAX_HELLO_BYTES) done(undefined);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}
