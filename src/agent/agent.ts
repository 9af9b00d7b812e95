import type { Binding, RouteGraph, TunaCode } from '../model/index.js';
import { CodedError, emptyGraph, tunnelsDiffer, validate } from '../model/index.js';
import type { DataPlane } from '../dataplane/index.js';

/**
 * TunnelControl is what the agent needs from the tunnel manager: hold one set of tunnels per
 * binding, and change only those whose binding changed. The composition root adapts the tunnel
 * manager of src/tunnel to it.
 */
export interface TunnelControl {
  /** apply makes the held tunnels match `bindings`; resolves once every new binding has one open tunnel or failed */
  apply(bindings: readonly Binding[]): Promise<void>;
  /** close drains every tunnel (GOAWAY, in-flight streams finish) */
  close(): Promise<void>;
}

/** SHOWN_PROBLEMS is how many of a refused graph's problems its error message names (the rest are in `problems`). */
const SHOWN_PROBLEMS = 3;

/**
 * InvalidGraphError: a route graph broke the graph's own invariants (validate(): duplicate ids,
 * links that do not resolve, ports out of range …) and was refused; the last good graph keeps
 * serving. Translators never build such a graph, so it is a bug to report, not a user's mistake.
 */
export class InvalidGraphError extends CodedError<TunaCode> {
  constructor(readonly problems: readonly string[]) {
    const more = problems.length > SHOWN_PROBLEMS ? `; and ${problems.length - SHOWN_PROBLEMS} more` : '';
    super('TUNA_AGENT_GRAPH_INVALID', `route graph refused, the last good one keeps serving: ${problems.slice(0, SHOWN_PROBLEMS).join('; ')}${more}`);
  }
}

/**
 * Agent is the running CLI agent: a data plane plus the tunnels that feed it. Applying a graph
 * updates the data plane first (so that a stream on a new tunnel finds its routes), then asks the
 * tunnel manager for the bindings, and only when they changed: a route change never reconnects.
 * A graph that fails validate() is refused before either takes it (as Envoy Gateway validates its
 * IR before it is published): the data plane and the tunnels keep the last good graph.
 */
export class Agent {
  private current: RouteGraph = emptyGraph();
  /** graphs admit() validated, so apply() does not walk them twice (21 ms at 10,000 hosts, docs/route-graph.md "Validation") */
  private readonly admitted = new WeakSet<RouteGraph>();

  constructor(
    readonly dataPlane: DataPlane,
    private readonly tunnels: TunnelControl,
  ) {}

  /**
   * admit validates a graph before anything acts on it, throwing InvalidGraphError when it breaks
   * an invariant; the operator admits its graph before it reconciles the edge with it.
   */
  admit(graph: RouteGraph): void {
    if (this.admitted.has(graph)) return;
    const problems = validate(graph);
    if (problems.length > 0) throw new InvalidGraphError(problems);
    this.admitted.add(graph);
  }

  /** apply serves a new route graph, refused (InvalidGraphError) if it fails validate(); it reports whether the tunnels had to change. */
  async apply(graph: RouteGraph): Promise<{ tunnelsChanged: boolean }> {
    this.admit(graph);
    const isTunnelChange = tunnelsDiffer(this.current, graph);
    this.dataPlane.update(graph);
    this.current = graph;
    if (!isTunnelChange) return { tunnelsChanged: false };
    await this.tunnels.apply(graph.bindings);
    return { tunnelsChanged: true };
  }

  /** close drains the tunnels, then releases upstream connections. */
  async close(): Promise<void> {
    // idle keep-alive clients of spliced connections would otherwise hold the tunnels until the drain timeout.
    this.dataPlane.drainSpliced();
    // an open UDP flow ends only when idle (60 s by default): end them as the tunnels drain
    this.dataPlane.drainUdp();
    await this.tunnels.close();
    this.dataPlane.close();
  }
}
