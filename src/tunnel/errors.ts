/**
 * Tunnel errors: one class per failure, each with a stable `code` that callers and logs match on
 * (the undici convention). Messages never contain a key.
 */

import { CodedError } from '../model/index.js';
import type { TunaCode } from '../model/index.js';

/** TunnelError is the base class of every tunnel failure. */
export class TunnelError extends CodedError<TunaCode> {}

/** TunnelRefusedError: the edge answered the upgrade with a refusal (401/403/429 …). */
export class TunnelRefusedError extends TunnelError {
  /** statusCode is the HTTP status of the refusal. */
  readonly statusCode: number;
  /** bindingId names the binding refused on a shared connection (the edge answers each binding apart) */
  readonly bindingId: string | undefined;
  constructor(statusCode: number, reason: string, bindingId?: string) {
    const which = bindingId === undefined ? '' : ` for binding ${bindingId}`;
    super('TUNA_TUNNEL_REFUSED', `edge refused the tunnel (HTTP ${statusCode})${which}: ${reason}`);
    this.statusCode = statusCode;
    this.bindingId = bindingId;
  }
}

/** TunnelClosedError: the tunnel was closed (by us, or by the edge's GOAWAY/close). */
export class TunnelClosedError extends TunnelError {
  constructor(message = 'tunnel closed') {
    super('TUNA_TUNNEL_CLOSED', message);
  }
}

/** TunnelDestroyedError: the tunnel was destroyed while an operation was pending. */
export class TunnelDestroyedError extends TunnelError {
  constructor(message = 'tunnel destroyed') {
    super('TUNA_TUNNEL_DESTROYED', message);
  }
}

/** EdgeUnreachableError: the edge could not be dialed (DNS, refused, TLS failure, timeout). */
export class EdgeUnreachableError extends TunnelError {
  constructor(edge: string, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super('TUNA_EDGE_UNREACHABLE', `cannot reach edge ${edge}: ${detail}`, { cause });
  }
}

/** TunnelProtocolError: the peer broke the tunnel protocol (bad upgrade response, bad stream headers). */
export class TunnelProtocolError extends TunnelError {
  constructor(message: string) {
    super('TUNA_TUNNEL_PROTOCOL', message);
  }
}

/** TunnelTimeoutError: a handshake or a PING was not answered in time. */
export class TunnelTimeoutError extends TunnelError {
  constructor(what: string, ms: number) {
    super('TUNA_TUNNEL_TIMEOUT', `${what} not answered within ${ms} ms`);
  }
}

/** EdgeWorkerMissedError: every dial of a bounded series reached another worker of the edge node than the one wanted (docs/protocol.md §9.8). */
export class EdgeWorkerMissedError extends TunnelError {
  constructor(wanted: number, count: number, dials: number) {
    super('TUNA_EDGE_WORKER_MISSED', `${dials} connections to the edge reached other workers than worker ${wanted} of ${count}; retrying later`);
  }
}
