import type { Account, ApiKey, Minted, Store } from '../store/index.js';
import { EdgeAlreadyInitializedError } from '../errors.js';

/** InitStore is the store as `tuna edge init` writes it: only what it uses (docs/architecture.md, narrow interfaces). */
export type InitStore = Pick<Store, 'createAccount' | 'createApiKey' | 'listAccounts'>;

/** InitEdgeResult is the first account and its admin key; the token is shown once and never stored. */
export interface InitEdgeResult {
  account: Account;
  adminKey: Minted<ApiKey>;
}

/**
 * initEdge creates the first account and an `admin` API key in an empty store (`tuna edge init`).
 * It refuses a store that already has accounts, so running it twice cannot mint a second admin key
 * behind the operator's back. Two nodes racing on one PostgreSQL database: the account name is
 * unique, so one of them fails with TUNA_STORE_CONFLICT.
 */
export async function initEdge(store: InitStore, options: { accountName?: string; keyName?: string; actor?: string } = {}): Promise<InitEdgeResult> {
  if ((await store.listAccounts()).length > 0) throw new EdgeAlreadyInitializedError();
  const actor = options.actor ?? 'cli';
  const account = await store.createAccount({ name: options.accountName ?? 'admin' }, actor);
  const adminKey = await store.createApiKey({ accountId: account.id, name: options.keyName ?? 'admin', scopes: ['admin'] }, actor);
  return { account, adminKey };
}
