import {
  ControlNotFoundError,
  MintTunnelKeyBody,
  MintedTunnelKeyAnswer,
  RotateTunnelKeyBody,
  TunnelKeyAnswer,
  TunnelKeysAnswer,
  decodeRequest,
  parseSelector,
} from '../../control-api/index.js';
import { answer } from './routes.js';
import type { RequestContext, Route, RouteDeps, RouteResult } from './routes.js';

/** TunnelKeyRouteOptions bound what a caller may ask for. */
export interface TunnelKeyRouteOptions {
  /** lifetime when the request names none */
  readonly defaultTtlSeconds: number;
  /** the longest lifetime a key may get; longer requests are clamped */
  readonly maxTtlSeconds: number;
  /** connection cap when the request names none */
  readonly defaultMaxConnections: number;
  /** live tunnel keys per account unless an admin overrode it */
  readonly quota?: number;
}

/** tunnelKeyRoutes returns the routes under /v1/tunnel-keys (scope `reservations`: mint, rotate, revoke). */
export function tunnelKeyRoutes({ store, clock, notifyRevoked }: RouteDeps, options: TunnelKeyRouteOptions): Route[] {
  const expiry = (ttlSeconds: number | undefined) =>
    clock.now() + Math.min(ttlSeconds ?? options.defaultTtlSeconds, options.maxTtlSeconds) * 1000;
  const mint = async (ctx: RequestContext): Promise<RouteResult> => {
    const body = decodeRequest(MintTunnelKeyBody, await ctx.body());
    const input = {
      accountId: ctx.key.accountId,
      reservationId: body.reservationId,
      protocol: body.protocol,
      maxConnections: body.maxConnections ?? options.defaultMaxConnections,
      expiresAt: expiry(body.ttlSeconds),
      labels: body.labels,
      quota: options.quota,
    };
    const { record, token } = await store.mintTunnelKey(input, ctx.actor);
    return answer(MintedTunnelKeyAnswer, { tunnelKey: record, token }, 201);
  };
  return [
    {
      method: 'POST',
      path: /^\/v1\/tunnel-keys$/,
      scope: 'reservations',
      handle: (ctx) => mint(ctx),
    },
    {
      method: 'GET',
      path: /^\/v1\/tunnel-keys$/,
      scope: 'reservations',
      handle: async (ctx) => answer(TunnelKeysAnswer, { tunnelKeys: await store.listTunnelKeys(ctx.key.accountId, parseSelector(ctx.query)) }),
    },
    {
      method: 'GET',
      path: /^\/v1\/tunnel-keys\/([^/]+)$/,
      scope: 'reservations',
      handle: async (ctx) => {
        const tunnelKey = await store.getTunnelKey(ctx.key.accountId, ctx.params[0] ?? '');
        if (!tunnelKey) throw new ControlNotFoundError('tunnel key not found');
        return answer(TunnelKeyAnswer, { tunnelKey });
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/tunnel-keys\/([^/]+)\/rotate$/,
      scope: 'reservations',
      handle: async (ctx) => {
        const body = decodeRequest(RotateTunnelKeyBody, await ctx.body());
        const input = { expiresAt: expiry(body.ttlSeconds), graceMs: (body.graceSeconds ?? 0) * 1000 };
        const { record, token } = await store.rotateTunnelKey(ctx.key.accountId, ctx.params[0] ?? '', input, ctx.actor);
        return answer(MintedTunnelKeyAnswer, { tunnelKey: record, token });
      },
    },
    {
      method: 'DELETE',
      path: /^\/v1\/tunnel-keys\/([^/]+)$/,
      scope: 'reservations',
      handle: async (ctx) => {
        const tunnelKey = await store.revokeTunnelKey(ctx.key.accountId, ctx.params[0] ?? '', ctx.actor);
        notifyRevoked([tunnelKey.id]);
        return answer(TunnelKeyAnswer, { tunnelKey });
      },
    },
  ];
}
