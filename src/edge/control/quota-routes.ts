import { ControlInvalidRequestError, ControlNotFoundError, QuotasAnswer, SetQuotasBody, decodeRequest } from '../../control-api/index.js';
import type { AccountQuotas } from '../../control-api/index.js';
import type { QuotaName, QuotaOverrides, Store } from '../store/index.js';
import { answer } from './routes.js';
import type { Route, RouteDeps } from './routes.js';

/**
 * Per-account quotas (docs/edge-store.md "Quotas and unverified domains"): the edge's defaults (`store.quotas`) hold unless an
 * admin overrides them for one account. The store counts and refuses (TUNA_STORE_QUOTA_EXCEEDED,
 * answered 409 TUNA_CONTROL_QUOTA_EXCEEDED naming the quota).
 */

/** QuotaDefaults are the edge's per-account limits. */
export interface QuotaDefaults {
  /** held reservations per account */
  readonly reservations: number;
  /** live (unrevoked, unexpired) tunnel keys per account */
  readonly tunnelKeys: number;
  /** live tunnels opened with the account's `tunnels`-scoped API keys, per edge node (the tunnel authority enforces it) */
  readonly concurrentTunnels: number;
}

/** DEFAULT_QUOTAS are the limits when the config names none (concurrent tunnels: two replicas for each of 100 reservations). */
export const DEFAULT_QUOTAS: QuotaDefaults = { reservations: 100, tunnelKeys: 500, concurrentTunnels: 200 };

function toQuotas(accountId: string, overrides: QuotaOverrides, defaults: QuotaDefaults): AccountQuotas {
  return {
    accountId,
    overrides: { reservations: overrides.reservations, tunnelKeys: overrides.tunnelKeys, concurrentTunnels: overrides.concurrentTunnels },
    limits: {
      reservations: overrides.reservations ?? defaults.reservations,
      tunnelKeys: overrides.tunnelKeys ?? defaults.tunnelKeys,
      concurrentTunnels: overrides.concurrentTunnels ?? defaults.concurrentTunnels,
    },
  };
}

async function requireAccount(store: Pick<Store, 'getAccount'>, id: string): Promise<void> {
  if ((await store.getAccount(id)) === undefined) throw new ControlNotFoundError(`account ${id} not found`);
}

/** quotaRoutes returns GET and POST /v1/accounts/{id}/quotas (scope `admin`). */
export function quotaRoutes({ store }: RouteDeps, defaults: QuotaDefaults): Route[] {
  return [
    {
      method: 'GET',
      path: /^\/v1\/accounts\/([^/]+)\/quotas$/,
      scope: 'admin',
      handle: async (ctx) => {
        const id = ctx.params[0] ?? '';
        await requireAccount(store, id);
        return answer(QuotasAnswer, { quotas: toQuotas(id, await store.getQuotaOverrides(id), defaults) });
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/accounts\/([^/]+)\/quotas$/,
      scope: 'admin',
      handle: async (ctx) => {
        const id = ctx.params[0] ?? '';
        const body = decodeRequest(SetQuotasBody, await ctx.body());
        const change: { -readonly [K in QuotaName]?: number | null } = {};
        if (body.reservations !== undefined) change.reservations = body.reservations;
        if (body.tunnelKeys !== undefined) change.tunnelKeys = body.tunnelKeys;
        if (body.concurrentTunnels !== undefined) change.concurrentTunnels = body.concurrentTunnels;
        for (const quota of body.reset ?? []) {
          if (change[quota] !== undefined) throw new ControlInvalidRequestError(`${quota} is both set and reset`, 'reset');
          change[quota] = null;
        }
        await requireAccount(store, id);
        return answer(QuotasAnswer, { quotas: toQuotas(id, await store.setQuotaOverrides(id, change, ctx.actor), defaults) });
      },
    },
  ];
}
