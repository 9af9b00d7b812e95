import { Transform } from 'node:stream';
import type { Readable, TransformCallback, Writable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import { sendLocalResponse } from '../exchange.js';
import type { Downstream } from '../exchange.js';
import type { HeaderMap } from '../headers.js';
import { DataPlaneError } from '../errors.js';

/** BodyTooLargeError ends a request body that went past its policy's maximum (the client got 413 when nothing was answered yet). */
export class BodyTooLargeError extends DataPlaneError {
  constructor(readonly limit: number) {
    super('TUNA_BODY_TOO_LARGE', `request body larger than ${limit} bytes`);
  }
}

/** tooLargeBody is the 413 text (RFC 9110 §15.5.14). */
export function tooLargeBody(limit: number): string {
  return `request body larger than ${limit} bytes\n`;
}

/**
 * limitBody counts a request body of unknown length (chunked, or HTTP/2 without content-length) as
 * it streams to the backend. Past `limit` bytes the body stops (the upstream request fails) and,
 * when the backend has not answered yet, the client gets 413 instead of the 502 that failure would
 * give: the returned exchange then reads as closed to the proxy, which leaves it alone. A body
 * with a content-length is judged before the backend is called, so this is only for the rest.
 */
export function limitBody(ds: Downstream, limit: number): Downstream {
  return new LimitedBodyDownstream(ds, limit);
}

class LimitedBodyDownstream implements Downstream {
  readonly body: Readable;
  private isAnswered = false;

  constructor(
    private readonly inner: Downstream,
    limit: number,
  ) {
    let seen = 0;
    const counter = new Transform({
      transform: (chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void => {
        seen += chunk.length;
        if (seen <= limit) return done(null, chunk);
        inner.body.unpipe(counter);
        if (!inner.headersSent && !inner.isClosed) {
          sendLocalResponse(inner, 413, tooLargeBody(limit));
          this.isAnswered = true;
        }
        done(new BodyTooLargeError(limit));
      },
    });
    counter.on('error', () => undefined);
    inner.body.pipe(counter);
    this.body = counter;
  }

  get method(): string {
    return this.inner.method;
  }
  get authority(): string {
    return this.inner.authority;
  }
  get target(): string {
    return this.inner.target;
  }
  get headers(): IncomingHttpHeaders {
    return this.inner.headers;
  }
  get hasBody(): boolean {
    return this.inner.hasBody;
  }
  get out(): Writable {
    return this.inner.out;
  }
  get headersSent(): boolean {
    return this.isAnswered || this.inner.headersSent;
  }
  get isClosed(): boolean {
    return this.isAnswered || this.inner.isClosed;
  }
  get isAborted(): boolean {
    return this.inner.isAborted;
  }
  respond(status: number, headers: HeaderMap, options?: { endStream?: boolean; trailers?: () => HeaderMap | undefined }): void {
    if (!this.isAnswered) this.inner.respond(status, headers, options);
  }
  onClose(callback: () => void): void {
    this.inner.onClose(callback);
  }
  destroy(err?: Error): void {
    if (!this.isAnswered) this.inner.destroy(err);
  }
}
