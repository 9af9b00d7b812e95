import type * as t from 'io-ts';
import type { ApiKey, ApiKeyScope, Clock, Store } from '../store/index.js';

/** The route table shape shared by the control API's route groups. */

/** RequestContext is what a route handler gets: the authenticated key and the parsed request. */
export interface RequestContext {
  readonly key: ApiKey;
  /** actor is written to the audit log for every change this request makes */
  readonly actor: string;
  readonly params: readonly string[];
  readonly query: URLSearchParams;
  /** body reads and parses the JSON body (size-limited) */
  body(): Promise<unknown>;
}

/** RouteResult is a status and a JSON body. */
export interface RouteResult {
  readonly status: number;
  readonly body: unknown;
}

/** Route is one method + path pattern, the scope it needs and its handler. */
export interface Route {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** anchored pattern; capture groups become `params` */
  readonly path: RegExp;
  /** the scope the key must hold (`admin` holds every scope); `any` for any authenticated key */
  readonly scope: ApiKeyScope | 'any';
  handle(ctx: RequestContext): Promise<RouteResult>;
}

/**
 * ControlStore is the store as the control API uses it: only these methods (docs/architecture.md,
 * narrow interfaces); the certificate, binding-directory and revocation-watch methods are not its.
 */
export type ControlStore = Pick<
  Store,
  'authenticateApiKey' | 'createAccount' | 'createApiKey' | 'createReservation' | 'disableAccount' | 'getAccount' | 'getQuotaOverrides' | 'setQuotaOverrides' | 'getReservation' | 'getTunnelKey' | 'listAccounts' | 'listApiKeys' | 'listAuditEvents' | 'listReservations' | 'listTunnelKeys' | 'markDomainVerified' | 'mintTunnelKey' | 'releaseReservation' | 'setReservationPorts' | 'revokeApiKey' | 'revokeTunnelKey' | 'rotateTunnelKey'
>;

/** RouteDeps are the services route groups use. */
export interface RouteDeps {
  readonly store: ControlStore;
  readonly clock: Clock;
  /** notifyRevoked tells the edge to close the live connections of these tunnel keys */
  notifyRevoked(keyIds: readonly string[]): void;
}

/**
 * answer builds a result from an answer codec of src/control-api and a value of its type, so the
 * edge cannot send a shape the client does not decode.
 */
export function answer<C extends t.Mixed>(codec: C, value: t.TypeOf<C>, status = 200): RouteResult {
  return { status, body: codec.encode(value) };
}
