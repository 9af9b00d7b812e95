/**
 * Control API errors: one class per failure with a stable `code` and the HTTP status it answers
 * with. Authentication failures carry no detail that would help guessing (RFC 6750 §3.1 lets the
 * server leave out the reason).
 */

/** ControlError is the base of every error the control API answers with on purpose. */
export abstract class ControlError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  /** field names the request field at fault, when there is one */
  readonly field?: string;
}

/** ControlInvalidRequestError (400): the body or a parameter breaks the schema; `field` names it. */
export class ControlInvalidRequestError extends ControlError {
  readonly code = 'TUNA_CONTROL_INVALID';
  readonly status = 400;
  override readonly name = 'ControlInvalidRequestError';
  constructor(
    message: string,
    override readonly field?: string,
  ) {
    super(message);
  }
}

/** ControlUnauthorizedError (401): no key, or a key that does not authenticate. Always the same message. */
export class ControlUnauthorizedError extends ControlError {
  readonly code = 'TUNA_CONTROL_UNAUTHORIZED';
  readonly status = 401;
  override readonly name = 'ControlUnauthorizedError';
  constructor() {
    super('a valid API key is required');
  }
}

/** ControlForbiddenError (403): the key authenticates but lacks the scope the call needs. */
export class ControlForbiddenError extends ControlError {
  readonly code = 'TUNA_CONTROL_FORBIDDEN';
  readonly status = 403;
  override readonly name = 'ControlForbiddenError';
  constructor() {
    super('the API key does not allow this call');
  }
}

/** ControlNotFoundError (404): no such route or record. */
export class ControlNotFoundError extends ControlError {
  readonly code = 'TUNA_CONTROL_NOT_FOUND';
  readonly status = 404;
  override readonly name = 'ControlNotFoundError';
}

/** ControlMethodNotAllowedError (405): the path exists but not with this method. */
export class ControlMethodNotAllowedError extends ControlError {
  readonly code = 'TUNA_CONTROL_METHOD_NOT_ALLOWED';
  readonly status = 405;
  override readonly name = 'ControlMethodNotAllowedError';
  constructor(readonly allow: readonly string[]) {
    super(`method not allowed; use ${allow.join(', ')}`);
  }
}

/** ControlDomainUnverifiedError (409): the custom domain's DNS TXT record was not found. */
export class ControlDomainUnverifiedError extends ControlError {
  readonly code = 'TUNA_CONTROL_DOMAIN_UNVERIFIED';
  readonly status = 409;
  override readonly name = 'ControlDomainUnverifiedError';
}

/** ControlBodyTooLargeError (413): the body exceeds the limit. */
export class ControlBodyTooLargeError extends ControlError {
  readonly code = 'TUNA_CONTROL_BODY_TOO_LARGE';
  readonly status = 413;
  override readonly name = 'ControlBodyTooLargeError';
}

/** ControlUnsupportedMediaTypeError (415): a body that is not application/json. */
export class ControlUnsupportedMediaTypeError extends ControlError {
  readonly code = 'TUNA_CONTROL_UNSUPPORTED_MEDIA_TYPE';
  readonly status = 415;
  override readonly name = 'ControlUnsupportedMediaTypeError';
}

/** ControlRateLimitedError (429): too many failed authentications from this client. */
export class ControlRateLimitedError extends ControlError {
  readonly code = 'TUNA_CONTROL_RATE_LIMITED';
  readonly status = 429;
  override readonly name = 'ControlRateLimitedError';
  constructor(readonly retryAfterSeconds: number) {
    super('too many failed authentications; retry later');
  }
}
