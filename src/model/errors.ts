/**
 * CodedError is the base of every error class of tuna's rooms (TunnelError, EdgeError,
 * DataPlaneError, WireError, …): one class per failure, each with a stable `code` that callers
 * and logs match on instead of parsing messages (the undici convention).
 */
export class CodedError extends Error {
  /** code is stable across releases; match on it, not on the message */
  readonly code: string;
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}
