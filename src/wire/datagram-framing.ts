/**
 * Datagram framing of a UDP flow's stream (docs/protocol.md §4.6): each datagram is a 2-byte
 * big-endian length and that many payload bytes. The stream is a byte stream (HTTP/2 DATA frames
 * may split or join datagrams), so the reader reassembles them; the length makes the boundaries
 * survive, which the bytes alone would not.
 */
import { WireError } from './errors.js';

/**
 * MAX_DATAGRAM_BYTES is the largest UDP payload a flow carries: 65,535 minus the 8-byte UDP header
 * and the 20-byte IPv4 header (RFC 768, RFC 791). A larger length field is malformed, so a
 * broken or hostile peer cannot make the reader wait for, or hold, more than this per datagram.
 */
export const MAX_DATAGRAM_BYTES = 65_507;

/** DATAGRAM_HEADER_BYTES is the size of the length prefix. */
export const DATAGRAM_HEADER_BYTES = 2;

/** DatagramTooLargeError: a datagram (to send, or a length field read) is above MAX_DATAGRAM_BYTES. */
export class DatagramTooLargeError extends WireError {
  constructor(readonly bytes: number) {
    super('TUNA_DATAGRAM_TOO_LARGE', `a datagram of ${bytes} bytes is above the ${MAX_DATAGRAM_BYTES}-byte limit`);
  }
}

/** frameDatagram returns `payload` with its length prefix (throws DatagramTooLargeError above the limit). */
export function frameDatagram(payload: Uint8Array): Buffer {
  if (payload.length > MAX_DATAGRAM_BYTES) throw new DatagramTooLargeError(payload.length);
  const out = Buffer.allocUnsafe(DATAGRAM_HEADER_BYTES + payload.length);
  out.writeUInt16BE(payload.length, 0);
  out.set(payload, DATAGRAM_HEADER_BYTES);
  return out;
}

/**
 * DatagramReader reassembles datagrams from the chunks of a flow's stream. It holds at most one
 * partial datagram (≤ 65,509 bytes) between chunks. `push` hands each datagram a chunk completed
 * to `onDatagram`, in order, and throws DatagramTooLargeError at a length above the limit, after
 * the datagrams before it (the caller ends that flow's stream: the rest cannot be framed).
 */
export class DatagramReader {
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  /** push adds a chunk and hands every datagram it completed (zero-length ones included) to `onDatagram`. */
  push(chunk: Buffer, onDatagram: (datagram: Buffer) => void): void {
    let data = chunk;
    if (this.#pendingBytes > 0) {
      this.#pending.push(chunk);
      data = Buffer.concat(this.#pending, this.#pendingBytes + chunk.length);
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    let at = 0;
    while (data.length - at >= DATAGRAM_HEADER_BYTES) {
      const length = data.readUInt16BE(at);
      if (length > MAX_DATAGRAM_BYTES) throw new DatagramTooLargeError(length);
      if (data.length - at - DATAGRAM_HEADER_BYTES < length) break;
      onDatagram(data.subarray(at + DATAGRAM_HEADER_BYTES, at + DATAGRAM_HEADER_BYTES + length));
      at += DATAGRAM_HEADER_BYTES + length;
    }
    if (at < data.length) {
      // copy the tail: a subarray would pin the whole chunk it came from until the datagram completes
      const tail = Buffer.from(data.subarray(at));
      this.#pending.push(tail);
      this.#pendingBytes = tail.length;
    }
  }

  /** hasPartial says whether a datagram was cut off (the stream ended inside one). */
  get hasPartial(): boolean {
    return this.#pendingBytes > 0;
  }
}
