import 'reflect-metadata';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { EdgeConfigFile } from './config.js';
import { startEdge } from './edge-server.js';
import type { EdgeServer, EdgeServerOptions } from './edge-server.js';
import { STORE } from './store/index.js';
import { openConfiguredStore } from './store-mode/index.js';
import type { StoreOpener } from './store-mode/index.js';

/**
 * The edge's part of the composition root (docs/architecture.md, "one way to wire"). A program
 * registers the edge's production parts once (`registerEdgeDefaults`); each edge instance gets a
 * child container with its config and log (`edgeScope`); `startEdgeIn` assembles and starts it
 * from whatever that container holds. A test swaps one part by registering it: a `STORE` it
 * opened itself, or a `STORE_OPENER` that records what it was asked to open.
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

/** registerEdgeDefaults registers the edge's production parts that are not registered yet. */
export function registerEdgeDefaults(c: DependencyContainer): void {
  if (!c.isRegistered(STORE_OPENER, true)) c.register(STORE_OPENER, { useValue: openConfiguredStore });
}

/** edgeScope is a child container for one edge instance: its config and its log. */
export function edgeScope(parent: DependencyContainer, config: EdgeConfigFile, log: (line: string) => void = () => undefined): DependencyContainer {
  const scope = parent.createChildContainer();
  scope.register(EDGE_CONFIG, { useValue: config });
  scope.register(EDGE_LOG, { useValue: log });
  return scope;
}

/**
 * startEdgeIn starts the edge that a container describes. A registered `STORE` is a store the
 * caller owns (the edge does not close it); otherwise a store-mode config's store is opened with
 * `STORE_OPENER` and closed with the edge.
 */
export function startEdgeIn(c: DependencyContainer): Promise<EdgeServer> {
  registerEdgeDefaults(c);
  const options: Omit<EdgeServerOptions, 'config'> = {
    ...(c.isRegistered(EDGE_OPTIONS, true) ? c.resolve(EDGE_OPTIONS) : {}),
    log: c.isRegistered(EDGE_LOG, true) ? c.resolve(EDGE_LOG) : () => undefined,
    openStore: c.resolve(STORE_OPENER),
  };
  if (c.isRegistered(STORE, true)) options.store = c.resolve(STORE);
  return startEdge(c.resolve(EDGE_CONFIG), options);
}
