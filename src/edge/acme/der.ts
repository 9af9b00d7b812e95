/**
 * A tiny DER encoder (ITU-T X.690 §8, §10): just the types a PKCS#10 request (RFC 2986) and an
 * X.509 certificate (RFC 5280) need. Node's crypto signs and exports keys but builds neither.
 */

/** derTag wraps content in a tag-length-value with a definite length (X.690 §8.1.3). */
export function derTag(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), encodeLength(body.length), body]);
}

function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** derSequence encodes a SEQUENCE (constructed, tag 0x30). */
export function derSequence(...items: Buffer[]): Buffer {
  return derTag(0x30, ...items);
}

/** derSet encodes a SET; DER wants SET OF members sorted (X.690 §11.6). */
export function derSet(...items: Buffer[]): Buffer {
  return derTag(0x31, ...[...items].sort(Buffer.compare));
}

/** derInteger encodes a non-negative INTEGER from a number or big-endian bytes (§8.3: minimal, sign bit clear). */
export function derInteger(value: number | Buffer): Buffer {
  let bytes = typeof value === 'number' ? bigEndian(value) : value;
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && (bytes[start + 1]! & 0x80) === 0) start++;
  bytes = bytes.subarray(start);
  if ((bytes[0]! & 0x80) !== 0) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return derTag(0x02, bytes);
}

function bigEndian(value: number): Buffer {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`derInteger: ${value} is not a non-negative integer`);
  const bytes: number[] = [];
  for (let n = value; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from(bytes.length === 0 ? [0] : bytes);
}

/** derOid encodes an OBJECT IDENTIFIER in dotted form (§8.19: base-128 arcs). */
export function derOid(dotted: string): Buffer {
  const arcs = dotted.split('.').map((a) => Number(a));
  if (arcs.length < 2 || arcs.some((a) => !Number.isSafeInteger(a) || a < 0)) throw new RangeError(`derOid: bad OID ${dotted}`);
  const out: number[] = [];
  for (const arc of [arcs[0]! * 40 + arcs[1]!, ...arcs.slice(2)]) {
    const chunk: number[] = [arc & 0x7f];
    for (let n = Math.floor(arc / 128); n > 0; n = Math.floor(n / 128)) chunk.unshift((n & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return derTag(0x06, Buffer.from(out));
}

/** derNull encodes NULL. */
export function derNull(): Buffer {
  return Buffer.from([0x05, 0x00]);
}

/** derBoolean encodes BOOLEAN (DER: TRUE is 0xff, §11.1). */
export function derBoolean(value: boolean): Buffer {
  return derTag(0x01, Buffer.from([value ? 0xff : 0x00]));
}

/** derUtf8String encodes a UTF8String. */
export function derUtf8String(value: string): Buffer {
  return derTag(0x0c, Buffer.from(value, 'utf8'));
}

/** derOctetString encodes an OCTET STRING. */
export function derOctetString(value: Buffer): Buffer {
  return derTag(0x04, value);
}

/** derBitString encodes a BIT STRING of whole bytes (no unused bits). */
export function derBitString(value: Buffer): Buffer {
  return derTag(0x03, Buffer.from([0]), value);
}

/** derUtcTime encodes a UTCTime `YYMMDDHHMMSSZ` (RFC 5280 §4.1.2.5.1: years 1950..2049). */
export function derUtcTime(at: Date): Buffer {
  const iso = at.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const text = iso.slice(2, 4) + iso.slice(5, 7) + iso.slice(8, 10) + iso.slice(11, 13) + iso.slice(14, 16) + iso.slice(17, 19) + 'Z';
  return derTag(0x17, Buffer.from(text, 'ascii'));
}

/** derContext encodes a context-specific tag [n]; constructed for EXPLICIT tagging and SET/SEQUENCE bodies. */
export function derContext(n: number, constructed: boolean, ...content: Buffer[]): Buffer {
  return derTag((constructed ? 0xa0 : 0x80) | n, ...content);
}
