/** HealthSources are what the operator's health is read from (each a small view of a real part). */
export interface HealthSources {
  /** the object cache has listed every watched kind (KubeObjects.hasSynced) */
  hasSynced(): boolean;
  /** each binding the tunnel manager holds: connections open and wanted (TunnelManager.status) */
  tunnels(): readonly { bindingId: string; open: number; wanted: number }[];
  /** this replica holds the Lease (always true without leader election) */
  isLeader(): boolean;
}

/** Readiness is the answer of /readyz: ready or not, and why not. */
export interface Readiness {
  isReady: boolean;
  /** one line per unmet condition, empty when ready */
  reasons: string[];
}

/**
 * OperatorHealth answers the operator's probes and renders its metrics. Ready means: the cache
 * has synced, a sync has succeeded since start, and every binding the tunnel manager holds has at
 * least one connection open — so a new pod of a rolling upgrade turns ready only once it serves
 * traffic (the make-before-break of docs/protocol.md, across pods). A follower is ready on the
 * same terms: it serves tunnels with the leader's keys. A later failed sync does not make a
 * replica unready: it still serves the last graph.
 */
export class OperatorHealth {
  readonly #sources: HealthSources;
  readonly #now: () => number;
  #syncs = 0;
  #failures = 0;
  #bindings = 0;
  #heldBack = 0;
  #lastSyncAt: number | undefined;

  constructor(sources: HealthSources, now: () => number = Date.now) {
    this.#sources = sources;
    this.#now = now;
  }

  /** recordSync counts a sync that succeeded, with the bindings it published and held back. */
  recordSync(bindings: number, heldBack: number): void {
    this.#syncs += 1;
    this.#bindings = bindings;
    this.#heldBack = heldBack;
    this.#lastSyncAt = this.#now();
  }

  /** recordFailure counts a sync that failed (it is retried). */
  recordFailure(): void {
    this.#failures += 1;
  }

  /** readiness says whether /readyz answers 200, and what is missing otherwise. */
  readiness(): Readiness {
    const reasons: string[] = [];
    if (!this.#sources.hasSynced()) reasons.push('the object cache has not listed every watched kind yet');
    else if (this.#syncs === 0) reasons.push('no sync has succeeded yet');
    const down = this.#sources.tunnels().filter((t) => t.open === 0);
    if (down.length > 0) reasons.push(`no tunnel connection open for ${down.map((t) => t.bindingId).join(', ')}`);
    return { isReady: reasons.length === 0, reasons };
  }

  /** metrics renders the Prometheus text exposition format (version 0.0.4). */
  metrics(): string {
    const tunnels = this.#sources.tunnels();
    const sum = (pick: (t: { open: number; wanted: number }) => number) => tunnels.reduce((n, t) => n + pick(t), 0);
    const lines: string[] = [];
    const metric = (name: string, type: 'gauge' | 'counter', help: string, samples: [string, number][]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples.map(([labels, v]) => `${name}${labels} ${v}`));
    };
    metric('tuna_operator_ready', 'gauge', 'Whether /readyz answers 200 (cache synced, a sync succeeded, every held binding has a connection).', [['', this.readiness().isReady ? 1 : 0]]);
    metric('tuna_operator_leader', 'gauge', 'Whether this replica holds the Lease and writes (1 without leader election).', [['', this.#sources.isLeader() ? 1 : 0]]);
    metric('tuna_operator_syncs_total', 'counter', 'Syncs of the cluster to the edge, tunnels and statuses, by result.', [
      ['{result="success"}', this.#syncs],
      ['{result="failure"}', this.#failures],
    ]);
    metric('tuna_operator_bindings', 'gauge', 'Bindings the last successful sync published.', [['', this.#bindings]]);
    metric('tuna_operator_bindings_held_back', 'gauge', 'Bindings the last successful sync held back (no reservation or key yet).', [['', this.#heldBack]]);
    metric('tuna_operator_last_sync_timestamp_seconds', 'gauge', 'When the last successful sync ended (Unix time; 0 before the first).', [['', (this.#lastSyncAt ?? 0) / 1000]]);
    metric('tuna_operator_tunnel_bindings', 'gauge', 'Bindings the tunnel manager holds connections for.', [['', tunnels.length]]);
    metric('tuna_operator_tunnel_connections', 'gauge', 'Tunnel connections to the edge, open and wanted.', [
      ['{state="open"}', sum((t) => t.open)],
      ['{state="wanted"}', sum((t) => t.wanted)],
    ]);
    return `${lines.join('\n')}\n`;
  }
}
