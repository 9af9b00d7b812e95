/**
 * Errors of the data plane. Each failure has one class with a stable `code`, so callers and logs can
 * tell them apart without parsing messages (the undici convention).
 */

import { CodedError } from '../model/index.js';
import type { TunaCode } from '../model/index.js';

/** DataPlaneError is the base of every data-plane error. */
export class DataPlaneError extends CodedError<TunaCode> {}

/** NoReadyEndpointError: the Service port has no ready endpoint (answered with 503). */
export class NoReadyEndpointError extends DataPlaneError {
  constructor(service: string) {
    super('TUNA_NO_READY_ENDPOINT', `no ready endpoint for service ${service}`);
  }
}

/** BackendConnectError: the backend refused or reset the connection (answered with 502). */
export class BackendConnectError extends DataPlaneError {
  constructor(target: string, cause: unknown) {
    super('TUNA_BACKEND_CONNECT', `backend ${target} failed: ${errorCode(cause)}`, { cause });
  }
}

/** BackendTimeoutError: a request or backend-request timeout expired (answered with 504). */
export class BackendTimeoutError extends DataPlaneError {
  constructor(kind: 'request' | 'backendRequest', ms: number) {
    super('TUNA_BACKEND_TIMEOUT', `${kind} timeout of ${ms} ms expired`);
  }
}

/** MalformedRequestError: the request cannot be routed as sent (answered with 400). */
export class MalformedRequestError extends DataPlaneError {
  constructor(message: string) {
    super('TUNA_MALFORMED_REQUEST', message);
  }
}

/** errorCode returns a Node error's `code` (ECONNREFUSED …) or its message. */
export function errorCode(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return err instanceof Error ? err.message : String(err);
}
