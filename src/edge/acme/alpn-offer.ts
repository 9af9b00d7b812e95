import type { Socket } from 'node:net';
import { parseClientHello } from '../sni.js';

/**
 * Reading the ALPN offer (RFC 7301 §3.1) from a TLS ClientHello without terminating TLS, so the
 * public front can hand a TLS-ALPN-01 validator (it offers only `acme-tls/1`, RFC 8737 §3) to the
 * challenge certificate and everyone else to the regular one. OpenSSL picks the certificate (SNI
 * callback) before it looks at ALPN, so the choice has to be made before the handshake starts.
 */

const MAX_HELLO_BYTES = 16 << 10;
const EXTENSION_ALPN = 16;

/** parseAlpnOffer returns the protocols a complete ClientHello offers ([] without the extension), undefined if malformed. */
export function parseAlpnOffer(data: Buffer): string[] | undefined {
  const hello = handshakeBody(data);
  if (hello === undefined) return undefined;
  let p = 2 + 32; // legacy_version, random
  if (p + 1 > hello.length) return undefined;
  p += 1 + hello[p]!; // legacy_session_id
  if (p + 2 > hello.length) return undefined;
  p += 2 + hello.readUInt16BE(p); // cipher_suites
  if (p + 1 > hello.length) return undefined;
  p += 1 + hello[p]!; // legacy_compression_methods
  if (p + 2 > hello.length) return [];
  const end = Math.min(hello.length, p + 2 + hello.readUInt16BE(p));
  p += 2;
  while (p + 4 <= end) {
    const type = hello.readUInt16BE(p);
    const length = hello.readUInt16BE(p + 2);
    p += 4;
    if (type === EXTENSION_ALPN) return readProtocolList(hello.subarray(p, Math.min(end, p + length)));
    p += length;
  }
  return [];
}

// ProtocolNameList: a 2-byte length, then 1-byte-length names (RFC 7301 §3.1).
function readProtocolList(ext: Buffer): string[] | undefined {
  if (ext.length < 2) return undefined;
  const end = Math.min(ext.length, 2 + ext.readUInt16BE(0));
  const names: string[] = [];
  for (let p = 2; p < end; ) {
    const length = ext[p]!;
    if (p + 1 + length > end) return undefined;
    names.push(ext.subarray(p + 1, p + 1 + length).toString('latin1'));
    p += 1 + length;
  }
  return names;
}

// Joins the handshake records (RFC 8446 §5.1) and returns the ClientHello body, after its 4-byte header.
function handshakeBody(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  for (let offset = 0; offset + 5 <= data.length; ) {
    if (data[offset] !== 0x16) return undefined;
    const length = data.readUInt16BE(offset + 3);
    parts.push(data.subarray(offset + 5, Math.min(data.length, offset + 5 + length)));
    offset += 5 + length;
  }
  const handshake = Buffer.concat(parts);
  if (handshake.length < 4 || handshake[0] !== 0x01) return undefined;
  const needed = 4 + handshake.readUIntBE(1, 3);
  return handshake.length < needed ? undefined : handshake.subarray(4, needed);
}

/** peekAlpnOffer reads a ClientHello from the socket, pushes the bytes back, and returns its ALPN offer. */
export function peekAlpnOffer(socket: Socket, timeoutMs: number): Promise<string[] | undefined> {
  return new Promise((resolve) => {
    let buffered: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => done(undefined), timeoutMs);
    const done = (offer: string[] | undefined): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      if (buffered.length > 0) socket.unshift(buffered);
      resolve(offer);
    };
    const onClose = (): void => done(undefined);
    const onData = (chunk: Buffer): void => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const kind = parseClientHello(buffered).kind;
      if (kind === 'sni' || kind === 'no-sni') done(parseAlpnOffer(buffered));
      else if (kind === 'not-tls' || buffered.length > MAX_HELLO_BYTES) done(undefined);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.resume();
  });
}
