import { CodedError } from '../model/index.js';
import type { ErrorBody } from './answers.js';
import type { ApiKeyScope } from './records.js';

/**
 * Control API failures: one class per failure, each with a stable `code`, and — for those the edge
 * answers with — its HTTP status. The edge throws them and answers `{"error": {code, message,
 * field?}}` (toErrorBody); the client turns an error answer back into the same class
 * (errorFromAnswer), so both ends and every consumer (CLI, operator) match on one set of classes.
 * Authentication failures carry no detail that would help guessing (RFC 6750 §3.1 lets the server
 * leave out the reason). Messages never carry a key.
 */

/**
 * ControlError is the base of every control API failure, on either end. Its code is a `string`,
 * not a TunaCode: a 409 or 5xx answer's code is passed through as the edge sent it.
 */
export abstract class ControlError extends CodedError {}

/** ControlAnswerError is a failure the edge answers with: an HTTP status and an error document. */
export abstract class ControlAnswerError extends ControlError {
  abstract readonly status: number;
  /** field names the request field at fault, when there is one */
  readonly field?: string;
}

/** answered builds the base of a failure with a fixed status and code (one line per class below). */
function answered<S extends number, C extends string>(status: S, code: C) {
  return class extends ControlAnswerError {
    readonly status: S = status;
    declare readonly code: C;
    constructor(message: string, options?: ErrorOptions) {
      super(code, message, options);
    }
  };
}

/** ControlInvalidRequestError (400): the body or a parameter breaks the schema; `field` names it. */
export class ControlInvalidRequestError extends answered(400, 'TUNA_CONTROL_INVALID') {
  constructor(
    message: string,
    override readonly field?: string,
  ) {
    super(message);
  }
}

/**
 * ControlPortUnavailableError (400): a port an address reservation asks for is outside the edge's
 * `addressPortRange` or is one of the edge's own listener ports on that address; `field` names it.
 */
export class ControlPortUnavailableError extends answered(400, 'TUNA_CONTROL_PORT_UNAVAILABLE') {
  constructor(
    message: string,
    override readonly field?: string,
  ) {
    super(message);
  }
}

/** ControlUnauthorizedError (401): no key, or a key that does not authenticate. Always the same message. */
export class ControlUnauthorizedError extends answered(401, 'TUNA_CONTROL_UNAUTHORIZED') {
  constructor(message = 'a valid API key is required') {
    super(message);
  }
}

/**
 * ControlForbiddenError (403): the key authenticates but lacks the scope the call needs. The edge
 * does not say which scope; the client fills `requiredScope` from the call it made.
 */
export class ControlForbiddenError extends answered(403, 'TUNA_CONTROL_FORBIDDEN') {
  constructor(
    message = 'the API key does not allow this call',
    readonly requiredScope?: ApiKeyScope,
  ) {
    super(message);
  }
}

/** ControlNotFoundError (404): no such endpoint, or no such record in the caller's account. */
export class ControlNotFoundError extends answered(404, 'TUNA_CONTROL_NOT_FOUND') {}

/** ControlMethodNotAllowedError (405): the path exists but not with this method. */
export class ControlMethodNotAllowedError extends answered(405, 'TUNA_CONTROL_METHOD_NOT_ALLOWED') {
  constructor(readonly allow: readonly string[]) {
    super(`method not allowed; use ${allow.join(', ')}`);
  }
}

/** ControlDomainUnverifiedError (409): the custom domain's DNS TXT record was not found. */
export class ControlDomainUnverifiedError extends answered(409, 'TUNA_CONTROL_DOMAIN_UNVERIFIED') {}

/**
 * ControlQuotaExceededError (409): the account holds as many reservations or live tunnel keys as its
 * quota allows (docs/edge-store.md "Quotas and unverified domains"); `field` names the quota (`reservations`, `tunnelKeys`).
 */
export class ControlQuotaExceededError extends answered(409, 'TUNA_CONTROL_QUOTA_EXCEEDED') {
  constructor(
    message: string,
    override readonly field?: string,
  ) {
    super(message);
  }
}

/** ControlBodyTooLargeError (413): the body exceeds the limit. */
export class ControlBodyTooLargeError extends answered(413, 'TUNA_CONTROL_BODY_TOO_LARGE') {}

/** ControlUnsupportedMediaTypeError (415): a body that is not application/json. */
export class ControlUnsupportedMediaTypeError extends answered(415, 'TUNA_CONTROL_UNSUPPORTED_MEDIA_TYPE') {}

/** ControlRateLimitedError (429): too many failed authentications from this client; `Retry-After` says when to come back. */
export class ControlRateLimitedError extends answered(429, 'TUNA_CONTROL_RATE_LIMITED') {
  constructor(
    readonly retryAfterSeconds: number | undefined,
    message = 'too many failed authentications; retry later',
  ) {
    super(message);
  }
}

/**
 * ControlConflictError (409): the address or name is held by another account, the pool is
 * exhausted, or the account is disabled. `code` is the store's (TUNA_STORE_CONFLICT,
 * TUNA_STORE_POOL_EXHAUSTED), passed through unchanged.
 */
export class ControlConflictError extends ControlAnswerError {
  readonly status = 409;
  constructor(message: string, code = 'TUNA_STORE_CONFLICT') {
    super(code, message);
  }
}

/**
 * ControlServerError (5xx, or an error status this client does not know): the control API failed;
 * see the edge's log. `code` is the answer's (TUNA_CONTROL_INTERNAL from the edge), or
 * TUNA_CONTROL_SERVER when the answer had none (a proxy's error page).
 */
export class ControlServerError extends ControlAnswerError {
  constructor(
    readonly status = 500,
    code = 'TUNA_CONTROL_INTERNAL',
    message = 'internal error',
  ) {
    super(code, message);
  }
}

/** ControlUnreachableError: the client got no answer, or what answered is not a tuna control API. */
export class ControlUnreachableError extends ControlError {
  constructor(message: string, options?: ErrorOptions) {
    super('TUNA_CONTROL_UNREACHABLE', message, options);
  }
}

/** ControlBadAnswerError: the edge answered with a document of the wrong shape (a version mismatch, or a bug). */
export class ControlBadAnswerError extends ControlError {
  constructor(message: string, options?: ErrorOptions) {
    super('TUNA_CONTROL_BAD_ANSWER', message, options);
  }
}

/** toErrorBody is the error document the edge answers a failure with. */
export function toErrorBody(err: ControlAnswerError): { error: ErrorBody } {
  return { error: { code: err.code, message: err.message, ...(err.field === undefined ? {} : { field: err.field }) } };
}

/** AnswerHeaders are the response headers errorFromAnswer reads. */
export interface AnswerHeaders {
  readonly retryAfter?: string | undefined;
  readonly allow?: string | undefined;
}

/**
 * errorFromAnswer turns an error answer back into its class, by status and (for 409) code, the
 * inverse of toErrorBody. `scope` is the scope the call needed, kept on a 403.
 */
export function errorFromAnswer(status: number, body: ErrorBody, headers: AnswerHeaders = {}, scope?: ApiKeyScope): ControlAnswerError {
  const message = body.message ?? `HTTP ${status}`;
  switch (status) {
    case 400:
      if (body.code === 'TUNA_CONTROL_PORT_UNAVAILABLE') return new ControlPortUnavailableError(message, body.field);
      return new ControlInvalidRequestError(message, body.field);
    case 401:
      return new ControlUnauthorizedError(message);
    case 403:
      return new ControlForbiddenError(message, scope);
    case 404:
      return new ControlNotFoundError(message);
    case 405:
      return new ControlMethodNotAllowedError((headers.allow ?? '').split(',').map((m) => m.trim()).filter((m) => m !== ''));
    case 409:
      if (body.code === 'TUNA_CONTROL_QUOTA_EXCEEDED') return new ControlQuotaExceededError(message, body.field);
      return body.code === 'TUNA_CONTROL_DOMAIN_UNVERIFIED' ? new ControlDomainUnverifiedError(message) : new ControlConflictError(message, body.code);
    case 413:
      return new ControlBodyTooLargeError(message);
    case 415:
      return new ControlUnsupportedMediaTypeError(message);
    case 429: {
      const seconds = Number(headers.retryAfter);
      return new ControlRateLimitedError(headers.retryAfter !== undefined && Number.isFinite(seconds) ? Math.ceil(seconds) : undefined, message);
    }
    default:
      return new ControlServerError(status, body.code ?? 'TUNA_CONTROL_SERVER', message);
  }
}
