import type { Binding, RouteGraph } from '../model/index.js';
import { emptyGraph, tunnelsDiffer } from '../model/index.js';
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

/**
 * Agent is the running CLI agent: a data plane plus the tunnels that feed it. Applying a graph
 * updates the data plane first (so that a stream on a new tunnel finds its routes), then asks the
 * tunnel manager for the bindings, and only when they changed: a route change never reconnects.
 */
export class Agent {
  private current: RouteGraph = emptyGraph();

  constructor(
    readonly dataPlane: DataPlane,
    private readonly tunnels: TunnelControl,
  ) {}

  /** apply serves a new route graph; it reports whether the tunnels had to change. */
  async apply(graph: RouteGraph): Promise<{ tunnelsChanged: boolean }> {
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
