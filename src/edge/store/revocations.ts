import type { SqlTransaction } from './sql-driver.js';

/**
 * Revocation announcements: revoking a tunnel key must close its live connections on every edge
 * node within a second (docs/edge-store.md "Revocation announcements"), so the revoking transaction publishes the ids on a channel that
 * every node's store listens on (PostgreSQL LISTEN/NOTIFY; in-process for SQLite).
 */

/** REVOCATION_CHANNEL carries JSON arrays of revoked tunnel key ids. */
export const REVOCATION_CHANNEL = 'tuna_tunnel_keys_revoked';

/** announceRevocations publishes revoked key ids at commit, in chunks under PostgreSQL's 8000-byte payload limit. */
export async function announceRevocations(tx: SqlTransaction, keyIds: readonly string[]): Promise<void> {
  for (let i = 0; i < keyIds.length; i += 200) await tx.notify(REVOCATION_CHANNEL, JSON.stringify(keyIds.slice(i, i + 200)));
}

