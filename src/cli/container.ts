import 'reflect-metadata';
import { container as rootContainer, inject, injectable } from 'tsyringe';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { DataPlane } from '../dataplane/index.js';
import type { CertificateSource, EndpointResolver, ExchangeObserver } from '../dataplane/index.js';
import type { EdgeConfigFile, EdgeInstanceOptions } from '../edge/index.js';
import {
  CLOCK,
  EDGE_DIALER,
  NetEdgeDialer,
  StaticKeySource,
  SystemClock,
  TUNNEL_KEY_SOURCE,
  TUNNEL_MANAGER_OPTIONS,
  TUNNEL_STREAM_HANDLER,
  TunnelManager,
} from '../tunnel/index.js';
import type { TunnelStreamContext } from '../wire/index.js';
import { Agent } from '../agent/index.js';
import type { TunnelControl } from '../agent/index.js';
import type { AgentOptions } from './agent-options.js';
import { ManagerTunnels, cliKeyReferences } from './manager-tunnels.js';
import type { CliRuntime, RunningEdge } from './runtime.js';

/**
 * The composition root of the `tuna` command: the one place that chooses implementations.
 * Tokens are explicit (tsx/esbuild emit no decorator metadata); the tunnel manager's own tokens
 * (CLOCK, EDGE_DIALER, …) come from src/tunnel. A test replaces a seam by registering its double on
 * a child of createContainer() (test/unit/cli-container.test.ts).
 */

/** TUNNEL_CONTROL_FACTORY makes the tunnels that feed one agent's data plane. */
export const TUNNEL_CONTROL_FACTORY: InjectionToken<TunnelControlFactory> = Symbol.for('tuna.cli.TunnelControlFactory');
/** EDGE_STARTER starts an edge from a decoded config. */
export const EDGE_STARTER: InjectionToken<EdgeStarter> = Symbol.for('tuna.cli.EdgeStarter');

/** TunnelControlFactory builds the tunnels that feed one data plane. */
export type TunnelControlFactory = (options: AgentOptions, handler: DataPlane, log?: (line: string) => void) => TunnelControl;

/** EdgeStarter starts an edge. */
export type EdgeStarter = (config: EdgeConfigFile, log: (line: string) => void, instance?: EdgeInstanceOptions) => Promise<RunningEdge>;

/** AgentFactory assembles an agent: a data plane and the tunnels to the edge that feed it. */
@injectable()
export class AgentFactory {
  constructor(@inject(TUNNEL_CONTROL_FACTORY) private readonly tunnels: TunnelControlFactory) {}

  /** create builds an agent over the given endpoints and certificates (and the inspector's observer, if any). */
  create(options: AgentOptions, endpoints: EndpointResolver, certificates?: CertificateSource, log?: (line: string) => void, observer?: ExchangeObserver): Agent {
    const onError = (err: unknown, context: TunnelStreamContext): void =>
      log?.(`proxy error on ${context.bindingId} (request ${context.requestId}): ${err instanceof Error ? err.message : String(err)}`);
    const onJwksError = (url: string, err: unknown): void =>
      log?.(`JWT key set ${url} could not be fetched (the last good keys, if any, stay in force): ${err instanceof Error ? err.message : String(err)}`);
    const onOidcError = (issuer: string, err: unknown): void => log?.(`OpenID provider ${issuer}: a fetch failed (the last good configuration, if any, stays in force): ${err instanceof Error ? err.message : String(err)}`);
    const dataPlane = new DataPlane({ endpoints, certificates, onError, onJwksError, onOidcError, observer, ...(options.udpIdleTimeoutMs !== undefined ? { udpIdleTimeoutMs: options.udpIdleTimeoutMs } : {}) });
    return new Agent(dataPlane, this.tunnels(options, dataPlane, log));
  }
}

/** createContainer is a child of the root container holding the production implementations (registerCli). */
export function createContainer(): DependencyContainer {
  const c = rootContainer.createChildContainer();
  registerCli(c);
  return c;
}

/**
 * registerCli is the one registration function of the `tuna` process: the tunnel manager's clock,
 * dialer and options, how an agent's tunnels are made and how edges start. A seam a test
 * registered on a child container (CLOCK, EDGE_DIALER) wins there, as child registrations do.
 */
export function registerCli(c: DependencyContainer): void {
  c.register(CLOCK, { useValue: new SystemClock() });
  c.register(EDGE_DIALER, { useValue: new NetEdgeDialer() });
  // many bindings, one connection per edge, each binding proved with its own key (docs/protocol.md §9)
  c.register(TUNNEL_MANAGER_OPTIONS, { useValue: { sharedConnections: true } });
  c.register(TUNNEL_CONTROL_FACTORY, {
    // One tunnel manager per agent, in a child container holding that agent's data plane and key.
    useFactory: (deps) => (options: AgentOptions, dataPlane: DataPlane, log?: (line: string) => void) => {
      const scope = deps.createChildContainer();
      scope.register(TUNNEL_STREAM_HANDLER, { useValue: dataPlane });
      scope.register(TUNNEL_KEY_SOURCE, { useValue: new StaticKeySource(cliKeyReferences(options)) });
      return new ManagerTunnels(scope.resolve(TunnelManager), options, log);
    },
  });
  c.register(EDGE_STARTER, {
    useFactory: (deps) => async (config: EdgeConfigFile, log: (line: string) => void, instance?: EdgeInstanceOptions) => {
      // The edge (its store drivers, ACME) loads with the first edge started: `tuna http` never does.
      const { EDGE_OPTIONS, edgeScope, registerEdge, startEdgeIn } = await import('../edge/index.js');
      // The edge's parts (how a store opens), unless a test registered its own; each edge started gets a child container of its own.
      registerEdge(c);
      const scope = edgeScope(deps, config, log);
      // a worker of `tuna edge --workers N`: its name and its peers, beside any options already registered
      if (instance !== undefined) scope.register(EDGE_OPTIONS, { useValue: { ...(scope.isRegistered(EDGE_OPTIONS, true) ? scope.resolve(EDGE_OPTIONS) : {}), ...instance } });
      const edge = await startEdgeIn(scope);
      const addresses = edge.address();
      return { httpPort: addresses.http?.port, tunnelPort: addresses.tunnel.port, close: () => edge.close() };
    },
  });
}

/** createRuntime exposes the container's services to the commands. */
export function createRuntime(c: DependencyContainer = createContainer()): CliRuntime {
  const agents = c.resolve(AgentFactory);
  const starter = c.resolve(EDGE_STARTER);
  const noLog = (): void => undefined;
  return {
    container: c,
    createTunnelManager: (handler, keys) => {
      const scope = c.createChildContainer();
      scope.register(TUNNEL_STREAM_HANDLER, { useValue: handler });
      scope.register(TUNNEL_KEY_SOURCE, { useValue: keys });
      return scope.resolve(TunnelManager);
    },
    createAgent: (options, endpoints, certificates, log, observer) => agents.create(options, endpoints, certificates, log, observer),
    startEdge: async (config, log = noLog, instance) => starter((await import('../edge/index.js')).decodeEdgeConfig(config), log, instance),
    startEdgeFromFile: async (path, log = noLog, overrides = {}, instance) =>
      starter({ ...(await (await import('../edge/index.js')).loadEdgeConfig(path)), ...overrides }, log, instance),
  };
}
