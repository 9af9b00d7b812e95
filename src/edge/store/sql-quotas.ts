import { appendAudit } from './audit.js';
import { StoreInvalidInputError, StoreNotFoundError, StoreQuotaExceededError } from './errors.js';
import type { SqlExecutor } from './sql-driver.js';
import type { Actor, CountedQuota, QuotaName, QuotaOverrides } from './store.js';

/**
 * Per-account quotas (20,000 reservations of one tenant took an idle edge to
 * 89 % of a core). The edge's defaults come with each call (`quota` on the input); an admin's
 * per-account override, kept on the account row, wins. Counted inside the creating transaction:
 * SQLite serialises writers, so the limit is exact; on PostgreSQL two nodes creating at the same
 * moment may each see the count below the limit and overshoot it by one each.
 */

/** MAX_QUOTA bounds an override, so a typo cannot mean "unlimited" by accident. */
export const MAX_QUOTA = 1_000_000;

const COLUMN: Record<QuotaName, string> = { reservations: 'max_reservations', tunnelKeys: 'max_tunnel_keys', concurrentTunnels: 'max_concurrent_tunnels' };

const COUNT: Record<CountedQuota, string> = {
  reservations: 'SELECT COUNT(*) AS n FROM reservations WHERE account_id = ? AND released_at IS NULL',
  tunnelKeys: 'SELECT COUNT(*) AS n FROM tunnel_keys WHERE account_id = ? AND revoked_at IS NULL AND expires_at > ?',
};

function toLimit(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** checkQuotaTx throws StoreQuotaExceededError when the account already holds its limit of `quota`. */
export async function checkQuotaTx(tx: SqlExecutor, accountId: string, quota: CountedQuota, defaultLimit: number | undefined, now: number): Promise<void> {
  const [row] = await tx.query(`SELECT ${COLUMN[quota]} AS q FROM accounts WHERE id = ?`, [accountId]);
  const limit = toLimit(row?.['q']) ?? defaultLimit;
  if (limit === undefined) return;
  const params = quota === 'tunnelKeys' ? [accountId, now] : [accountId];
  const [count] = await tx.query(COUNT[quota], params);
  const held = Number(count?.['n'] ?? 0);
  if (held >= limit) throw new StoreQuotaExceededError(quota, limit, held);
}

/** getQuotaOverridesTx reads an account's overrides (null: the edge's default). */
export async function getQuotaOverridesTx(tx: SqlExecutor, accountId: string): Promise<QuotaOverrides> {
  const [row] = await tx.query('SELECT max_reservations, max_tunnel_keys, max_concurrent_tunnels FROM accounts WHERE id = ?', [accountId]);
  if (!row) throw new StoreNotFoundError(`account ${accountId} not found`);
  return {
    reservations: toLimit(row['max_reservations']),
    tunnelKeys: toLimit(row['max_tunnel_keys']),
    concurrentTunnels: toLimit(row['max_concurrent_tunnels']),
  };
}

/** setQuotaOverridesTx changes the overrides given (a number, or null for the default) and leaves the others. */
export async function setQuotaOverridesTx(
  tx: SqlExecutor,
  accountId: string,
  change: Partial<QuotaOverrides>,
  now: number,
  actor: Actor,
): Promise<QuotaOverrides> {
  const current = await getQuotaOverridesTx(tx, accountId);
  for (const [field, value] of Object.entries(change)) {
    if (value !== null && value !== undefined && (!Number.isInteger(value) || value < 0 || value > MAX_QUOTA)) {
      throw new StoreInvalidInputError(field, `must be an integer 0..${MAX_QUOTA} or null`);
    }
  }
  const next: QuotaOverrides = {
    reservations: change.reservations === undefined ? current.reservations : change.reservations,
    tunnelKeys: change.tunnelKeys === undefined ? current.tunnelKeys : change.tunnelKeys,
    concurrentTunnels: change.concurrentTunnels === undefined ? current.concurrentTunnels : change.concurrentTunnels,
  };
  await tx.run('UPDATE accounts SET max_reservations = ?, max_tunnel_keys = ?, max_concurrent_tunnels = ? WHERE id = ?', [
    next.reservations,
    next.tunnelKeys,
    next.concurrentTunnels,
    accountId,
  ]);
  await appendAudit(tx, { at: now, actor, action: 'account.quotas', accountId, targetKind: 'account', targetId: accountId, detail: { ...next } });
  return next;
}
