/** Edge errors: one class per failure with a stable `code` (the undici convention). */

import { CodedError } from '../model/index.js';
import type { TunaCode } from '../model/index.js';

/** EdgeError is the base class of edge failures. */
export class EdgeError extends CodedError<TunaCode> {}

/** EdgeConfigError: the edge configuration file is unreadable or invalid. */
export class EdgeConfigError extends EdgeError {
  constructor(message: string, options?: ErrorOptions) {
    super('TUNA_EDGE_CONFIG', message, options);
  }
}

/** EdgeListenError: a listener could not bind its address. */
export class EdgeListenError extends EdgeError {
  constructor(what: string, cause: unknown) {
    super('TUNA_EDGE_LISTEN', `cannot listen on ${what}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** NoTunnelError: a binding exists but no tunnel connection serves it. */
export class NoTunnelError extends EdgeError {
  constructor(bindingId: string) {
    super('TUNA_EDGE_NO_TUNNEL', `no tunnel connected for ${bindingId}`);
  }
}

/** EdgeAlreadyInitializedError: `initEdge` found accounts in the store (it creates the first one only). */
export class EdgeAlreadyInitializedError extends EdgeError {
  constructor() {
    super('TUNA_EDGE_ALREADY_INITIALIZED', 'the edge store already has accounts; create keys with an admin key instead');
  }
}
