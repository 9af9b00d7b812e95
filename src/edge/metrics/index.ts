/** The edge's metrics: the counters (`EdgeMetrics`, prom-client) and where `/metrics` is served. */
export { EdgeMetrics, REQUEST_SECONDS_BUCKETS, statusClass } from './metrics.js';
export type { CertificateExpiry, TunnelCounts, PublicFront, StatusClass } from './metrics.js';
export { adminKeyAuthorizer, createMetricsServer, sendMetrics, sendMetricsUnauthorized } from './metrics-endpoint.js';
export type { MetricsAuthorizer } from './metrics-endpoint.js';
