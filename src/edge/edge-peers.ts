/**
 * EdgePeers connects one worker of an edge node (`tuna edge --workers N`, src/cli/edge-workers.ts)
 * to the node's other workers, through node:cluster's primary: a control API change on one makes
 * the others re-read the store at once (docs/edge.md, "Workers").
 */
export interface EdgePeers {
  /** announce tells the other workers that this one changed the store */
  announce(): void;
  /** onAnnounce hears the other workers' announcements */
  onAnnounce(listener: () => void): void;
  /** nodeMetrics is every worker's `/metrics` series in one exposition text, gathered by the primary */
  nodeMetrics?(): Promise<string>;
}
