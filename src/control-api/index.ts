/**
 * The control API, defined once for both ends: the records and their io-ts codecs, the
 * request and answer codecs, the error classes (status and `TUNA_*` code each) and the client.
 * The edge (src/edge/control) serves it; the CLI and the operator call it through ControlClient.
 * It imports only src/model and the io-ts helpers; nothing here knows the edge, the CLI or the operator.
 */
export * from './records.js';
export * from './answers.js';
export * from './requests.js';
export * from './errors.js';
export { edgeBindingId } from './binding-ids.js';
export { parseSelector, selectorQuery, toQuery } from './query.js';
export type { AuditQuery } from './query.js';
export { ControlClient } from './client.js';
export type { ControlEndpoint } from './client.js';
export { TUNA_VERSION } from './version.js';
