/**
 * The agent runtime: the Agent that serves a graph with a data plane and the tunnels that feed it.
 * The pipeline from objects to a route graph (translateObjects) is the room's second entry,
 * `./state.js`: it loads every translator, which `tuna http` never needs, so only the operator and
 * `tuna run` import it (docs/architecture.md, hack/lint/rooms.js ENTRIES). The CLI and the operator
 * sit above it; it imports only the rooms below (model, translate, dataplane).
 */
export * from './agent.js';
