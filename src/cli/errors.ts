/** Errors the CLI reports to the user: one class per failure, a stable `code`, an exit status. */

import { CodedError } from '../model/index.js';
import type { TunaCode } from '../model/index.js';

/** CliError is a failure explained to the user in one line (no stack trace). */
export class CliError extends CodedError<TunaCode> {
  /** exitCode is the process exit status for this failure */
  readonly exitCode: number;
  constructor(code: TunaCode, message: string, exitCode = 1, options?: ErrorOptions) {
    super(code, message, options);
    this.exitCode = exitCode;
  }
}

/** UsageError: wrong flags or arguments (exit status 2, as getopt conventions have it). */
export class UsageError extends CliError {
  constructor(message: string) {
    super('TUNA_CLI_USAGE', message, 2);
  }
}

/** ManifestError: a manifest file cannot be read or parsed. */
export class ManifestError extends CliError {
  constructor(message: string, options?: ErrorOptions) {
    super('TUNA_CLI_MANIFEST', message, 1, options);
  }
}
