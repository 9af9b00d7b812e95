/**
 * Store errors: one class per failure, each with a stable `code` that the control API maps to an
 * HTTP status (conflict → 409, not found → 404, invalid → 400, pool exhausted → 409/503).
 * Messages name the field and the rule, never a secret.
 */

import { CodedError } from '../../model/index.js';
import type { TunaCode } from '../../model/index.js';

/** StoreError is the base of every error the store throws on purpose. */
export abstract class StoreError extends CodedError<TunaCode> {}

/** StoreConflictError: the address (or name) is held by another account, or the request contradicts an existing record. */
export class StoreConflictError extends StoreError {
  constructor(message: string) {
    super('TUNA_STORE_CONFLICT', message);
  }
}

/** StoreNotFoundError: no such record for this account (records of other accounts look absent too). */
export class StoreNotFoundError extends StoreError {
  constructor(message: string) {
    super('TUNA_STORE_NOT_FOUND', message);
  }
}

/** StoreInvalidInputError: a field breaks a rule; `field` names it. */
export class StoreInvalidInputError extends StoreError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super('TUNA_STORE_INVALID', `${field}: ${message}`);
  }
}

/** StorePoolExhaustedError: every port or address of the pool is reserved. */
export class StorePoolExhaustedError extends StoreError {
  constructor(message: string) {
    super('TUNA_STORE_POOL_EXHAUSTED', message);
  }
}

/** StoreQuotaExceededError: the account holds as many as its quota allows; `quota` names it. */
export class StoreQuotaExceededError extends StoreError {
  constructor(
    readonly quota: 'reservations' | 'tunnelKeys' | 'concurrentTunnels',
    readonly limit: number,
    held: number,
  ) {
    super('TUNA_STORE_QUOTA_EXCEEDED', `quota ${quota} exceeded: the account holds ${held} of ${limit}`);
  }
}

/** StoreSchemaTooNewError: the database was migrated by a newer tuna; refusing to run an older one against it. */
export class StoreSchemaTooNewError extends StoreError {
  constructor(message: string) {
    super('TUNA_STORE_SCHEMA_TOO_NEW', message);
  }
}

/**
 * StoreCorruptRowError: a stored row does not decode (a column of the wrong type, JSON that is not
 * JSON); each problem names its column. A database edited by hand or by a broken migration gives
 * this, never a TypeError later. Messages name columns, never their values.
 */
export class StoreCorruptRowError extends StoreError {
  constructor(
    readonly table: string,
    readonly problems: readonly string[],
  ) {
    super('TUNA_STORE_CORRUPT_ROW', `corrupt ${table} row: ${problems.join('; ')}`);
  }
}

/** StoreClosedError: the store was used after close(). */
export class StoreClosedError extends StoreError {
  constructor(message: string) {
    super('TUNA_STORE_CLOSED', message);
  }
}

/**
 * StoreUnavailableError: the database could not be reached (the connection was refused, reset or
 * ended, or the server is shutting down or starting); the same call may succeed later.
 */
export class StoreUnavailableError extends StoreError {
  constructor(message: string, options?: ErrorOptions) {
    super('TUNA_STORE_UNAVAILABLE', message, options);
  }
}

/** UniqueViolation is internal: a driver saw a UNIQUE constraint fail; the store turns it into a conflict (so it is no StoreError). */
export class UniqueViolation extends CodedError<TunaCode> {
  constructor(message: string) {
    super('TUNA_STORE_UNIQUE_VIOLATION', message);
  }
}
