import type { TunnelRegistry } from './tunnels/tunnel-registry.js';

/**
 * EdgeMetrics counts what the edge does and renders it in the Prometheus text exposition format
 * (version 0.0.4). Counters are plain numbers bumped on the request path: no per-chunk work.
 * Bytes are read from the tunnel sockets' own counters at scrape time.
 */
export class EdgeMetrics {
  readonly #requests = new Map<string, number>();
  readonly #handshakes = new Map<string, number>();
  readonly #controlRequests = new Map<string, number>();
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
  // --- public connection hygiene (issue 12, findings 2 and 3) ---
  /** publicConnectionsOpen is the number of public connections open now. */
  publicConnectionsOpen = 0;
  readonly #publicRefused = new Map<string, number>();
  readonly #publicTimeouts = new Map<string, number>();
  readonly #publicGoaways = new Map<string, number>();

  /** countPublicRefusal records a public connection closed at accept, by limit. */
  countPublicRefusal(reason: string): void {
    this.#publicRefused.set(reason, (this.#publicRefused.get(reason) ?? 0) + 1);
  }

  /** countPublicTimeout records a public connection closed by a deadline, by phase. */
  countPublicTimeout(phase: string): void {
    this.#publicTimeouts.set(phase, (this.#publicTimeouts.get(phase) ?? 0) + 1);
  }

  /** countPublicGoaway records a public HTTP/2 connection sent away for abuse, by reason. */
  countPublicGoaway(reason: string): void {
    this.#publicGoaways.set(reason, (this.#publicGoaways.get(reason) ?? 0) + 1);
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

  #renderPublicHygiene(lines: string[], family: (name: string, type: string, help: string) => void): void {
    family('tuna_edge_public_connections_open', 'gauge', 'Public connections open now.');
    lines.push(`tuna_edge_public_connections_open ${this.publicConnectionsOpen}`);
    family('tuna_edge_public_connections_refused_total', 'counter', 'Public connections closed at accept, by limit.');
    for (const [reason, n] of [...this.#publicRefused].sort()) lines.push(`tuna_edge_public_connections_refused_total{reason="${reason}"} ${n}`);
    family('tuna_edge_public_timeouts_total', 'counter', 'Public connections closed by a deadline, by phase.');
    for (const [phase, n] of [...this.#publicTimeouts].sort()) lines.push(`tuna_edge_public_timeouts_total{phase="${phase}"} ${n}`);
    family('tuna_edge_public_http2_goaways_total', 'counter', 'Public HTTP/2 connections sent away for abuse, by reason.');
    for (const [reason, n] of [...this.#publicGoaways].sort()) lines.push(`tuna_edge_public_http2_goaways_total{reason="${reason}"} ${n}`);
  }
  // --- end of public connection hygiene ---

  /** tunnelListenerOpen is the number of connections open on the tunnel listener now (tunnels, handshakes, control API). */
  tunnelListenerOpen = 0;
  readonly #tunnelListenerClosed = new Map<string, number>();

  /** countTunnelListenerClose records a tunnel listener connection closed at accept (a limit) or by a deadline (a phase). */
  countTunnelListenerClose(cause: string): void {
    this.#tunnelListenerClosed.set(cause, (this.#tunnelListenerClosed.get(cause) ?? 0) + 1);
  }

  /** tunnelListenerCloses returns the closes of one cause (for tests and render). */
  tunnelListenerCloses(cause: string): number {
    return this.#tunnelListenerClosed.get(cause) ?? 0;
  }

  /** countRequest records one answered public HTTP request by status code. */
  countRequest(status: number): void {
    const key = String(status);
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
  }

  /** countControlRequest records one control API request (`/v1`, store mode) by method: what the operator costs the edge (issue 15). */
  countControlRequest(method: string): void {
    const key = /^[A-Z]{1,10}$/.test(method) ? method : 'OTHER';
    this.#controlRequests.set(key, (this.#controlRequests.get(key) ?? 0) + 1);
  }

  /** countHandshake records one tunnel upgrade by result (granted, or a refusal reason). */
  countHandshake(result: string): void {
    this.#handshakes.set(result, (this.#handshakes.get(result) ?? 0) + 1);
  }

  /** render returns the exposition text. */
  render(registry: TunnelRegistry): string {
    const lines: string[] = [];
    const family = (name: string, type: string, help: string): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    };
    family('tuna_edge_tunnels', 'gauge', 'Live tunnel connections by binding.');
    for (const [binding, n] of [...registry.count()].sort()) lines.push(`tuna_edge_tunnels{binding="${escapeLabel(binding)}"} ${n}`);
    family('tuna_edge_tunnel_handshakes_total', 'counter', 'Tunnel upgrade requests by result.');
    for (const [result, n] of [...this.#handshakes].sort()) lines.push(`tuna_edge_tunnel_handshakes_total{result="${result}"} ${n}`);
    family('tuna_edge_streams_active', 'gauge', 'Tunnel streams open now.');
    lines.push(`tuna_edge_streams_active ${this.streamsActive}`);
    family('tuna_edge_streams_total', 'counter', 'Tunnel streams opened.');
    lines.push(`tuna_edge_streams_total ${this.streamsTotal}`);
    family('tuna_edge_public_connections_total', 'counter', 'Public connections accepted.');
    lines.push(`tuna_edge_public_connections_total ${this.publicConnections}`);
    family('tuna_edge_binding_listener_failures_total', 'counter', 'Binding listeners that failed to bind (retried later).');
    lines.push(`tuna_edge_binding_listener_failures_total ${this.bindingListenerFailures}`);
    family('tuna_edge_binding_listeners_failing', 'gauge', 'Binding listeners not bound after the last attempt.');
    lines.push(`tuna_edge_binding_listeners_failing ${this.bindingListenersFailing}`);
    this.#renderPublicHygiene(lines, family);
    family('tuna_edge_tunnel_listener_connections_open', 'gauge', 'Connections open on the tunnel listener now.');
    lines.push(`tuna_edge_tunnel_listener_connections_open ${this.tunnelListenerOpen}`);
    family('tuna_edge_tunnel_listener_closed_total', 'counter', 'Tunnel listener connections closed at accept (a limit) or by a deadline (a phase).');
    for (const [cause, n] of [...this.#tunnelListenerClosed].sort()) lines.push(`tuna_edge_tunnel_listener_closed_total{cause="${cause}"} ${n}`);
    family('tuna_edge_requests_total', 'counter', 'Public HTTP requests answered, by status code.');
    for (const [code, n] of [...this.#requests].sort()) lines.push(`tuna_edge_requests_total{code="${code}"} ${n}`);
    family('tuna_edge_control_requests_total', 'counter', 'Control API requests, by method.');
    for (const [method, n] of [...this.#controlRequests].sort()) lines.push(`tuna_edge_control_requests_total{method="${method}"} ${n}`);
    const bytes = registry.bytes();
    family('tuna_edge_tunnel_bytes_total', 'counter', 'Bytes on tunnel connections (in: from agents, out: to agents).');
    lines.push(`tuna_edge_tunnel_bytes_total{direction="in"} ${bytes.in}`);
    lines.push(`tuna_edge_tunnel_bytes_total{direction="out"} ${bytes.out}`);
    return lines.join('\n') + '\n';
  }
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
