/**
 * The operator: the object cache (informers), the sync loop over the agent runtime, the edge
 * reconciler (reservations and tunnel keys), tunnel keys kept in a Secret, leader election, the
 * status writer and the event recorder. Only the CLI (`tuna operator`) sits above it.
 */
export * from './edge-reconciler.js';
export * from './event-recorder.js';
export * from './kube-objects.js';
export * from './leader-elector.js';
export * from './operator.js';
export * from './secret-tunnel-keys.js';
export * from './status-writer.js';
export * from './held-back.js';
export * from './log-line.js';
export * from './object-source.js';
export * from './container.js';
export * from './edge-settings.js';
export * from './secret-reader.js';
export * from './accepted-certificates.js';
export * from './health.js';
export * from './health-server.js';
export * from './request-metrics.js';
export * from './udp-metrics.js';
export * from './crd-reservations.js';
export * from './crd-reservation-status.js';
export * from './finalizers.js';
export * from './pooled-kube-config.js';
export * from './spec-changes.js';
export * from './status-lane.js';
export * from './process.js';
