/** The edge relay: public listeners, the tunnel acceptor, routing to tunnels, metrics, and store mode. */
export { EdgeServer, startEdge, bindingsFromConfig, keysFromConfig } from './edge-server.js';
export type { EdgeServerOptions, EdgeAddresses } from './edge-server.js';
export type { EdgePeers } from './edge-peers.js';
export { EdgeConfigCodec, decodeEdgeConfig, loadEdgeConfig } from './config.js';
export type { EdgeConfigFile, EdgeStoreConfig, EdgeAcmeConfig } from './config.js';
export { EdgeError, EdgeConfigError, EdgeListenError, NoTunnelError, EdgeAlreadyInitializedError } from './errors.js';
export { StaticTunnelAuthority, hashTunnelKey, StaticBindingDirectory, TunnelRegistry } from './tunnels/index.js';
export type { TunnelAuthority, TunnelRequestInfo, Grant, Refusal, KeyRecord, BindingDirectory, EdgeBinding, AddressPort } from './tunnels/index.js';
export { EdgeMetrics, createMetricsServer } from './metrics/index.js';
export { listenOn, closeServer } from './listeners/index.js';
export { parseClientHello } from './fronts/index.js';
export { StoreTunnelAuthority, StoreBindingDirectory, TunnelKeyEnforcer, openStoreMode, openConfiguredStore, initEdge } from './store-mode/index.js';
export { bindingIdForReservation, bindingFromReservation, DEFAULT_ADDRESS_PORTS } from './store-mode/index.js';
export type { StoreBindingDirectoryOptions, StoreMode, StoreModeOptions, StoreOpener, InitEdgeResult } from './store-mode/index.js';
export { openPostgresStore, openStore, storeBackendOf, StoreConflictError, STORE } from './store/index.js';
export type { Store, StoreBackend, StoreLocation } from './store/index.js';
export { EDGE_CONFIG, EDGE_LOG, EDGE_OPTIONS, EdgeLauncher, STORE_OPENER, edgeScope, registerEdge, startEdgeIn } from './container.js';
export type { EdgeInstanceOptions } from './container.js';
