import { CliError } from './errors.js';

/**
 * Failures of the control-plane commands (`tuna keys|reserve|release`), one class per failure with
 * a stable `code` and the exit status of docs/cli.md. Statuses follow sysexits(3) as the rest of
 * the CLI does: 77 (EX_NOPERM) is the existing "the edge refused the key" status, 69
 * (EX_UNAVAILABLE) the existing "the edge cannot be reached". Messages never carry a key.
 */

/** ControlUnauthorizedError: 401, the API key is wrong, revoked, or not an API key at all. */
export class ControlUnauthorizedError extends CliError {
  constructor() {
    super('TUNA_CLI_CONTROL_UNAUTHORIZED', 'the edge refused the API key (401): it is wrong, revoked, or a tunnel key; check --api-key or TUNA_API_KEY', 77);
  }
}

/** ControlForbiddenError: 403, the key is valid but lacks the scope the operation needs. */
export class ControlForbiddenError extends CliError {
  constructor(scope: string) {
    super('TUNA_CLI_CONTROL_FORBIDDEN', `the API key lacks the scope for this (403): it needs the ${scope} scope`, 77);
  }
}

/** ControlNotFoundError: 404, no such record in the caller's account (EX_NOINPUT). */
export class ControlNotFoundError extends CliError {
  constructor(what: string) {
    super('TUNA_CLI_CONTROL_NOT_FOUND', `not found (404): ${what}`, 66);
  }
}

/** ControlConflictError: 409, held by another account, pool exhausted, or domain unverified (EX_CANTCREAT). */
export class ControlConflictError extends CliError {
  constructor(
    message: string,
    /** apiCode is the control API's own code (TUNA_STORE_CONFLICT, TUNA_STORE_POOL_EXHAUSTED, ...) */
    readonly apiCode: string,
  ) {
    super('TUNA_CLI_CONTROL_CONFLICT', `conflict (409): ${message}`, 73);
  }
}

/** ControlRateLimitedError: 429, too many failed authentications from this address (EX_TEMPFAIL). */
export class ControlRateLimitedError extends CliError {
  constructor(retryAfterSeconds: number | undefined) {
    const when = retryAfterSeconds === undefined ? 'later' : `in ${retryAfterSeconds} s`;
    super('TUNA_CLI_CONTROL_RATE_LIMITED', `the edge is rate-limiting this address after failed authentications (429); try again ${when}`, 75);
  }
}

/** ControlRejectedError: 400/413/415, the edge refused the request's content (EX_DATAERR). */
export class ControlRejectedError extends CliError {
  constructor(status: number, message: string, field: string | undefined) {
    super('TUNA_CLI_CONTROL_REJECTED', `the edge refused the request (${status}): ${message}${field === undefined ? '' : ` (field ${field})`}`, 65);
  }
}

/** ControlUnreachableError: the control API cannot be reached, or what answered is not one (EX_UNAVAILABLE). */
export class ControlUnreachableError extends CliError {
  constructor(message: string, options?: ErrorOptions) {
    super('TUNA_CLI_CONTROL_UNREACHABLE', `${message}; check --edge (the edge's tunnel listener URL) and that the edge runs in store mode`, 69, options);
  }
}

/** ControlServerError: the control API failed (5xx, or an answer of the wrong shape). */
export class ControlServerError extends CliError {
  constructor(message: string) {
    super('TUNA_CLI_CONTROL_SERVER', `${message}; see the edge's log`, 69);
  }
}

/** ControlErrorBody is the control API's error document, `{"error": {code, message, field?}}`. */
export interface ControlErrorBody {
  code?: string;
  message?: string;
  field?: string;
}

/**
 * errorForStatus maps a control API error answer onto the CLI's error for it. `scope` names what
 * the call needed, so a 403 can say which scope is missing (the edge's 403 deliberately does not).
 */
export function errorForStatus(status: number, body: ControlErrorBody, scope: string, retryAfter: string | undefined): CliError {
  const message = body.message ?? `HTTP ${status}`;
  switch (status) {
    case 401:
      return new ControlUnauthorizedError();
    case 403:
      return new ControlForbiddenError(scope);
    case 404:
      return new ControlNotFoundError(message);
    case 409:
      return new ControlConflictError(message, body.code ?? 'TUNA_STORE_CONFLICT');
    case 429: {
      const seconds = Number(retryAfter);
      return new ControlRateLimitedError(retryAfter !== undefined && Number.isFinite(seconds) ? Math.ceil(seconds) : undefined);
    }
    case 400:
    case 413:
    case 415:
      return new ControlRejectedError(status, message, body.field);
    default:
      return new ControlServerError(`the edge's control API answered ${status}${body.code === undefined ? '' : ` ${body.code}`}`);
  }
}

/** EdgeStoreOpenError: `tuna edge init` cannot open or migrate the store (EX_CONFIG, as a bad edge config). */
export class EdgeStoreOpenError extends CliError {
  constructor(message: string, options?: ErrorOptions) {
    super('TUNA_CLI_STORE_OPEN', message, 78, options);
  }
}

/** EdgeInitializedError: `tuna edge init` found accounts in the store; it mints the first admin key only (EX_CANTCREAT, as a 409). */
export class EdgeInitializedError extends CliError {
  constructor() {
    super('TUNA_CLI_EDGE_INITIALIZED', 'the store already has accounts; nothing was changed. Create more keys with an admin key: tuna keys create --scope admin', 73);
  }
}
