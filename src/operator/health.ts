import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** HealthSources are what the operator's health is read from (each a small view of a real part). */
export interface HealthSources {
  /** the object cache has listed every watched kind (KubeObjects.hasSynced) */
  hasSynced(): boolean;
  /** each binding the tunnel manager holds: connections open and wanted (TunnelManager.status) */
  tunnels(): readonly { bindingId: string; open: number; wanted: number }[];
  /** this replica holds the Lease (always true without leader election) */
  isLeader(): boolean;
  /** a change has arrived that no sync has taken up yet (Operator.hasPendingChange); absent: never */
  hasPendingChange?(): boolean;
  /** the certificates HTTPS listeners terminate with (AcceptedCertificates.expiries); absent: none */
  certificates?(): readonly { secret: string; notAfter: number }[];
}

/** EdgePath is how the operator reaches the edge: its control API (the leader's syncs) or a tunnel dial (every replica). */
export type EdgePath = 'control' | 'tunnel';

/** NETWORK_CODES are the error codes of a connection attempt that never reached the edge. */
const NETWORK_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/**
 * isUnreachable says whether an error (or one of its causes) is a failure to reach the edge at
 * all: the control client's TUNA_CONTROL_UNREACHABLE, or a socket error code of a dial. A refused
 * key or a bad answer is the edge speaking, not unreachable.
 */
export function isUnreachable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'TUNA_CONTROL_UNREACHABLE' || (typeof code === 'string' && NETWORK_CODES.has(code))) return true;
  }
  return false;
}

/** Readiness is the answer of /readyz: ready or not, and why not. */
export interface Readiness {
  isReady: boolean;
  /** one line per unmet condition, empty when ready */
  reasons: string[];
}

/** SyncOutcome is how a sync ended, as the sync duration histogram labels it. */
export type SyncOutcome = 'success' | 'failure';

/**
 * SYNC_SECONDS_BUCKETS are the sync duration histogram's buckets: a sync with nothing to do is
 * milliseconds, a first reconcile of thousands of bindings is seconds (10.9 s in the
 * scale benchmark).
 */
export const SYNC_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * OperatorHealth answers the operator's probes and renders its metrics. Ready means: the cache
 * has synced, a sync has succeeded since start, and every binding the tunnel manager holds has at
 * least one connection open — so a new pod of a rolling upgrade turns ready only once it serves
 * traffic (the make-before-break of docs/protocol.md, across pods). A follower is ready on the
 * same terms: it serves tunnels with the leader's keys. A later failed sync does not make a
 * replica unready: it still serves the last graph.
 *
 * The metrics live in a prom-client `Registry` of this object's own (never prom-client's global
 * one: several operators in one test process must not share counters); other parts' registries
 * (the data plane's request counter, RequestMetrics) are rendered after its own.
 */
export class OperatorHealth {
  readonly #sources: HealthSources;
  readonly #now: () => number;
  readonly #registry = new Registry();
  readonly #exposition: Registry;
  #syncs = 0;
  #bindings = 0;
  #heldBack = 0;
  #deferred = 0;
  #lastSyncAt: number | undefined;
  readonly #syncsTotal: Counter<'result'>;
  readonly #syncSeconds: Histogram<'result'>;
  readonly #phaseSeconds: Counter<'phase'>;
  readonly #reconnects: Counter;
  readonly #tunnelErrors: Counter;
  readonly #unreachable: Counter<'path'>;

  constructor(sources: HealthSources, now: () => number = Date.now, parts: readonly Registry[] = []) {
    this.#sources = sources;
    this.#now = now;
    const registers = [this.#registry];
    // Gauges read at scrape time (collect) cost nothing between scrapes.
    const gauge = (name: string, help: string, read: () => number): void => {
      new Gauge({ name, help, registers, collect: function (this: Gauge) { this.set(read()); } });
    };
    gauge('tuna_operator_ready', 'Whether /readyz answers 200 (cache synced, a sync succeeded, every held binding has a connection).', () => (this.readiness().isReady ? 1 : 0));
    gauge('tuna_operator_leader', 'Whether this replica holds the Lease and writes (1 without leader election).', () => (this.#sources.isLeader() ? 1 : 0));
    this.#syncsTotal = new Counter({ name: 'tuna_operator_syncs_total', help: 'Syncs of the cluster to the edge, tunnels and statuses, by result.', labelNames: ['result'], registers });
    for (const result of ['success', 'failure']) this.#syncsTotal.inc({ result }, 0);
    gauge('tuna_operator_bindings', 'Bindings the last successful sync published.', () => this.#bindings);
    gauge('tuna_operator_bindings_held_back', 'Bindings the last successful sync held back (no reservation or key yet).', () => this.#heldBack);
    gauge('tuna_operator_last_sync_timestamp_seconds', 'When the last successful sync ended (Unix time; 0 before the first).', () => (this.#lastSyncAt ?? 0) / 1000);
    gauge('tuna_operator_tunnel_bindings', 'Bindings the tunnel manager holds connections for.', () => this.#sources.tunnels().length);
    const sum = (pick: (t: { open: number; wanted: number }) => number): number => this.#sources.tunnels().reduce((n, t) => n + pick(t), 0);
    const labelled = (name: string, help: string, label: string, read: () => Record<string, number>): void => {
      new Gauge({
        name,
        help,
        labelNames: [label],
        registers,
        collect: function (this: Gauge) {
          for (const [value, n] of Object.entries(read())) this.set({ [label]: value }, n);
        },
      });
    };
    labelled('tuna_operator_tunnel_connections', 'Tunnel connections to the edge, open and wanted.', 'state', () => ({ open: sum((t) => t.open), wanted: sum((t) => t.wanted) }));
    this.#phaseSeconds = new Counter({ name: 'tuna_operator_sync_phase_seconds_total', help: 'Time the successful syncs spent per phase: read, translate, admit (validate), reconcile (the edge), apply (data plane, tunnels), status.', labelNames: ['phase'], registers });
    this.#syncSeconds = new Histogram({ name: 'tuna_operator_sync_duration_seconds', help: 'How long each sync took (translate, reconcile the edge, tunnels, statuses), by result.', labelNames: ['result'], buckets: SYNC_SECONDS_BUCKETS, registers });
    labelled('tuna_operator_queue_depth', 'Work waiting for a sync: changes not taken up yet (0 or 1, changes coalesce), bindings the last sync left to the next.', 'queue', () => ({
      changes: this.#sources.hasPendingChange?.() === true ? 1 : 0,
      deferred: this.#deferred,
    }));
    labelled('tuna_operator_tunnels', 'Bindings the tunnel manager holds, by whether a connection is open (up) or none (down).', 'state', () => {
      const up = this.#sources.tunnels().filter((t) => t.open > 0).length;
      return { up, down: this.#sources.tunnels().length - up };
    });
    this.#reconnects = new Counter({ name: 'tuna_operator_tunnel_reconnects_total', help: 'Tunnel connections opened to replace an earlier one of the same slot (lost, or sent away by the edge).', registers });
    this.#tunnelErrors = new Counter({ name: 'tuna_operator_tunnel_errors_total', help: 'Failed tunnel connection attempts (refused key, edge unreachable, handshake failed).', registers });
    this.#unreachable = new Counter({
      name: 'tuna_operator_edge_unreachable_total',
      help: 'Attempts to reach the edge that never got an answer (connection refused, timed out, no route), by path: control (a sync’s control API call) or tunnel (a tunnel dial).',
      labelNames: ['path'],
      registers,
    });
    for (const path of ['control', 'tunnel']) this.#unreachable.inc({ path }, 0);
    new Gauge({
      name: 'tuna_operator_binding_tunnel_connections',
      help: 'Tunnel connections open now for each binding the tunnel manager holds (0: the binding has no tunnel from this replica).',
      labelNames: ['binding'],
      registers,
      collect: function (this: Gauge<'binding'>) {
        this.reset();
        for (const t of [...sources.tunnels()].sort((a, b) => a.bindingId.localeCompare(b.bindingId))) this.set({ binding: t.bindingId }, t.open);
      },
    });
    new Gauge({
      name: 'tuna_operator_certificate_expiry_timestamp_seconds',
      help: 'When the certificate of each Secret an HTTPS listener terminates with (or a TLS backend presents) expires (Unix time), by Secret (namespace/name).',
      labelNames: ['secret'],
      registers,
      collect: function (this: Gauge<'secret'>) {
        this.reset();
        for (const c of sources.certificates?.() ?? []) this.set({ secret: c.secret }, c.notAfter / 1000);
      },
    });
    this.#exposition = parts.length === 0 ? this.#registry : Registry.merge([this.#registry, ...parts]);
  }

  /** recordSync counts a sync that succeeded, with the bindings it published, held back and left to the next sync. */
  recordSync(bindings: number, heldBack: number, deferred = 0): void {
    this.#syncs += 1;
    this.#syncsTotal.inc({ result: 'success' });
    this.#bindings = bindings;
    this.#heldBack = heldBack;
    this.#deferred = deferred;
    this.#lastSyncAt = this.#now();
  }

  /** recordFailure counts a sync that failed (it is retried), and the edge unreachable when that is why. */
  recordFailure(err?: unknown): void {
    this.#syncsTotal.inc({ result: 'failure' });
    if (isUnreachable(err)) this.#unreachable.inc({ path: 'control' });
  }

  /** observePhases adds one successful sync's time per phase (SyncResult's `phases`: `translateMs` counts as `translate`). */
  observePhases(phases: object): void {
    for (const [name, ms] of Object.entries(phases) as [string, number][]) this.#phaseSeconds.inc({ phase: name.replace(/Ms$/, '') }, Math.max(0, ms) / 1000);
  }

  /** observeSync records how long one sync took (Operator's `onSyncEnded`). */
  observeSync(outcome: SyncOutcome, durationMs: number): void {
    this.#syncSeconds.observe({ result: outcome }, Math.max(0, durationMs) / 1000);
  }

  /** countReconnect counts one tunnel connection that replaced an earlier one (TunnelManager 'reconnected'). */
  countReconnect(): void {
    this.#reconnects.inc();
  }

  /** countTunnelError counts one failed tunnel connection attempt (TunnelManager 'tunnel-error'), and the edge unreachable when that is why. */
  countTunnelError(err?: unknown): void {
    this.#tunnelErrors.inc();
    if (isUnreachable(err)) this.#unreachable.inc({ path: 'tunnel' });
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
  metrics(): Promise<string> {
    return this.#exposition.metrics();
  }
}
