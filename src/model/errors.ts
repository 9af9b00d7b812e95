/** TunaCode is the form of every stable error code: `TUNA_` and upper-case words (`TUNA_TUNNEL_CLOSED`). */
export type TunaCode = `TUNA_${string}`;

/**
 * CodedError is the base of every error class of tuna's rooms (TunnelError, EdgeError,
 * DataPlaneError, WireError, ControlError, StoreError, AcmeError, CliError, …): one class per
 * failure, each with a stable `code` that callers and logs match on instead of parsing messages
 * (the undici convention). `C` narrows the code's type; a room's base adds nothing but that.
 * The default is `string` because the control API client passes through the code an edge answered.
 */
export class CodedError<C extends string = string> extends Error {
  /** code is stable across releases; match on it, not on the message */
  readonly code: C;
  constructor(code: C, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}
