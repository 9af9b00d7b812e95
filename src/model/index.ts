/** The route graph: types, canonical order, validation and diff, and one-line error descriptions (no I/O). */
export * from './types.js';
export * from './filters.js';
export * from './order.js';
export * from './validate.js';
export * from './diff.js';
export * from './status.js';
export * from './errors.js';
export * from './error-line.js';
export * from './policies.js';
export * from './jwt.js';
export * from './oidc.js';
export * from './ip-address.js';
export * from './address-pool.js';
