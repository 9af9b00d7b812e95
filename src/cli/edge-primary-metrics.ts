import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * `tuna edge --workers N` with `listen.metrics`: the primary, not a worker, listens there, and a
 * scrape of `/metrics` answers for the whole edge. prom-client's AggregatorRegistry asks every
 * connected worker for its series over the cluster's IPC channel (EdgeMetrics.answerClusterPrimary)
 * and merges them; every worker's series carry its `worker` label, so none is summed into another's.
 * `/healthz` there is the primary's: 200, and 503 once it drains.
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

/** servePrimaryMetrics listens on `endpoint` (default host 127.0.0.1, as a worker would) with every worker's series. */
export async function servePrimaryMetrics(endpoint: MetricsEndpoint, isStopping: () => boolean): Promise<PrimaryMetrics> {
  const [{ AggregatorRegistry }, edge] = await Promise.all([import('prom-client'), import('../edge/index.js')]);
  const aggregator = new AggregatorRegistry();
  const server: Server = edge.createMetricsServer(() => aggregator.clusterMetrics(), isStopping);
  await edge.listenOn(server, endpoint.port, endpoint.host ?? '127.0.0.1', 'the metrics listener');
  return { port: (server.address() as AddressInfo).port, close: () => edge.closeServer(server) };
}
