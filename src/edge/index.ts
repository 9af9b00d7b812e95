/** The edge relay: public listeners, the tunnel acceptor, routing to tunnels, metrics. */
export { EdgeServer, startEdge, bindingsFromConfig, keysFromConfig } from './edge-server.js';
export type { EdgeServerOptions, EdgeAddresses } from './edge-server.js';
export { EdgeConfigCodec, decodeEdgeConfig, loadEdgeConfig } from './config.js';
export type { EdgeConfigFile } from './config.js';
export { StaticTunnelAuthority, hashTunnelKey } from './authority.js';
export type { TunnelAuthority, TunnelRequestInfo, Grant, Refusal, KeyRecord } from './authority.js';
export { StaticBindingDirectory } from './directory.js';
export type { BindingDirectory, EdgeBinding, AddressPort } from './directory.js';
export { EdgeError, EdgeConfigError, EdgeListenError, NoTunnelError } from './errors.js';
export { EdgeMetrics } from './metrics.js';
export { TunnelRegistry } from './tunnel-registry.js';
export { parseClientHello } from './sni.js';
