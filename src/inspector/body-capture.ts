/** BodyCapture keeps the first bytes of a body up to a cap and counts all of them. */
export class BodyCapture {
  private readonly chunks: Buffer[] = [];
  private captured = 0;
  /** size is every byte seen, kept or not */
  size = 0;
  /** isComplete is true once the body ended (false for a reset exchange) */
  isComplete = false;

  constructor(private readonly limit: number) {}

  /** add counts a chunk and keeps what still fits under the cap. */
  add(chunk: Buffer | string | Uint8Array): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.size += buf.length;
    const room = this.limit - this.captured;
    if (room <= 0 || buf.length === 0) return;
    // A copy: the stream may reuse its buffer, and a slice would pin a whole 64 KiB pool.
    const kept = Buffer.from(buf.subarray(0, room));
    this.chunks.push(kept);
    this.captured += kept.length;
  }

  /** isTruncated is true when some bytes were not kept. */
  get isTruncated(): boolean {
    return this.size > this.captured;
  }

  /** bytes returns what was kept. */
  bytes(): Buffer {
    if (this.chunks.length !== 1) {
      const all = Buffer.concat(this.chunks);
      this.chunks.splice(0, this.chunks.length, all);
    }
    return this.chunks[0] ?? Buffer.alloc(0);
  }
}

/** BodyView is a captured body as the JSON API shows it. */
export interface BodyView {
  /** every byte of the body, kept or not */
  size: number;
  /** the bytes kept (at most the cap) */
  captured: number;
  /** true when `size` exceeds `captured` */
  truncated: boolean;
  /** false while the body is still arriving, or when the exchange was reset */
  complete: boolean;
  /** `utf8` when the kept bytes are valid UTF-8 text, else `base64` */
  encoding: 'utf8' | 'base64';
  data: string;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * viewBody renders a capture for the API. A cut may split a multi-byte character: up to three
 * trailing bytes are dropped from the text check of a truncated body so it still reads as text.
 */
export function viewBody(capture: BodyCapture): BodyView {
  const bytes = capture.bytes();
  const base = { size: capture.size, captured: bytes.length, truncated: capture.isTruncated, complete: capture.isComplete };
  for (let cut = 0; cut <= (capture.isTruncated ? 3 : 0) && cut <= bytes.length; cut++) {
    const text = decodeUtf8(bytes.subarray(0, bytes.length - cut));
    if (text !== undefined) return { ...base, encoding: 'utf8', data: text };
  }
  return { ...base, encoding: 'base64', data: bytes.toString('base64') };
}

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
