/** Store mode: the store's adapters for the tunnel side (authority, binding directory, key enforcer), how reservations become bindings, store mode's assembly, and `tuna edge init`. */
export { openStoreMode, openConfiguredStore } from './store-mode.js';
export type { StoreMode, StoreModeOptions, StoreOpener } from './store-mode.js';
export { StoreTunnelAuthority } from './store-authority.js';
export type { TunnelAuthorityStore } from './store-authority.js';
export { StoreBindingDirectory } from './store-directory.js';
export type { DirectoryStore, StoreBindingDirectoryOptions } from './store-directory.js';
export { TunnelKeyEnforcer } from './key-enforcer.js';
export type { EnforcerStore, TunnelKeyEnforcerOptions } from './key-enforcer.js';
export { bindingIdForReservation, bindingFromReservation, DEFAULT_ADDRESS_PORTS } from './reservation-bindings.js';
export { initEdge } from './init-edge.js';
export type { InitEdgeResult, InitStore } from './init-edge.js';
