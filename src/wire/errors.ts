/**
 * Wire errors: failures of the tunnel protocol's shared machinery (the relay), the same on both
 * ends. Each has a stable `code` that callers and logs match on.
 */

import { CodedError } from '../model/index.js';
import type { TunaCode } from '../model/index.js';

/** WireError is the base class of every wire failure. */
export class WireError extends CodedError<TunaCode> {}

/** StreamGoneError: a relay's destination closed before the relay began (a client left with its answer on the way). */
export class StreamGoneError extends WireError {
  constructor(message = 'the destination stream closed before the relay began') {
    super('TUNA_STREAM_GONE', message);
  }
}
