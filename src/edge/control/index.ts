/** The edge's control API: a standalone `/v1` request handler over the store. */
export { createControlApi } from './control-api.js';
export type { ControlApi, ControlApiOptions } from './control-api.js';
export { createDnsVerifier, challengeName } from './dns-verifier.js';
export type { DomainVerifier } from './dns-verifier.js';
export * from './errors.js';
export type { RateLimitOptions } from './rate-limiter.js';
