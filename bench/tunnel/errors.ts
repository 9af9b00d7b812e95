/**
 * Errors of the tunnel benchmark, one class per failure with a stable `code`, so the orchestrator
 * can tell "this contender cannot run here" (reported in the table) from a broken measurement.
 */

/** BenchToolMissingError says a program the benchmark needs is not installed (run hack/bench-tools.sh). */
export class BenchToolMissingError extends Error {
  readonly code = 'TUNA_BENCH_TOOL_MISSING';
  constructor(readonly tool: string) {
    super(`${tool} is not installed, and hack/bench-tools.sh did not install it (see its output above; TUNA_BENCH_INSTALL=0 skips the install)`);
    this.name = 'BenchToolMissingError';
  }
}

/** BenchProcessError says a child process exited early, failed, or outlived its time bound. */
export class BenchProcessError extends Error {
  readonly code = 'TUNA_BENCH_PROCESS_FAILED';
  constructor(
    readonly processName: string,
    detail: string,
    readonly output = '',
  ) {
    super(`${processName}: ${detail}${output ? `\n${output}` : ''}`);
    this.name = 'BenchProcessError';
  }
}

/** BenchTimeoutError says a bounded wait (readiness, a transfer) ran out of time. */
export class BenchTimeoutError extends Error {
  readonly code = 'TUNA_BENCH_TIMEOUT';
  constructor(what: string, ms: number) {
    super(`${what}: no result within ${ms} ms`);
    this.name = 'BenchTimeoutError';
  }
}

/** BenchResultError says a load tool ran but its output does not hold a valid measurement. */
export class BenchResultError extends Error {
  readonly code = 'TUNA_BENCH_BAD_RESULT';
  constructor(message: string) {
    super(message);
    this.name = 'BenchResultError';
  }
}
