/** The edge's listeners: the tunnel listener (upgrades and the control API under a connection guard), and the TCP listeners and UDP sockets that bindings ask for, each bound and retried on its own. */
export { BindingListeners, DEFAULT_BINDING_RETRY_MS, PUBLIC_SOCKETS, closeServer, listenOn } from './binding-listeners.js';
export type { BindingListenerDeps } from './binding-listeners.js';
export { DEFAULT_TUNNEL_LISTENER_LIMITS, TunnelListener } from './tunnel-listener.js';
export { UdpListeners } from './udp-listeners.js';
export type { UdpListenerDeps } from './udp-listeners.js';
