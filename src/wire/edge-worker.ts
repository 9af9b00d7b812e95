/**
 * Edge workers (docs/protocol.md §9.8): an edge node may run N worker processes
 * that share its listeners, and a tunnel connection lands on one of them. The edge names the
 * worker in its 101 answer, so an agent can hold one connection per worker and every worker has
 * every binding.
 */

/** HEADER_EDGE_WORKER is the 101 response header `<index>/<count>` naming the worker the connection reached (absent: one process). */
export const HEADER_EDGE_WORKER = 'tuna-edge-worker';

/** EdgeWorker names one worker of an edge node: its index (0-based) among `count`. */
export interface EdgeWorker {
  index: number;
  count: number;
}

/** MAX_EDGE_WORKERS bounds the worker count an edge may announce (and an agent will dial for). */
export const MAX_EDGE_WORKERS = 256;

/** formatEdgeWorker renders the header value. */
export function formatEdgeWorker(worker: EdgeWorker): string {
  return `${worker.index}/${worker.count}`;
}

/** parseEdgeWorker reads the header value; anything malformed or out of range is undefined (treated as one process). */
export function parseEdgeWorker(value: string | undefined): EdgeWorker | undefined {
  const m = /^(\d{1,3})\/(\d{1,3})$/.exec(value ?? '');
  if (m === null) return undefined;
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_EDGE_WORKERS || index >= count) return undefined;
  return { index, count };
}
