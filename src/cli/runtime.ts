import type { DependencyContainer } from 'tsyringe';
import type { CertificateSource, EndpointResolver, ExchangeObserver } from '../dataplane/index.js';
import type { TunnelKeySource, TunnelManager } from '../tunnel/index.js';
import type { TunnelStreamHandler } from '../wire/index.js';
import type { Agent } from '../agent/index.js';
import type { EdgeInstanceOptions } from '../edge/index.js';
import type { AgentOptions } from './agent-options.js';

/**
 * CliRuntime is what commands get from the composition root (src/cli/container.ts): factories of
 * the long-lived services, so commands stay free of wiring and tests can pass fakes.
 */
export interface CliRuntime {
  /** container is the composition root's container; a command registers the parts of what it runs in a child of it */
  readonly container: DependencyContainer;
  /** createTunnelManager builds a tunnel manager feeding `handler`, with keys from `keys` (the operator) */
  createTunnelManager(handler: TunnelStreamHandler, keys: TunnelKeySource): TunnelManager;
  /** createAgent builds a data plane and the tunnels to the edge for it; `log` gets unexpected proxy errors; `observer` sees every HTTP exchange (the request inspector) */
  createAgent(options: AgentOptions, endpoints: EndpointResolver, certificates?: CertificateSource, log?: (line: string) => void, observer?: ExchangeObserver): Agent;
  /** startEdge runs an edge from a configuration document (parsed YAML/JSON, validated inside); `instance` names the worker it is (`tuna edge --workers`) */
  startEdge(config: unknown, log?: (line: string) => void, instance?: EdgeInstanceOptions): Promise<RunningEdge>;
  /** startEdgeFromFile runs an edge from a configuration file; `overrides` (already checked flags) replace top-level keys of it; `instance` names the worker */
  startEdgeFromFile(path: string, log?: (line: string) => void, overrides?: { http1Forwarding?: 'spliced' | 'per-request' }, instance?: EdgeInstanceOptions): Promise<RunningEdge>;
}

/** RunningEdge is an edge started by the CLI. */
export interface RunningEdge {
  /** the bound public HTTP port, when the edge has an HTTP listener */
  httpPort: number | undefined;
  /** the bound tunnel port */
  tunnelPort: number;
  /** close stops listening and drains tunnels */
  close(): Promise<void>;
}
