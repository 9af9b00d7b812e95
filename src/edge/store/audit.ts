import type { SqlExecutor } from './sql-driver.js';
import type { Actor } from './store.js';

/** AuditEntry is one change to append; `detail` must never hold a secret (tokens, hashes, private keys). */
export interface AuditEntry {
  readonly at: number;
  readonly actor: Actor;
  readonly action: string;
  readonly accountId: string | null;
  readonly targetKind: string;
  readonly targetId: string;
  readonly detail?: Record<string, unknown>;
}

/** appendAudit writes one audit event inside the caller's transaction, so the change and its record commit together. */
export async function appendAudit(tx: SqlExecutor, entry: AuditEntry): Promise<void> {
  await tx.run(
    'INSERT INTO audit_log (at, actor, action, account_id, target_kind, target_id, detail) VALUES (?, ?, ?, ?, ?, ?, ?)',
    [entry.at, entry.actor, entry.action, entry.accountId, entry.targetKind, entry.targetId, JSON.stringify(entry.detail ?? {})],
  );
}
