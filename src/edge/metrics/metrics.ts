import { performance } from 'node:perf_hooks';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EdgeWorker } from '../../wire/index.js';

/**
 * TunnelCounts is what a scrape reads of the live tunnels: TunnelRegistry's `count` and `bytes`
 * (src/edge/tunnels/tunnel-registry.ts), named here so the metrics sit below the tunnels that
 * count into them.
 */
export interface TunnelCounts {
  /** live tunnel connections by binding id */
  count(): Map<string, number>;
  /** bytes the tunnel sockets have carried in and out */
  bytes(): { in: number; out: number };
}

/** CertificateExpiry is one certificate the edge serves public HTTPS with, and when it expires. */
export interface CertificateExpiry {
  /** the name it is served for (a hostname, or `*.parent`) */
  hostname: string;
  /** `static` (the config file's certificates) or `store` (stored: ACME-issued, or put there by another node) */
  source: 'static' | 'store';
  /** its notAfter, in ms since the epoch */
  notAfter: number;
}

/** PublicFront is the public front that answered a request, as the request duration histogram labels it. */
export type PublicFront = 'http1' | 'http2' | 'websocket';

const FRONTS: readonly PublicFront[] = ['http1', 'http2', 'websocket'];

/** StatusClass is a status code's class, as the request duration histogram labels it. */
export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'other';

const STATUS_CLASSES: readonly StatusClass[] = ['1xx', '2xx', '3xx', '4xx', '5xx', 'other'];

/**
 * REQUEST_SECONDS_BUCKETS are the request duration histogram's buckets: a request through the
 * tunnel on loopback takes 1–25 ms at the median (docs/benchmarks.md); a service may take seconds.
 */
export const REQUEST_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * EdgeMetrics counts what the edge does and renders it with prom-client, in the Prometheus text
 * exposition format (version 0.0.4), from a `Registry` of its own (never prom-client's global one:
 * several edges run in one test process). Counters are plain numbers bumped on the request path,
 * read into the prom-client families at scrape time (`collect`): no label hashing per request and
 * no per-chunk work, and the series come out sorted by label. Bytes are read from the tunnel
 * sockets' own counters at scrape time. The one family fed on the request path is the request
 * duration histogram (one `observe` per answered request).
 */
export class EdgeMetrics {
  readonly #requests = new Map<string, number>();
  readonly #handshakes = new Map<string, number>();
  readonly #controlRequests = new Map<string, number>();
  readonly #edgeAnswers = new Map<string, number>();
  /** certificates lists the certificates the edge serves public HTTPS with (read at scrape time); default none */
  certificates: () => readonly CertificateExpiry[] = () => [];
  /** streamsTotal counts tunnel streams opened. */
  streamsTotal = 0;
  /** streamsActive is the number of tunnel streams open now. */
  streamsActive = 0;
  /** publicConnections counts accepted public connections of every listener. */
  publicConnections = 0;
  /** bindingListenerFailures counts binding listeners that failed to bind (each retry counts again). */
  bindingListenerFailures = 0;
  /** bindingListenersFailing is how many binding listeners the last attempt could not bind. */
  bindingListenersFailing = 0;
  // --- public connection hygiene (docs/edge-relay.md "Public connection hygiene") ---
  /** publicConnectionsOpen is the number of public connections open now. */
  publicConnectionsOpen = 0;
  readonly #publicRefused = new Map<string, number>();
  readonly #publicTimeouts = new Map<string, number>();
  readonly #publicGoaways = new Map<string, number>();
  /** tunnelListenerOpen is the number of connections open on the tunnel listener now (tunnels, handshakes, control API). */
  tunnelListenerOpen = 0;
  readonly #tunnelListenerClosed = new Map<string, number>();

  // --- UDP flows (docs/protocol.md §4.6) ---
  /** udpFlowsTotal counts UDP flows opened (one tunnel stream each). */
  udpFlowsTotal = 0;
  /** udpFlowsActive is the number of UDP flows open now. */
  udpFlowsActive = 0;
  readonly #udpDatagrams = new Map<string, number>();
  readonly #udpDropped = new Map<string, number>();
  readonly #udpFlowEnds = new Map<string, number>();

  readonly #prom = new Registry();
  /** the tunnel registry of the scrape under way (render's argument) */
  #tunnels: TunnelCounts | undefined;
  /** when each public request began (beginRequest), by the object that carries its answer */
  readonly #startedAt = new WeakMap<object, number>();
  /** the histogram's series, bound once: an observe then skips prom-client's label checks (about 1 µs a request here) */
  readonly #requestSeconds: Record<PublicFront, Record<StatusClass, Histogram.Internal<'front' | 'code_class'>>>;

  /** With `worker` (one of several processes of the node) every series carries a `worker` label: a scrape reads the worker it reached. */
  constructor(worker?: EdgeWorker) {
    if (worker !== undefined) this.#prom.setDefaultLabels({ worker: String(worker.index) });
    const registers = [this.#prom];
    const tunnels = (): TunnelCounts | undefined => this.#tunnels;
    new Gauge({
      name: 'tuna_edge_tunnels',
      help: 'Live tunnel connections by binding.',
      labelNames: ['binding'],
      registers,
      collect: function (this: Gauge<'binding'>) {
        this.reset();
        for (const [binding, n] of [...(tunnels()?.count() ?? [])].sort()) this.set({ binding }, n);
      },
    });
    countersBy(registers, 'tuna_edge_tunnel_handshakes_total', 'Tunnel upgrade requests by result.', 'result', this.#handshakes);
    gaugeOf(registers, 'tuna_edge_streams_active', 'Tunnel streams open now.', () => this.streamsActive);
    counterOf(registers, 'tuna_edge_streams_total', 'Tunnel streams opened.', () => this.streamsTotal);
    counterOf(registers, 'tuna_edge_public_connections_total', 'Public connections accepted.', () => this.publicConnections);
    counterOf(registers, 'tuna_edge_binding_listener_failures_total', 'Binding listeners that failed to bind (retried later).', () => this.bindingListenerFailures);
    gaugeOf(registers, 'tuna_edge_binding_listeners_failing', 'Binding listeners not bound after the last attempt.', () => this.bindingListenersFailing);
    gaugeOf(registers, 'tuna_edge_public_connections_open', 'Public connections open now.', () => this.publicConnectionsOpen);
    countersBy(registers, 'tuna_edge_public_connections_refused_total', 'Public connections closed at accept, by limit.', 'reason', this.#publicRefused);
    countersBy(registers, 'tuna_edge_public_timeouts_total', 'Public connections closed by a deadline, by phase.', 'phase', this.#publicTimeouts);
    countersBy(registers, 'tuna_edge_public_http2_goaways_total', 'Public HTTP/2 connections sent away for abuse, by reason.', 'reason', this.#publicGoaways);
    gaugeOf(registers, 'tuna_edge_tunnel_listener_connections_open', 'Connections open on the tunnel listener now.', () => this.tunnelListenerOpen);
    countersBy(registers, 'tuna_edge_tunnel_listener_closed_total', 'Tunnel listener connections closed at accept (a limit) or by a deadline (a phase).', 'cause', this.#tunnelListenerClosed);
    counterOf(registers, 'tuna_edge_udp_flows_total', 'UDP flows opened (one tunnel stream each).', () => this.udpFlowsTotal);
    gaugeOf(registers, 'tuna_edge_udp_flows_active', 'UDP flows open now.', () => this.udpFlowsActive);
    countersBy(registers, 'tuna_edge_udp_datagrams_total', 'UDP datagrams relayed (in: from public clients, out: to them).', 'direction', this.#udpDatagrams);
    countersBy(registers, 'tuna_edge_udp_datagrams_dropped_total', 'UDP datagrams dropped, by reason.', 'reason', this.#udpDropped);
    countersBy(registers, 'tuna_edge_udp_flow_ends_total', 'UDP flows ended, by cause.', 'cause', this.#udpFlowEnds);
    countersBy(registers, 'tuna_edge_requests_total', 'Public HTTP requests answered, by status code.', 'code', this.#requests);
    countersBy(registers, 'tuna_edge_answers_total', 'Public HTTP requests the edge answered itself instead of a service, by reason (unknown-host, no-tunnel, tunnel-failed …).', 'reason', this.#edgeAnswers);
    const certificates = (): readonly CertificateExpiry[] => this.certificates();
    new Gauge({
      name: 'tuna_edge_certificate_expiry_timestamp_seconds',
      help: 'When each certificate the edge serves public HTTPS with expires (Unix time), by hostname and source (static: the config file; store: ACME-issued or stored).',
      labelNames: ['hostname', 'source'],
      registers,
      collect: function (this: Gauge<'hostname' | 'source'>) {
        this.reset();
        for (const c of [...certificates()].sort((a, b) => a.hostname.localeCompare(b.hostname) || a.source.localeCompare(b.source))) this.set({ hostname: c.hostname, source: c.source }, c.notAfter / 1000);
      },
    });
    countersBy(registers, 'tuna_edge_control_requests_total', 'Control API requests, by method.', 'method', this.#controlRequests);
    new Counter({
      name: 'tuna_edge_tunnel_bytes_total',
      help: 'Bytes on tunnel connections (in: from agents, out: to agents).',
      labelNames: ['direction'],
      registers,
      collect: function (this: Counter<'direction'>) {
        const bytes = tunnels()?.bytes() ?? { in: 0, out: 0 };
        this.reset();
        this.inc({ direction: 'in' }, bytes.in);
        this.inc({ direction: 'out' }, bytes.out);
      },
    });
    const requestSeconds = new Histogram({
      name: 'tuna_edge_request_duration_seconds',
      help: 'Public HTTP requests, from the request head read to the response head sent (the edge’s own answers included), by front and status class.',
      labelNames: ['front', 'code_class'],
      buckets: REQUEST_SECONDS_BUCKETS,
      registers,
    });
    // labels() binds a series without creating it: only observed series are rendered
    const byClass = (front: PublicFront) => Object.fromEntries(STATUS_CLASSES.map((c) => [c, requestSeconds.labels({ front, code_class: c })])) as Record<StatusClass, Histogram.Internal<'front' | 'code_class'>>;
    this.#requestSeconds = Object.fromEntries(FRONTS.map((front) => [front, byClass(front)])) as Record<PublicFront, Record<StatusClass, Histogram.Internal<'front' | 'code_class'>>>;
  }

  /** countPublicRefusal records a public connection closed at accept, by limit. */
  countPublicRefusal(reason: string): void {
    bump(this.#publicRefused, reason);
  }

  /** countPublicTimeout records a public connection closed by a deadline, by phase. */
  countPublicTimeout(phase: string): void {
    bump(this.#publicTimeouts, phase);
  }

  /** countPublicGoaway records a public HTTP/2 connection sent away for abuse, by reason. */
  countPublicGoaway(reason: string): void {
    bump(this.#publicGoaways, reason);
  }

  /** publicRefused returns the refusals by reason (for tests and render). */
  publicRefused(reason: string): number {
    return this.#publicRefused.get(reason) ?? 0;
  }

  /** publicTimeouts returns the deadline closes by phase. */
  publicTimeouts(phase: string): number {
    return this.#publicTimeouts.get(phase) ?? 0;
  }

  /** publicGoaways returns the abuse GOAWAYs by reason. */
  publicGoaways(reason: string): number {
    return this.#publicGoaways.get(reason) ?? 0;
  }

  /** countTunnelListenerClose records a tunnel listener connection closed at accept (a limit) or by a deadline (a phase). */
  countTunnelListenerClose(cause: string): void {
    bump(this.#tunnelListenerClosed, cause);
  }

  /** tunnelListenerCloses returns the closes of one cause (for tests and render). */
  tunnelListenerCloses(cause: string): number {
    return this.#tunnelListenerClosed.get(cause) ?? 0;
  }

  /** countUdpDatagram records one datagram relayed (`in` from a public client, `out` to one). */
  countUdpDatagram(direction: 'in' | 'out'): void {
    bump(this.#udpDatagrams, direction);
  }

  /** countUdpDrop records `n` datagrams dropped for one reason (a limit, no tunnel, a full queue). */
  countUdpDrop(reason: string, n = 1): void {
    if (n > 0) this.#udpDropped.set(reason, (this.#udpDropped.get(reason) ?? 0) + n);
  }

  /** countUdpFlowEnd records a UDP flow that ended, by cause (idle, the agent's end, a refusal …). */
  countUdpFlowEnd(cause: string): void {
    bump(this.#udpFlowEnds, cause);
  }

  /** udpDrops returns the datagrams dropped for one reason (for tests and render). */
  udpDrops(reason: string): number {
    return this.#udpDropped.get(reason) ?? 0;
  }

  /** udpFlowEnds returns the flows ended by one cause. */
  udpFlowEnds(cause: string): number {
    return this.#udpFlowEnds.get(cause) ?? 0;
  }

  /** beginRequest notes when a public request began; `exchange` is what carries its answer (response, stream or socket). */
  beginRequest(exchange: object): void {
    this.#startedAt.set(exchange, performance.now());
  }

  /**
   * countRequest records one answered public HTTP request by status code and, for an exchange
   * `beginRequest` saw, its duration by front and status class (once per exchange).
   */
  countRequest(status: number, exchange: object, front: PublicFront): void {
    const key = String(status);
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
    const startedAt = this.#startedAt.get(exchange);
    if (startedAt === undefined) return;
    this.#startedAt.delete(exchange);
    this.#requestSeconds[front][statusClass(status)].observe((performance.now() - startedAt) / 1000);
  }

  /** countEdgeAnswer records one public request the edge answered itself (no tunnel, unknown host …), by reason. */
  countEdgeAnswer(reason: string): void {
    bump(this.#edgeAnswers, reason);
  }

  /** countControlRequest records one control API request (`/v1`, store mode) by method: what the operator costs the edge. */
  countControlRequest(method: string): void {
    bump(this.#controlRequests, /^[A-Z]{1,10}$/.test(method) ? method : 'OTHER');
  }

  /** countHandshake records one tunnel upgrade by result (granted, or a refusal reason). */
  countHandshake(result: string): void {
    bump(this.#handshakes, result);
  }

  /**
   * answerClusterPrimary makes this process (a node:cluster worker) answer the primary's
   * AggregatorRegistry with this edge's series, with the live tunnels and bytes of `registry`
   * (`tuna edge --workers N`: the primary serves `listen.metrics` for the whole edge). prom-client
   * answers from its global registry unless told otherwise, and listens only once an
   * AggregatorRegistry exists in the process.
   */
  answerClusterPrimary(registry: TunnelCounts): void {
    this.#tunnels = registry;
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([this.#prom]);
  }

  /** render returns the exposition text, with the live tunnels and bytes of `registry`. */
  render(registry: TunnelCounts): Promise<string> {
    this.#tunnels = registry;
    return this.#prom.metrics();
  }
}

/** statusClass is the status class label of a status code (`2xx`); anything outside 100–599 is `other`. */
export function statusClass(status: number): StatusClass {
  return status >= 100 && status <= 599 ? STATUS_CLASSES[Math.floor(status / 100) - 1]! : 'other';
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** counterOf registers an unlabelled counter read from `read` at scrape time. */
function counterOf(registers: Registry[], name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers,
    collect: function (this: Counter) {
      this.reset();
      this.inc(read());
    },
  });
}

/** gaugeOf registers an unlabelled gauge read from `read` at scrape time. */
function gaugeOf(registers: Registry[], name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers,
    collect: function (this: Gauge) {
      this.set(read());
    },
  });
}

/** countersBy registers a counter with one label whose series are the entries of `counts`, sorted by label value. */
function countersBy(registers: Registry[], name: string, help: string, label: string, counts: ReadonlyMap<string, number>): void {
  new Counter({
    name,
    help,
    labelNames: [label],
    registers,
    collect: function (this: Counter) {
      this.reset();
      for (const [value, n] of [...counts].sort()) this.inc({ [label]: value }, n);
    },
  });
}
