/** The tunnel: protocol, agent sessions and the tunnel manager. */
export * from './stream-handler.js';
export * from './protocol.js';
export * from './errors.js';
export * from './relay.js';
export * from './clock.js';
export * from './dialer.js';
export * from './backoff.js';
export * from './key-source.js';
export * from './manager-options.js';
export * from './session.js';
export * from './manager.js';
export * from './tokens.js';
