import type { Socket } from 'node:net';
import { findExtension, peekClientHello, readClientHelloBody } from './sni.js';

/**
 * Reading the ALPN offer (RFC 7301 §3.1) from a TLS ClientHello without terminating TLS, so the
 * public front can hand a TLS-ALPN-01 validator (it offers only `acme-tls/1`, RFC 8737 §3) to the
 * challenge certificate and everyone else to the regular one. OpenSSL picks the certificate (SNI
 * callback) before it looks at ALPN, so the choice has to be made before the handshake starts.
 */

const EXTENSION_ALPN = 16;

/** parseAlpnOffer returns the protocols a complete ClientHello offers ([] without the extension), undefined if malformed. */
export function parseAlpnOffer(data: Buffer): string[] | undefined {
  const read = readClientHelloBody(data);
  if (read.kind !== 'body') return undefined;
  const ext = findExtension(read.body, EXTENSION_ALPN);
  return ext === undefined ? undefined : ext === null ? [] : readProtocolList(ext);
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

/** peekAlpnOffer reads a ClientHello from the socket, pushes the bytes back, and returns its ALPN offer. */
export async function peekAlpnOffer(socket: Socket, timeoutMs: number): Promise<string[] | undefined> {
  const hello = await peekClientHello(socket, timeoutMs);
  return hello === undefined ? undefined : parseAlpnOffer(hello);
}
