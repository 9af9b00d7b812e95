/** ACME errors: one class per failure with a stable `code`; server problems carry RFC 8555 §6.7 `type`/`detail`. */

import { CodedError } from '../../model/index.js';
import type { TunaCode } from '../../model/index.js';

/** AcmeProblem is the part of an RFC 7807 problem document the edge keeps. */
export interface AcmeProblem {
  type: string;
  detail: string;
  status?: number;
}

/** AcmeError is the base class of ACME failures. */
export class AcmeError extends CodedError<TunaCode> {
  /** problem is the server's problem document, when there was one. */
  readonly problem: AcmeProblem | undefined;
  constructor(code: TunaCode, message: string, problem?: AcmeProblem, options?: ErrorOptions) {
    super(code, problem === undefined ? message : `${message}: ${problem.type}: ${problem.detail}`, options);
    this.problem = problem;
  }
}

/** AcmeTransportError: the ACME server could not be reached or answered something that is not ACME. */
export class AcmeTransportError extends AcmeError {
  constructor(message: string, options?: ErrorOptions) {
    super('TUNA_ACME_TRANSPORT', message, undefined, options);
  }
}

/** AcmeRequestError: the server refused a request with a problem document (RFC 8555 §6.7). */
export class AcmeRequestError extends AcmeError {
  constructor(url: string, problem: AcmeProblem) {
    super('TUNA_ACME_REQUEST', `ACME request to ${url} failed`, problem);
  }
}

/** AcmeBadNonceError: the server kept rejecting our nonces after every retry (RFC 8555 §6.5). */
export class AcmeBadNonceError extends AcmeError {
  constructor(url: string, problem: AcmeProblem) {
    super('TUNA_ACME_BAD_NONCE', `ACME server rejected every nonce for ${url}`, problem);
  }
}

/** AcmeChallengeError: an authorization became invalid (the server could not validate our challenge). */
export class AcmeChallengeError extends AcmeError {
  constructor(hostname: string, problem: AcmeProblem | undefined) {
    super('TUNA_ACME_CHALLENGE_FAILED', `ACME authorization for ${hostname} is invalid`, problem);
  }
}

/** AcmeUnsupportedChallengeError: the server offered no challenge type this edge answers. */
export class AcmeUnsupportedChallengeError extends AcmeError {
  constructor(hostname: string, offered: readonly string[]) {
    super('TUNA_ACME_NO_CHALLENGE', `no supported challenge for ${hostname} (offered: ${offered.join(', ') || 'none'})`);
  }
}

/** AcmeOrderError: an order became invalid or lacked what RFC 8555 §7.1.3 promises. */
export class AcmeOrderError extends AcmeError {
  constructor(message: string, problem?: AcmeProblem) {
    super('TUNA_ACME_ORDER_INVALID', message, problem);
  }
}

/** AcmeTimeoutError: an authorization or order stayed pending past the poll budget. */
export class AcmeTimeoutError extends AcmeError {
  constructor(what: string) {
    super('TUNA_ACME_TIMEOUT', `${what} did not complete in time`);
  }
}

/** AcmeNotAllowedError: the hostname is not one the edge may get a certificate for (not reserved). */
export class AcmeNotAllowedError extends AcmeError {
  constructor(hostname: string) {
    super('TUNA_ACME_NOT_ALLOWED', `${hostname} is not a reserved hostname of this edge`);
  }
}
