import type { ControlClient, EdgeInfo } from '../control-api/index.js';
import { CodedError } from '../model/index.js';
import type { TunaCode } from '../model/index.js';
import type { AddressPortLimits } from './address-ports.js';

/**
 * OperatorEdgeUnreachableError: `tuna operator`'s control client could not ask the edge what it serves (`GET /v1/edge`) at
 * start, so it does not know the base domain its generated hostnames must end with.
 */
export class OperatorEdgeUnreachableError extends CodedError<TunaCode> {
  constructor(url: string, cause: unknown) {
    super('TUNA_OPERATOR_EDGE_UNREACHABLE', `tuna operator: cannot ask the edge at ${url} what it serves (GET /v1/edge): ${(cause as Error).message ?? String(cause)}; check --edge, --ca and --key`, { cause });
  }
}

/** EdgeSettings is what the operator learns from the edge at start. */
export interface EdgeSettings {
  /** what `GET /v1/edge` answered */
  edge: EdgeInfo;
  /** the base domain the translators generate hostnames under: the edge's, unless overridden */
  baseDomain: string;
}

/**
 * learnEdge asks the edge for its base domain and pools (`GET /v1/edge`, docs/edge-store.md), so the operator needs no
 * flag kept in sync by hand. `url` is the client's edge, for the message; `baseDomainOverride` (`--base-domain`) replaces the edge's base domain
 * (an edge that serves several); the edge is asked either way, and a failure is an OperatorEdgeUnreachableError.
 */
export async function learnEdge(client: ControlClient, url: URL, baseDomainOverride?: string): Promise<EdgeSettings> {
  let edge: EdgeInfo;
  try {
    edge = (await client.describeEdge()).edge;
  } catch (err) {
    throw new OperatorEdgeUnreachableError(url.origin, err);
  }
  return { edge, baseDomain: baseDomainOverride ?? edge.baseDomain };
}

/**
 * addressPortLimitsOf is what the edge lets a Gateway's address serve: any port of its
 * `addressPortRange`, named by the reservation, or on an edge without one (null, or absent from an
 * older edge's answer) only its fixed `addressPool.ports`, for which no ports are sent.
 */
export function addressPortLimitsOf(edge: EdgeInfo): AddressPortLimits {
  return { range: edge.addressPortRange ?? null, fixed: edge.addressPool?.ports ?? [] };
}
