import * as api from '../control-api/index.js';
import type { ControlAnswerError, ControlError } from '../control-api/index.js';
import type { TunaCode } from '../model/index.js';
import { CliError } from './errors.js';

/**
 * How the CLI reports control API failures: ONE table from the control API's error classes
 * (src/control-api/errors.ts, shared with the edge and the operator) to the CLI's stable
 * `TUNA_CLI_*` code, the exit status of docs/cli.md and the line with its hint. Statuses follow
 * sysexits(3) as the rest of the CLI does: 77 (EX_NOPERM) is the existing "the edge refused the
 * key" status, 69 (EX_UNAVAILABLE) the existing "the edge cannot be reached". Lines never carry a key.
 */

/** ControlExit is how one control API failure ends a command. */
interface ControlExit<E extends ControlError> {
  readonly type: abstract new (...args: never[]) => E;
  readonly code: TunaCode;
  readonly exitCode: number;
  readonly line: (err: E) => string;
}

function exit<E extends ControlError>(type: ControlExit<E>['type'], code: TunaCode, exitCode: number, line: (err: E) => string): ControlExit<ControlError> {
  return { type, code, exitCode, line: line as (err: ControlError) => string };
}

const rejected = (err: ControlAnswerError) => `the edge refused the request (${err.status}): ${err.message}${err.field === undefined ? '' : ` (field ${err.field})`}`;
const conflict = (err: ControlError) => `conflict (409): ${err.message}`;
const serverFailed = (err: ControlAnswerError) => `the edge's control API answered ${err.status} ${err.code}; see the edge's log`;

/** CONTROL_EXITS maps every control API failure onto the CLI's code, exit status and line. */
export const CONTROL_EXITS: readonly ControlExit<ControlError>[] = [
  exit(api.ControlUnauthorizedError, 'TUNA_CLI_CONTROL_UNAUTHORIZED', 77, () => 'the edge refused the API key (401): it is wrong, revoked, or a tunnel key; check --api-key or TUNA_API_KEY'),
  exit(api.ControlForbiddenError, 'TUNA_CLI_CONTROL_FORBIDDEN', 77, (e) => `the API key lacks the scope for this (403): it needs the ${e.requiredScope ?? 'right'} scope`),
  exit(api.ControlNotFoundError, 'TUNA_CLI_CONTROL_NOT_FOUND', 66, (e) => `not found (404): ${e.message}`),
  exit(api.ControlConflictError, 'TUNA_CLI_CONTROL_CONFLICT', 73, conflict),
  exit(api.ControlDomainUnverifiedError, 'TUNA_CLI_CONTROL_CONFLICT', 73, conflict),
  exit(api.ControlQuotaExceededError, 'TUNA_CLI_CONTROL_CONFLICT', 73, conflict),
  exit(api.ControlRateLimitedError, 'TUNA_CLI_CONTROL_RATE_LIMITED', 75, (e) =>
    `the edge is rate-limiting this address after failed authentications (429); try again ${e.retryAfterSeconds === undefined ? 'later' : `in ${e.retryAfterSeconds} s`}`,
  ),
  exit(api.ControlInvalidRequestError, 'TUNA_CLI_CONTROL_REJECTED', 65, rejected),
  exit(api.ControlPortUnavailableError, 'TUNA_CLI_CONTROL_REJECTED', 65, rejected),
  exit(api.ControlBodyTooLargeError, 'TUNA_CLI_CONTROL_REJECTED', 65, rejected),
  exit(api.ControlUnsupportedMediaTypeError, 'TUNA_CLI_CONTROL_REJECTED', 65, rejected),
  exit(api.ControlMethodNotAllowedError, 'TUNA_CLI_CONTROL_SERVER', 69, serverFailed),
  exit(api.ControlServerError, 'TUNA_CLI_CONTROL_SERVER', 69, serverFailed),
  exit(api.ControlBadAnswerError, 'TUNA_CLI_CONTROL_SERVER', 69, (e) => `${e.message}; see the edge's log`),
  exit(api.ControlUnreachableError, 'TUNA_CLI_CONTROL_UNREACHABLE', 69, (e) => `${e.message}; check --edge (the edge's tunnel listener URL) and that the edge runs in store mode`),
];

/** controlCliError turns a control API failure into the CliError the command ends with (undefined for any other error). */
export function controlCliError(err: unknown): CliError | undefined {
  const row = CONTROL_EXITS.find((r) => err instanceof r.type);
  if (row === undefined) return undefined;
  return new CliError(row.code, row.line(err as ControlError), row.exitCode, { cause: err });
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
