import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ControlAnswerError,
  ControlConflictError,
  ControlForbiddenError,
  ControlInvalidRequestError,
  ControlMethodNotAllowedError,
  ControlNotFoundError,
  ControlQuotaExceededError,
  ControlRateLimitedError,
  ControlServerError,
  ControlUnauthorizedError,
} from '../../control-api/index.js';
import type { PortPool, PortSpec, Reservation, ReservationStatus } from '../../control-api/index.js';
import {
  StoreConflictError, StoreError, StoreInvalidInputError, StoreNotFoundError, StorePoolExhaustedError, StoreQuotaExceededError, StoreUnavailableError, systemClock,
} from '../store/index.js';
import type { ApiKey, Clock } from '../store/index.js';
import { accountRoutes } from './account-routes.js';
import type { OwnListener } from './address-ports.js';
import { createDnsVerifier } from './dns-verifier.js';
import type { DomainVerifier } from './dns-verifier.js';
import { edgeInfoRoute } from './edge-info-route.js';
import type { PublicListeners } from './edge-info-route.js';
import { checkDeclaredLength, readJsonBody, sendControlError, sendJson } from './http-io.js';
import { FailureRateLimiter } from './rate-limiter.js';
import type { RateLimitOptions } from './rate-limiter.js';
import { DEFAULT_QUOTAS, quotaRoutes } from './quota-routes.js';
import type { QuotaDefaults } from './quota-routes.js';
import { reservationRoutes } from './reservation-routes.js';
import type { ControlStore, RequestContext, Route, RouteDeps } from './routes.js';
import { tunnelKeyRoutes } from './tunnel-key-routes.js';

/**
 * The edge's control API (`/v1`, JSON): accounts, scoped API keys, reservations and tunnel keys
 * (DESIGN "Keys and trust"). A plain `(req, res)` handler so the edge can mount it on any server.
 * Order of checks per request: rate limit (before the key is looked at), declared body size,
 * Bearer key, route and scope, body, handler. Store errors map to statuses by their code.
 */

/** ControlApiOptions configures the control API. */
export interface ControlApiOptions {
  readonly store: ControlStore;
  readonly clock?: Clock;
  /** the edge's base domain for subdomain reservations */
  readonly baseDomain: string;
  readonly portPool?: PortPool;
  /** IPv4 CIDR or range for dedicated addresses */
  readonly addressPool?: string;
  /** the ports every dedicated address serves unless its reservation names its own (GET /v1/edge; default none) */
  readonly addressPorts?: readonly PortSpec[];
  /** the range an address reservation's own ports may come from (absent: only the ports of `addressPorts`) */
  readonly addressPortRange?: PortPool;
  /** the bound ports of the public HTTP/HTTPS listeners, read per request (GET /v1/edge; default none) */
  readonly publicListeners?: () => PublicListeners;
  /** the bound ports of every listener of the edge itself (tunnel/control, HTTP, HTTPS, metrics): never reservable */
  readonly ownPorts?: () => readonly number[];
  /** the same listeners with their bound hosts: an address reservation may not ask for one of them where it binds */
  readonly ownListeners?: () => readonly OwnListener[];
  /** what this node does with a reservation now (its listeners), added to GET answers */
  readonly listenerStatus?: (reservation: Reservation) => ReservationStatus | undefined;
  /** largest request body in bytes (default 1 MiB) */
  readonly maxBodyBytes?: number;
  /** failed-authentication budget per client address (default 20, refilling 1 per second) */
  readonly rateLimit?: RateLimitOptions;
  /** custom-domain check (default: DNS TXT through `dnsServers` or the system resolver) */
  readonly verifyDomain?: DomainVerifier;
  readonly dnsServers?: readonly string[];
  /** per-account quotas unless an admin overrides them (default DEFAULT_QUOTAS) */
  readonly quotas?: Partial<QuotaDefaults>;
  readonly tunnelKeyDefaults?: { ttlSeconds?: number; maxTtlSeconds?: number; maxConnections?: number };
  /** called after tunnel keys are revoked (directly or by a release): close their live connections */
  readonly onTunnelKeysRevoked?: (keyIds: readonly string[]) => void;
  /** one line per failure that is not the client's fault; never carries a key or a body */
  readonly log?: (line: string) => void;
}

/** ControlRoute is what a route of the table asks: its method, its anchored path pattern and its scope. */
export type ControlRoute = Pick<Route, 'method' | 'path' | 'scope'>;

/** ControlApi is the request handler for `/v1`, with the route table it serves (read by the attack suite, test/security). */
export interface ControlApi {
  (req: IncomingMessage, res: ServerResponse): void;
  readonly routes: readonly ControlRoute[];
}

const BEARER = /^Bearer ([^\s]+)$/;

/** createControlApi builds the `/v1` request handler. */
export function createControlApi(options: ControlApiOptions): ControlApi {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? (() => undefined);
  const limiter = new FailureRateLimiter(options.rateLimit ?? { capacity: 20, refillPerSecond: 1 }, clock);
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const notifyRevoked = (keyIds: readonly string[]) => {
    try {
      options.onTunnelKeysRevoked?.(keyIds);
    } catch (err) {
      log(`control: onTunnelKeysRevoked listener failed: ${(err as Error).name}`);
    }
  };
  const routes = buildRoutes(options, { store: options.store, clock, notifyRevoked });

  async function authenticate(req: IncomingMessage, client: string): Promise<ApiKey> {
    const match = BEARER.exec(req.headers.authorization ?? '');
    const key = match?.[1] ? await options.store.authenticateApiKey(match[1]) : undefined;
    if (!key) {
      limiter.recordFailure(client);
      throw new ControlUnauthorizedError();
    }
    return key;
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const client = req.socket.remoteAddress ?? 'unknown';
    const retryAfter = limiter.retryAfter(client);
    if (retryAfter > 0) throw new ControlRateLimitedError(retryAfter);
    checkDeclaredLength(req, maxBody);
    const key = await authenticate(req, client);
    const url = new URL(req.url ?? '/', 'http://control.invalid');
    const { route, params } = matchRoute(routes, req.method ?? 'GET', url.pathname);
    if (route.scope !== 'any' && !key.scopes.includes(route.scope) && !key.scopes.includes('admin')) throw new ControlForbiddenError();
    const ctx: RequestContext = { key, actor: `apikey:${key.id}`, params, query: url.searchParams, body: () => readJsonBody(req, maxBody) };
    const result = await route.handle(ctx);
    sendJson(res, result.status, result.body);
  }

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    serve(req, res).catch((err: unknown) => answerError(res, err, (line) => log(`control: ${req.method ?? '?'} ${line}`)));
  };
  return Object.assign(handler, { routes: routes.map(({ method, path, scope }) => ({ method, path, scope })) });
}

/** answerError maps an error to its status; an unexpected one is a 500 with no detail and one log line (name and code only). */
function answerError(res: ServerResponse, err: unknown, log: (line: string) => void): void {
  const mapped = toControlError(err);
  if (!mapped) log(`request failed: ${(err as Error).name ?? 'Error'} ${(err as { code?: string }).code ?? ''}`.trim());
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (mapped) sendControlError(res, mapped);
  else sendControlError(res, new ControlServerError());
}

function buildRoutes(options: ControlApiOptions, deps: RouteDeps): Route[] {
  const defaults = options.tunnelKeyDefaults ?? {};
  const quotas: QuotaDefaults = { ...DEFAULT_QUOTAS, ...options.quotas };
  return [
    edgeInfoRoute({
      baseDomain: options.baseDomain,
      portPool: options.portPool,
      addressPool: options.addressPool,
      addressPorts: options.addressPorts ?? [],
      addressPortRange: options.addressPortRange,
      publicListeners: options.publicListeners ?? (() => ({})),
    }),
    ...accountRoutes(deps),
    ...quotaRoutes(deps, quotas),
    ...reservationRoutes(deps, {
      baseDomain: options.baseDomain,
      portPool: options.portPool,
      addressPool: options.addressPool,
      ...(options.ownPorts !== undefined ? { ownPorts: options.ownPorts } : {}),
      addressPorts: options.addressPorts ?? [],
      ...(options.addressPortRange !== undefined ? { addressPortRange: options.addressPortRange } : {}),
      ...(options.ownListeners !== undefined ? { ownListeners: options.ownListeners } : {}),
      ...(options.listenerStatus !== undefined ? { listenerStatus: options.listenerStatus } : {}),
      verifyDomain: options.verifyDomain ?? createDnsVerifier(options.dnsServers),
      quota: quotas.reservations,
    }),
    ...tunnelKeyRoutes(deps, {
      defaultTtlSeconds: defaults.ttlSeconds ?? 30 * 86400,
      maxTtlSeconds: defaults.maxTtlSeconds ?? 365 * 86400,
      defaultMaxConnections: defaults.maxConnections ?? 2,
      quota: quotas.tunnelKeys,
    }),
  ];
}

function matchRoute(routes: readonly Route[], method: string, pathname: string): { route: Route; params: string[] } {
  const allowed: string[] = [];
  for (const route of routes) {
    const match = route.path.exec(pathname);
    if (!match) continue;
    if (route.method !== method) {
      allowed.push(route.method);
      continue;
    }
    try {
      return { route, params: match.slice(1).map((p) => decodeURIComponent(p)) };
    } catch {
      throw new ControlInvalidRequestError('malformed percent-encoding in the path', 'path');
    }
  }
  if (allowed.length) throw new ControlMethodNotAllowedError(allowed);
  throw new ControlNotFoundError(`no such endpoint: ${pathname}`);
}

/** toControlError maps store errors onto HTTP statuses; anything else stays unmapped (500). */
function toControlError(err: unknown): ControlAnswerError | undefined {
  if (err instanceof ControlAnswerError) return err;
  if (!(err instanceof StoreError)) return undefined;
  if (err instanceof StoreInvalidInputError) return new ControlInvalidRequestError(err.message, err.field);
  if (err instanceof StoreNotFoundError) return new ControlNotFoundError(err.message);
  if (err instanceof StoreQuotaExceededError) return new ControlQuotaExceededError(err.message, err.quota);
  // 409 carries the store's own code (TUNA_STORE_CONFLICT, TUNA_STORE_POOL_EXHAUSTED).
  if (err instanceof StoreConflictError || err instanceof StorePoolExhaustedError) return new ControlConflictError(err.message, err.code);
  // The database is down: nothing was done, the same call may succeed later (not a 500: no bug to look for).
  if (err instanceof StoreUnavailableError) return new ControlServerError(503, 'TUNA_CONTROL_STORE_UNAVAILABLE', 'the edge cannot reach its database; retry later');
  return undefined;
}
