import {
  AccountAnswer,
  AccountsAnswer,
  ApiKeyAnswer,
  ApiKeysAnswer,
  AuditAnswer,
  ControlInvalidRequestError,
  ControlNotFoundError,
  CreateAccountBody,
  CreateApiKeyBody,
  DisabledAccountAnswer,
  MintedApiKeyAnswer,
  WhoAmIAnswer,
  decodeRequest,
} from '../../control-api/index.js';
import { answer } from './routes.js';
import type { RequestContext, Route, RouteDeps } from './routes.js';

/**
 * Accounts, API keys and the audit log. `admin` is the edge operator's scope: it creates accounts
 * and keys for any account; every other key acts on its own account only.
 */

function targetAccount(ctx: RequestContext, requested: string | undefined | null): string {
  return requested ?? ctx.key.accountId;
}

/** accountRoutes returns the routes for /v1/account, /v1/accounts, /v1/api-keys and /v1/audit. */
export function accountRoutes(deps: RouteDeps): Route[] {
  return [...accountOnlyRoutes(deps), ...apiKeyRoutes(deps), auditRoute(deps)];
}

function accountOnlyRoutes({ store, notifyRevoked }: RouteDeps): Route[] {
  return [
    {
      method: 'GET',
      path: /^\/v1\/account$/,
      scope: 'any',
      handle: async (ctx) => {
        const account = await store.getAccount(ctx.key.accountId);
        if (!account) throw new ControlNotFoundError(`account ${ctx.key.accountId} not found`);
        return answer(WhoAmIAnswer, { account, apiKey: ctx.key });
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/accounts$/,
      scope: 'admin',
      handle: async (ctx) => {
        const body = decodeRequest(CreateAccountBody, await ctx.body());
        return answer(AccountAnswer, { account: await store.createAccount({ name: body.name }, ctx.actor) }, 201);
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/accounts$/,
      scope: 'admin',
      handle: async () => answer(AccountsAnswer, { accounts: await store.listAccounts() }),
    },
    {
      method: 'POST',
      path: /^\/v1\/accounts\/([^/]+)\/disable$/,
      scope: 'admin',
      handle: async (ctx) => {
        const id = ctx.params[0] ?? '';
        // The calling key would lock itself (and perhaps every admin) out: another account's admin must do it.
        if (id === ctx.key.accountId) throw new ControlInvalidRequestError('an API key cannot disable its own account', 'id');
        const result = await store.disableAccount(id, ctx.actor);
        if (result.revokedTunnelKeyIds.length) notifyRevoked(result.revokedTunnelKeyIds);
        return answer(DisabledAccountAnswer, result);
      },
    },
  ];
}

function apiKeyRoutes({ store }: RouteDeps): Route[] {
  return [
    {
      method: 'POST',
      path: /^\/v1\/api-keys$/,
      scope: 'admin',
      handle: async (ctx) => {
        const body = decodeRequest(CreateApiKeyBody, await ctx.body());
        const accountId = targetAccount(ctx, body.accountId);
        if (!(await store.getAccount(accountId))) throw new ControlNotFoundError(`account ${accountId} not found`);
        const { record, token } = await store.createApiKey({ accountId, name: body.name, scopes: body.scopes }, ctx.actor);
        return answer(MintedApiKeyAnswer, { apiKey: record, token }, 201);
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/api-keys$/,
      scope: 'admin',
      handle: async (ctx) => answer(ApiKeysAnswer, { apiKeys: await store.listApiKeys(targetAccount(ctx, ctx.query.get('accountId'))) }),
    },
    {
      method: 'DELETE',
      path: /^\/v1\/api-keys\/([^/]+)$/,
      scope: 'admin',
      handle: async (ctx) => {
        const accountId = targetAccount(ctx, ctx.query.get('accountId'));
        return answer(ApiKeyAnswer, { apiKey: await store.revokeApiKey(accountId, ctx.params[0] ?? '', ctx.actor) });
      },
    },
  ];
}

function auditRoute({ store }: RouteDeps): Route {
  return {
    method: 'GET',
    path: /^\/v1\/audit$/,
    scope: 'admin',
    handle: async (ctx) => {
      const afterSeq = Number(ctx.query.get('afterSeq') ?? 0);
      const limit = Number(ctx.query.get('limit') ?? 100);
      const events = await store.listAuditEvents({
        // `?accountId=` names the account whose events an admin reads (an earlier version ignored it).
        accountId: targetAccount(ctx, ctx.query.get('accountId')),
        afterSeq: Number.isSafeInteger(afterSeq) ? afterSeq : 0,
        limit: Number.isSafeInteger(limit) ? limit : 100,
      });
      return answer(AuditAnswer, { events });
    },
  };
}
