import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * `tuna edge --workers N` with `listen.metrics`: the primary, not a worker, listens there, and a
 * scrape of `/metrics` answers for the whole edge. prom-client's AggregatorRegistry asks every
 * connected worker for its series over the cluster's IPC channel (EdgeMetrics.answerClusterPrimary)
 * and merges them; every worker's series carry its `worker` label, so none is summed into another's.
 * `/healthz` there is the primary's: 200, and 503 once it drains. Without `listen.metrics`, the
 * worker a `/metrics` request on the tunnel listener reached asks the primary (gatherNodeMetrics).
 */

/** MetricsEndpoint is where the config's `listen.metrics` says to listen. */
export interface MetricsEndpoint {
  host?: string;
  port: number;
}

/** PrimaryMetrics is the primary's metrics listener. */
export interface PrimaryMetrics {
  port: number;
  close(): Promise<void>;
}

let aggregator: Promise<{ clusterMetrics(): Promise<string> }> | undefined;

/** gatherNodeMetrics is every connected worker's series in one exposition text (in the primary only). */
export async function gatherNodeMetrics(): Promise<string> {
  // `default` (module.exports of this CommonJS package): a bundle's lazy chunk of a CommonJS
  // package exports only that, not the named exports Node's own import finds (hack/bundle.js)
  aggregator ??= import('prom-client').then(({ default: prom }) => new prom.AggregatorRegistry());
  return (await aggregator).clusterMetrics();
}

/** servePrimaryMetrics listens on `endpoint` (default host 127.0.0.1, as a worker would) with every worker's series. */
export async function servePrimaryMetrics(endpoint: MetricsEndpoint, isStopping: () => boolean): Promise<PrimaryMetrics> {
  const edge = await import('../edge/index.js');
  const server: Server = edge.createMetricsServer(gatherNodeMetrics, isStopping);
  await edge.listenOn(server, endpoint.port, endpoint.host ?? '127.0.0.1', 'the metrics listener');
  return { port: (server.address() as AddressInfo).port, close: () => edge.closeServer(server) };
}
