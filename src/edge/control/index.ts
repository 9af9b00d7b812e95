/** The edge's control API server: a standalone `/v1` request handler over the store (the API itself is src/control-api). */
export { createControlApi } from './control-api.js';
export type { ControlApi, ControlApiOptions, ControlRoute } from './control-api.js';
export { createDnsVerifier, challengeName } from './dns-verifier.js';
export type { DomainVerifier } from './dns-verifier.js';
export type { PublicListeners } from './edge-info-route.js';
export type { OwnListener } from './address-ports.js';
export { FailureRateLimiter } from './rate-limiter.js';
export type { RateLimitOptions } from './rate-limiter.js';
export { DEFAULT_QUOTAS } from './quota-routes.js';
export type { QuotaDefaults } from './quota-routes.js';
export { DEFAULT_UNVERIFIED_DOMAIN_DAYS, UnverifiedDomainExpiry } from './domain-expiry.js';
export type { DomainExpiryOptions } from './domain-expiry.js';
