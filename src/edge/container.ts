import 'reflect-metadata';
import { inject, injectable } from 'tsyringe';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { EdgeConfigFile } from './config.js';
import { startEdge } from './edge-server.js';
import type { EdgeServer, EdgeServerOptions } from './edge-server.js';
import { STORE } from './store/index.js';
import type { Store } from './store/index.js';
import { openConfiguredStore } from './store-mode/index.js';
import type { StoreOpener } from './store-mode/index.js';

/**
 * The edge's part of the composition root (docs/architecture.md, "Wiring"). `registerEdge`
 * registers the edge's production parts once; each edge instance gets a child container with its
 * config and log (`edgeScope`); the container builds `EdgeLauncher` by constructor injection and
 * `startEdgeIn` starts it. A test swaps one part by registering it: a `STORE` it opened itself,
 * or a `STORE_OPENER` that records what it was asked to open.
 */

/** EDGE_CONFIG resolves the decoded config of one edge instance. */
export const EDGE_CONFIG: InjectionToken<EdgeConfigFile> = Symbol.for('tuna.edge.Config');
/** EDGE_LOG resolves the log sink of one edge instance (lines never contain a key). */
export const EDGE_LOG: InjectionToken<(line: string) => void> = Symbol.for('tuna.edge.Log');
/** STORE_OPENER resolves how a store-mode edge opens the store its config names (openConfiguredStore in production). */
export const STORE_OPENER: InjectionToken<StoreOpener> = Symbol.for('tuna.edge.StoreOpener');
/** EDGE_OPTIONS resolves the rest of an instance's options (hooks, limits); optional. */
export const EDGE_OPTIONS: InjectionToken<EdgeInstanceOptions> = Symbol.for('tuna.edge.Options');

/** EdgeInstanceOptions are the options of one edge that are neither its config, its log nor its store. */
export type EdgeInstanceOptions = Omit<EdgeServerOptions, 'config' | 'log' | 'store' | 'openStore'>;

/**
 * EdgeLauncher is the root of one edge's graph: what the container holds for it. A registered
 * `STORE` is a store the caller owns (the edge does not close it); otherwise a store-mode
 * config's store is opened with `STORE_OPENER` and closed with the edge.
 */
@injectable()
export class EdgeLauncher {
  constructor(
    @inject(EDGE_CONFIG) readonly config: EdgeConfigFile,
    @inject(EDGE_LOG) readonly log: (line: string) => void,
    @inject(STORE_OPENER) readonly openStore: StoreOpener,
    @inject(EDGE_OPTIONS, { isOptional: true }) readonly options: EdgeInstanceOptions | undefined,
    @inject(STORE, { isOptional: true }) readonly store: Store | undefined,
  ) {}

  /** start listens on the config's ports and resolves once the edge serves. */
  start(): Promise<EdgeServer> {
    const options: Omit<EdgeServerOptions, 'config'> = { ...(this.options ?? {}), log: this.log, openStore: this.openStore };
    if (this.store !== undefined) options.store = this.store;
    return startEdge(this.config, options);
  }
}

/** registerEdge registers the edge's production parts that are not registered yet (a test's own stay). */
export function registerEdge(c: DependencyContainer): void {
  if (!c.isRegistered(STORE_OPENER, true)) c.register(STORE_OPENER, { useValue: openConfiguredStore });
  if (!c.isRegistered(EDGE_LOG, true)) c.register(EDGE_LOG, { useValue: () => undefined });
}

/** edgeScope is a child container for one edge instance: its config and its log. */
export function edgeScope(parent: DependencyContainer, config: EdgeConfigFile, log: (line: string) => void = () => undefined): DependencyContainer {
  const scope = parent.createChildContainer();
  scope.register(EDGE_CONFIG, { useValue: config });
  scope.register(EDGE_LOG, { useValue: log });
  return scope;
}

/** startEdgeIn starts the edge that a container describes (its production parts filled in where none is registered). */
export function startEdgeIn(c: DependencyContainer): Promise<EdgeServer> {
  registerEdge(c);
  return c.resolve(EdgeLauncher).start();
}
