/**
 * The operator's one-line error descriptions live in src/model/error-line.ts, so that the CLI's
 * logger can use them without importing the operator room (and the Kubernetes client with it:
 * issue 13, a lean `tuna http`). Re-exported here, where the operator's code and tests find them.
 */
export { errorLine, isAbortError } from '../model/index.js';
