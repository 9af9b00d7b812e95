import { appendAudit } from './audit.js';
import { StoreConflictError, StoreNotFoundError } from './errors.js';
import { announceRevocations } from './revocations.js';
import { toAccount } from './rows.js';
import type { SqlExecutor, SqlTransaction } from './sql-driver.js';
import type { Actor, DisableAccountResult } from './store.js';

/**
 * Disabled accounts (docs/edge-store.md "Disabled accounts"): an admin switches a tenant off. Its keys are revoked in the same
 * transaction — tunnel keys announced like any revocation, so every edge node closes their live
 * connections, and API keys dropped from the live set the edge re-checks `tunnels` grants against —
 * while its reservations stay held, so its addresses are not free for another account to take.
 * Authentication also refuses any key of a disabled account, which covers a key minted by a
 * transaction that raced the disable.
 */

/** requireActiveAccount throws unless the account exists and is not disabled (before it gets keys or reservations). */
export async function requireActiveAccount(tx: SqlExecutor, accountId: string): Promise<void> {
  const [row] = await tx.query('SELECT id, disabled_at FROM accounts WHERE id = ?', [accountId]);
  if (!row) throw new StoreNotFoundError(`account ${accountId} not found`);
  if (row['disabled_at'] !== null && row['disabled_at'] !== undefined) throw new StoreConflictError(`account ${accountId} is disabled`);
}

/** disableAccountTx disables an account and revokes its live keys; a disabled account is returned unchanged. */
export async function disableAccountTx(tx: SqlTransaction, id: string, now: number, actor: Actor): Promise<DisableAccountResult> {
  const [row] = await tx.query('SELECT * FROM accounts WHERE id = ?', [id]);
  if (!row) throw new StoreNotFoundError(`account ${id} not found`);
  const account = toAccount(row);
  if (account.disabledAt !== null) return { account, revokedApiKeyIds: [], revokedTunnelKeyIds: [] };
  const apiKeyIds = (await tx.query('SELECT id FROM api_keys WHERE account_id = ? AND revoked_at IS NULL ORDER BY id', [id])).map((r) => String(r['id']));
  const tunnelKeyIds = (await tx.query('SELECT id FROM tunnel_keys WHERE account_id = ? AND revoked_at IS NULL ORDER BY id', [id])).map((r) => String(r['id']));
  await tx.run('UPDATE accounts SET disabled_at = ? WHERE id = ?', [now, id]);
  await tx.run('UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL', [now, id]);
  await tx.run('UPDATE tunnel_keys SET revoked_at = ?, previous_hash = NULL WHERE account_id = ? AND revoked_at IS NULL', [now, id]);
  await announceRevocations(tx, tunnelKeyIds);
  await appendAudit(tx, {
    at: now,
    actor,
    action: 'account.disable',
    accountId: id,
    targetKind: 'account',
    targetId: id,
    detail: { revokedApiKeyIds: apiKeyIds, revokedTunnelKeyIds: tunnelKeyIds },
  });
  return { account: { ...account, disabledAt: now }, revokedApiKeyIds: apiKeyIds, revokedTunnelKeyIds: tunnelKeyIds };
}
