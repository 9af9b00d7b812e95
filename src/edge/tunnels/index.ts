/** The tunnel side of the edge: the acceptor (upgrade), one accepted connection (`EdgeTunnel`), the registry of live tunnels, and the authority and binding directory interfaces with their config-file implementations. */
export { StaticTunnelAuthority, hashTunnelKey } from './authority.js';
export type { TunnelAuthority, TunnelRequestInfo, Grant, Refusal, KeyRecord } from './authority.js';
export { BindingIndex, StaticBindingDirectory, portTransports } from './directory.js';
export type { BindingDirectory, EdgeBinding, AddressPort, PortTransport } from './directory.js';
export type { EdgeTunnel } from './edge-tunnel.js';
export { acceptTunnel } from './tunnel-acceptor.js';
export type { HandshakeLimiter, TunnelAcceptorOptions } from './tunnel-acceptor.js';
export { TunnelRegistry } from './tunnel-registry.js';
