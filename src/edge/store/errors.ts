/**
 * Store errors: one class per failure, each with a stable `code` that the control API maps to an
 * HTTP status (conflict → 409, not found → 404, invalid → 400, pool exhausted → 409/503).
 * Messages name the field and the rule, never a secret.
 */

/** StoreError is the base of every error the store throws on purpose. */
export abstract class StoreError extends Error {
  /** code is stable across releases; match on it, not on the message */
  abstract readonly code: string;
}

/** StoreConflictError: the address (or name) is held by another account, or the request contradicts an existing record. */
export class StoreConflictError extends StoreError {
  readonly code = 'TUNA_STORE_CONFLICT';
  override readonly name = 'StoreConflictError';
}

/** StoreNotFoundError: no such record for this account (records of other accounts look absent too). */
export class StoreNotFoundError extends StoreError {
  readonly code = 'TUNA_STORE_NOT_FOUND';
  override readonly name = 'StoreNotFoundError';
}

/** StoreInvalidInputError: a field breaks a rule; `field` names it. */
export class StoreInvalidInputError extends StoreError {
  readonly code = 'TUNA_STORE_INVALID';
  override readonly name = 'StoreInvalidInputError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** StorePoolExhaustedError: every port or address of the pool is reserved. */
export class StorePoolExhaustedError extends StoreError {
  readonly code = 'TUNA_STORE_POOL_EXHAUSTED';
  override readonly name = 'StorePoolExhaustedError';
}

/** StoreQuotaExceededError: the account holds as many as its quota allows; `quota` names it. */
export class StoreQuotaExceededError extends StoreError {
  readonly code = 'TUNA_STORE_QUOTA_EXCEEDED';
  override readonly name = 'StoreQuotaExceededError';
  constructor(
    readonly quota: 'reservations' | 'tunnelKeys' | 'concurrentTunnels',
    readonly limit: number,
    held: number,
  ) {
    super(`quota ${quota} exceeded: the account holds ${held} of ${limit}`);
  }
}

/** StoreSchemaTooNewError: the database was migrated by a newer tuna; refusing to run an older one against it. */
export class StoreSchemaTooNewError extends StoreError {
  readonly code = 'TUNA_STORE_SCHEMA_TOO_NEW';
  override readonly name = 'StoreSchemaTooNewError';
}

/**
 * StoreCorruptRowError: a stored row does not decode (a column of the wrong type, JSON that is not
 * JSON); each problem names its column. A database edited by hand or by a broken migration gives
 * this, never a TypeError later. Messages name columns, never their values.
 */
export class StoreCorruptRowError extends StoreError {
  readonly code = 'TUNA_STORE_CORRUPT_ROW';
  override readonly name = 'StoreCorruptRowError';
  constructor(
    readonly table: string,
    readonly problems: readonly string[],
  ) {
    super(`corrupt ${table} row: ${problems.join('; ')}`);
  }
}

/** StoreClosedError: the store was used after close(). */
export class StoreClosedError extends StoreError {
  readonly code = 'TUNA_STORE_CLOSED';
  override readonly name = 'StoreClosedError';
}

/** UniqueViolation is internal: a driver saw a UNIQUE constraint fail; the store turns it into a conflict. */
export class UniqueViolation extends Error {
  override readonly name = 'UniqueViolation';
}
