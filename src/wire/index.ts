/**
 * The wire: the tunnel protocol both ends speak (upgrade constants, stream metadata, settings and
 * limits), the contract between a tunnel and what handles its streams, and the relay both ends
 * pipe bodies with. The edge (src/edge), the agent's sessions (src/tunnel) and the data plane
 * (src/dataplane) all import it; it imports only src/model (for CodedError).
 */
export * from './protocol.js';
export * from './stream-handler.js';
export * from './relay.js';
export * from './errors.js';
export * from './host-name.js';
export * from './shared-connection.js';
export * from './edge-worker.js';
export * from './datagram-framing.js';
