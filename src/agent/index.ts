/**
 * The agent runtime: objects → snapshot → route graph (translateObjects), and the Agent that
 * serves a graph with a data plane and the tunnels that feed it. The CLI (`tuna run`, `tuna http`)
 * and the operator sit above it; it imports only the rooms below (model, translate, dataplane).
 */
export * from './agent.js';
export * from './state.js';
