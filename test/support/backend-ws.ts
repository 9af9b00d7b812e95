import type http2 from 'node:http2';

/** Minimal WebSocket framing for tests that speak it over raw HTTP/2 streams. */

/** maskedTextFrame builds one client-to-server text frame (RFC 6455 §5.2: clients must mask). */
export function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([1, 2, 3, 4]);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
}

/** readFrames yields the text of unmasked server frames (short frames only, enough for tests). */
export function readFrames(stream: http2.ClientHttp2Stream): { next(): Promise<string> } {
  let buffer = Buffer.alloc(0);
  const waiting: (() => void)[] = [];
  stream.on('data', (c: Buffer) => {
    buffer = Buffer.concat([buffer, c]);
    waiting.splice(0).forEach((w) => w());
  });
  return {
    async next() {
      for (let i = 0; i < 100; i++) {
        if (buffer.length >= 2 && buffer.length >= 2 + (buffer[1]! & 0x7f)) {
          const len = buffer[1]! & 0x7f;
          const text = buffer.subarray(2, 2 + len).toString();
          buffer = buffer.subarray(2 + len);
          return text;
        }
        await new Promise<void>((r) => waiting.push(r));
      }
      throw new Error('no frame');
    },
  };
}
