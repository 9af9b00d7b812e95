/**
 * The operator's one-line error descriptions live in src/model/error-line.ts, so that the CLI's
 * logger can use them without importing the operator room (and the Kubernetes client with it,
 * which `tuna http` must not load: docs/architecture.md). Re-exported here, where the operator's code and tests find them.
 */
export { errorLine, isAbortError } from '../model/index.js';
