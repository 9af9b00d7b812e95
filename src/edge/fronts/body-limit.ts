import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { EdgeError } from '../errors.js';

/** EdgeBodyTooLargeError: a request body passed the edge's configured limit while streaming. */
export class EdgeBodyTooLargeError extends EdgeError {
  constructor(limit: number) {
    super('TUNA_EDGE_BODY_TOO_LARGE', `request body exceeds ${limit} bytes`);
  }
}

/**
 * BodyLimit passes bytes through and fails once more than `limit` went by. Used only when a limit
 * is configured and the length is not declared up front (chunked, HTTP/2 without content-length).
 */
export class BodyLimit extends Transform {
  readonly #limit: number;
  #seen = 0;
  /** isExceeded turns true before the error is raised, so a stream's close handler can tell why it ended. */
  isExceeded = false;

  constructor(limit: number) {
    super();
    this.#limit = limit;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#seen += chunk.length;
    if (this.#seen > this.#limit) {
      this.isExceeded = true;
      callback(new EdgeBodyTooLargeError(this.#limit));
    }
    else callback(null, chunk);
  }
}
