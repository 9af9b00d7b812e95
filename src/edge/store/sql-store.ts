import { appendAudit } from './audit.js';
import { StoreConflictError, StoreInvalidInputError, StoreNotFoundError, UniqueViolation } from './errors.js';
import { formatToken, hashSecret, newRecordId, newSecret, parseToken, secretMatches } from './keys.js';
import { migrate } from './migrations.js';
import { REVOCATION_CHANNEL } from './revocations.js';
import { servedChangesWith } from './sql-changes.js';
import { disableAccountTx, requireActiveAccount } from './sql-accounts.js';
import { toAccount, toApiKey, toAuditEvent, toCertificate, toReservation, toTunnelKey } from './rows.js';
import type { SqlDriver } from './sql-driver.js';
import { getQuotaOverridesTx, setQuotaOverridesTx } from './sql-quotas.js';
import {
  createReservationTx, heldByValue, heldReservation, markDomainVerifiedTx, releaseReservationTx, releaseUnverifiedDomainsTx, setReservationPortsTx,
} from './sql-reservations.js';
import { authenticateTunnelKeyWith, mintTunnelKeyTx, revokeTunnelKeyTx, rotateTunnelKeyTx } from './sql-tunnel-keys.js';
import { API_KEY_SCOPES, systemClock } from './store.js';
import type {
  Account, Actor, ApiKey, ApiKeyScope, AuditEvent, AuditQuery, Certificate, Clock, CreateReservationInput,
  CreateReservationResult, DisableAccountResult, LabelSelector, Minted, MintTunnelKeyInput, PortSpec, PutCertificateInput, ReleaseResult, Reservation,
  QuotaOverrides, ReservationKind, RotateTunnelKeyInput, ServedChanges, ServedReservation, Store, TunnelKey, TunnelKeyCheck, TunnelProtocol,
} from './store.js';
import { checkText, matchesSelector, normalizeHostname } from './validate.js';

/**
 * SqlStore implements Store once for both databases over a SqlDriver. Every change runs in a
 * transaction together with its audit event.
 */
export class SqlStore implements Store {
  readonly dialect: 'sqlite' | 'postgres';

  private constructor(
    private readonly db: SqlDriver,
    private readonly clock: Clock,
  ) {
    this.dialect = db.dialect;
  }

  /** open migrates the database to the newest schema and returns a ready store. */
  static async open(db: SqlDriver, clock: Clock = systemClock): Promise<SqlStore> {
    try {
      await migrate(db, clock.now());
    } catch (err) {
      await db.close();
      throw err;
    }
    return new SqlStore(db, clock);
  }

  close(): Promise<void> {
    return this.db.close();
  }

  async createAccount(input: { name: string }, actor: Actor): Promise<Account> {
    const account: Account = { id: newRecordId(), name: checkText('name', input.name, 200), createdAt: this.clock.now(), disabledAt: null };
    return this.db.transaction(async (tx) => {
      try {
        await tx.run('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', [account.id, account.name, account.createdAt]);
      } catch (err) {
        if (err instanceof UniqueViolation) throw new StoreConflictError(`account name ${JSON.stringify(account.name)} is taken`);
        throw err;
      }
      await appendAudit(tx, { at: account.createdAt, actor, action: 'account.create', accountId: account.id, targetKind: 'account', targetId: account.id, detail: { name: account.name } });
      return account;
    });
  }

  async getAccount(id: string): Promise<Account | undefined> {
    const [row] = await this.db.query('SELECT * FROM accounts WHERE id = ?', [id]);
    return row && toAccount(row);
  }

  async listAccounts(): Promise<Account[]> {
    return (await this.db.query('SELECT * FROM accounts ORDER BY created_at, id')).map(toAccount);
  }

  disableAccount(id: string, actor: Actor): Promise<DisableAccountResult> {
    return this.db.transaction((tx) => disableAccountTx(tx, id, this.clock.now(), actor));
  }

  getQuotaOverrides(accountId: string): Promise<QuotaOverrides> {
    return this.db.transaction((tx) => getQuotaOverridesTx(tx, accountId));
  }

  setQuotaOverrides(accountId: string, change: Partial<QuotaOverrides>, actor: Actor): Promise<QuotaOverrides> {
    return this.db.transaction((tx) => setQuotaOverridesTx(tx, accountId, change, this.clock.now(), actor));
  }

  releaseUnverifiedDomains(createdBefore: number, actor: Actor): Promise<ReleaseResult[]> {
    return this.db.transaction((tx) => releaseUnverifiedDomainsTx(tx, createdBefore, this.clock.now(), actor));
  }

  async createApiKey(input: { accountId: string; name: string; scopes: readonly ApiKeyScope[] }, actor: Actor): Promise<Minted<ApiKey>> {
    const name = checkText('name', input.name, 200);
    const scopes = API_KEY_SCOPES.filter((s) => input.scopes.includes(s));
    if (scopes.length === 0 || scopes.length !== new Set(input.scopes).size) {
      throw new StoreInvalidInputError('scopes', `must be a non-empty subset of ${API_KEY_SCOPES.join(', ')}`);
    }
    const now = this.clock.now();
    const key: ApiKey = { id: newRecordId(), accountId: input.accountId, name, scopes, createdAt: now, revokedAt: null };
    const secret = newSecret();
    await this.db.transaction(async (tx) => {
      await requireActiveAccount(tx, input.accountId);
      await tx.run('INSERT INTO api_keys (id, account_id, name, scopes, secret_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
        key.id, key.accountId, name, JSON.stringify(scopes), hashSecret(secret), now,
      ]);
      await appendAudit(tx, { at: now, actor, action: 'api-key.create', accountId: key.accountId, targetKind: 'api-key', targetId: key.id, detail: { name, scopes } });
    });
    return { record: key, token: formatToken('api', key.id, secret) };
  }

  async listApiKeys(accountId: string): Promise<ApiKey[]> {
    const rows = await this.db.query('SELECT * FROM api_keys WHERE account_id = ? AND revoked_at IS NULL ORDER BY created_at, id', [accountId]);
    return rows.map(toApiKey);
  }

  async revokeApiKey(accountId: string, id: string, actor: Actor): Promise<ApiKey> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query('SELECT * FROM api_keys WHERE account_id = ? AND id = ? AND revoked_at IS NULL', [accountId, id]);
      if (!row) throw new StoreNotFoundError(`API key ${id} not found`);
      const now = this.clock.now();
      await tx.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [now, id]);
      await appendAudit(tx, { at: now, actor, action: 'api-key.revoke', accountId, targetKind: 'api-key', targetId: id });
      return { ...toApiKey(row), revokedAt: now };
    });
  }

  async authenticateApiKey(token: string): Promise<ApiKey | undefined> {
    const parsed = parseToken('api', token);
    if (!parsed) return undefined;
    const [row] = await this.db.query(
      'SELECT api_keys.* FROM api_keys JOIN accounts ON accounts.id = api_keys.account_id WHERE api_keys.id = ? AND api_keys.revoked_at IS NULL AND accounts.disabled_at IS NULL',
      [parsed.id],
    );
    if (!row || !secretMatches(parsed.secret, String(row['secret_hash']))) return undefined;
    return toApiKey(row);
  }

  async createReservation(input: CreateReservationInput, actor: Actor): Promise<CreateReservationResult> {
    const attempt = () =>
      this.db.transaction(async (tx) => {
        await requireActiveAccount(tx, input.accountId);
        return createReservationTx(tx, input, this.clock.now(), actor);
      });
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
    }
    // Lost a race for the same address or name. The second attempt sees the winner's row: the same
    // account adopts it (idempotent create stays idempotent under concurrency), another conflicts.
    try {
      return await attempt();
    } catch (err) {
      if (err instanceof UniqueViolation) throw new StoreConflictError('the address or name was reserved concurrently; retry');
      throw err;
    }
  }

  getReservation(accountId: string, id: string): Promise<Reservation | undefined> {
    return heldReservation(this.db, accountId, id);
  }

  findReservation(kind: ReservationKind, value: string): Promise<Reservation | undefined> {
    return heldByValue(this.db, kind, kind === 'domain' ? value.toLowerCase() : value);
  }

  async listServedReservations(): Promise<ServedReservation[]> {
    const rows = await this.db.query('SELECT * FROM reservations WHERE released_at IS NULL ORDER BY kind, port, value');
    const keys = await this.db.query(
      'SELECT DISTINCT reservation_id, protocol FROM tunnel_keys WHERE revoked_at IS NULL AND expires_at > ? ORDER BY reservation_id, protocol',
      [this.clock.now()],
    );
    const protocols = new Map<string, TunnelProtocol[]>();
    for (const row of keys) {
      const id = String(row['reservation_id']);
      protocols.set(id, [...(protocols.get(id) ?? []), String(row['protocol']) as TunnelProtocol]);
    }
    return rows.map(toReservation).map((reservation) => ({ reservation, protocols: protocols.get(reservation.id) ?? [] }));
  }

  listServedChanges(afterSeq?: number): Promise<ServedChanges> {
    return servedChangesWith(this.db, afterSeq, this.clock.now());
  }

  async listReservations(accountId: string, selector?: LabelSelector): Promise<Reservation[]> {
    // Labels are JSON text, so selection happens here; one account's reservations are few enough.
    const rows = await this.db.query('SELECT * FROM reservations WHERE released_at IS NULL AND account_id = ? ORDER BY kind, port, value', [accountId]);
    return rows.map(toReservation).filter((r) => matchesSelector(r.labels, selector));
  }

  markDomainVerified(accountId: string, id: string, actor: Actor): Promise<Reservation> {
    return this.db.transaction((tx) => markDomainVerifiedTx(tx, accountId, id, this.clock.now(), actor));
  }

  setReservationPorts(accountId: string, id: string, ports: readonly PortSpec[], actor: Actor): Promise<Reservation> {
    return this.db.transaction((tx) => setReservationPortsTx(tx, accountId, id, ports, this.clock.now(), actor));
  }

  releaseReservation(accountId: string, id: string, actor: Actor): Promise<ReleaseResult> {
    return this.db.transaction((tx) => releaseReservationTx(tx, accountId, id, this.clock.now(), actor));
  }

  mintTunnelKey(input: MintTunnelKeyInput, actor: Actor): Promise<Minted<TunnelKey>> {
    return this.db.transaction(async (tx) => {
      await requireActiveAccount(tx, input.accountId);
      return mintTunnelKeyTx(tx, input, this.clock.now(), actor);
    });
  }

  async getTunnelKey(accountId: string, id: string): Promise<TunnelKey | undefined> {
    const [row] = await this.db.query('SELECT * FROM tunnel_keys WHERE account_id = ? AND id = ?', [accountId, id]);
    return row && toTunnelKey(row);
  }

  async listTunnelKeys(accountId: string, selector?: LabelSelector): Promise<TunnelKey[]> {
    const rows = await this.db.query('SELECT * FROM tunnel_keys WHERE account_id = ? AND revoked_at IS NULL ORDER BY created_at, id', [accountId]);
    return rows.map(toTunnelKey).filter((k) => matchesSelector(k.labels, selector));
  }

  rotateTunnelKey(accountId: string, id: string, input: RotateTunnelKeyInput, actor: Actor): Promise<Minted<TunnelKey>> {
    return this.db.transaction((tx) => rotateTunnelKeyTx(tx, accountId, id, input, this.clock.now(), actor));
  }

  revokeTunnelKey(accountId: string, id: string, actor: Actor): Promise<TunnelKey> {
    return this.db.transaction((tx) => revokeTunnelKeyTx(tx, accountId, id, this.clock.now(), actor));
  }

  authenticateTunnelKey(token: string): Promise<TunnelKeyCheck> {
    return authenticateTunnelKeyWith(this.db, token, this.clock.now());
  }

  watchTunnelKeyRevocations(listener: (keyIds: readonly string[]) => void): Promise<() => Promise<void>> {
    return this.db.listen(REVOCATION_CHANNEL, (payload) => {
      const ids: unknown = JSON.parse(payload);
      if (Array.isArray(ids)) listener(ids.filter((id): id is string => typeof id === 'string'));
    });
  }

  async putCertificate(input: PutCertificateInput, actor: Actor): Promise<Certificate> {
    const hostname = input.hostname.startsWith('*.')
      ? `*.${normalizeHostname('hostname', input.hostname.slice(2))}`
      : normalizeHostname('hostname', input.hostname);
    if (!Number.isSafeInteger(input.notAfter)) throw new StoreInvalidInputError('notAfter', 'must be a time in milliseconds');
    const cert: Certificate = { ...input, hostname, updatedAt: this.clock.now() };
    await this.db.transaction(async (tx) => {
      await tx.run('DELETE FROM certificates WHERE hostname = ?', [hostname]);
      await tx.run('INSERT INTO certificates (hostname, chain_pem, key_pem, not_after, updated_at) VALUES (?, ?, ?, ?, ?)', [
        hostname, cert.chainPem, cert.keyPem, cert.notAfter, cert.updatedAt,
      ]);
      // The private key never goes to the audit log; the expiry is enough to follow renewals.
      await appendAudit(tx, { at: cert.updatedAt, actor, action: 'certificate.put', accountId: null, targetKind: 'certificate', targetId: hostname, detail: { notAfter: cert.notAfter } });
    });
    return cert;
  }

  async getCertificate(hostname: string): Promise<Certificate | undefined> {
    const [row] = await this.db.query('SELECT * FROM certificates WHERE hostname = ?', [hostname.toLowerCase()]);
    return row && toCertificate(row);
  }

  async listCertificates(query: { notAfterBefore?: number } = {}): Promise<Certificate[]> {
    const rows = query.notAfterBefore === undefined
      ? await this.db.query('SELECT * FROM certificates ORDER BY hostname')
      : await this.db.query('SELECT * FROM certificates WHERE not_after < ? ORDER BY hostname', [query.notAfterBefore]);
    return rows.map(toCertificate);
  }

  async deleteCertificate(hostname: string, actor: Actor): Promise<void> {
    await this.db.transaction(async (tx) => {
      const changed = await tx.run('DELETE FROM certificates WHERE hostname = ?', [hostname.toLowerCase()]);
      if (changed === 0) throw new StoreNotFoundError(`certificate for ${hostname} not found`);
      await appendAudit(tx, { at: this.clock.now(), actor, action: 'certificate.delete', accountId: null, targetKind: 'certificate', targetId: hostname.toLowerCase() });
    });
  }

  async listAuditEvents(query: AuditQuery = {}): Promise<AuditEvent[]> {
    const limit = Math.min(Math.max(query.limit ?? 1000, 1), 10000);
    const where = ['seq > ?'];
    const params: (string | number)[] = [query.afterSeq ?? 0];
    if (query.accountId !== undefined) {
      where.push('account_id = ?');
      params.push(query.accountId);
    }
    const rows = await this.db.query(`SELECT * FROM audit_log WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ?`, [...params, limit]);
    return rows.map(toAuditEvent);
  }
}
