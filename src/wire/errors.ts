/**
 * Wire errors: failures of the tunnel protocol's shared machinery (the relay), the same on both
 * ends. Each has a stable `code` that callers and logs match on.
 */

/** WireError is the base class of every wire failure. */
export class WireError extends Error {
  /** code is stable across releases; match on it, not on the message. */
  readonly code: string;
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** StreamGoneError: a relay's destination closed before the relay began (a client left with its answer on the way). */
export class StreamGoneError extends WireError {
  constructor(message = 'the destination stream closed before the relay began') {
    super('TUNA_STREAM_GONE', message);
  }
}
