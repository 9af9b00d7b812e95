import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresStore, openSqliteStore } from '../../src/edge/store/index.js';
import type { Account, Store } from '../../src/edge/store/index.js';
import { PostgresDriver } from '../../src/edge/store/postgres-driver.js';
import type { SqlDriver } from '../../src/edge/store/sql-driver.js';
import { SqliteDriver } from '../../src/edge/store/sqlite-driver.js';
import { FakeClock, STORE_BACKENDS, freshPostgresSchema } from '../support/postgres.js';

/** Contract: a disabled account's keys stop authenticating, on every backend (`tuna accounts disable`). */
for (const backend of STORE_BACKENDS) {
  describe(`store contract: disabled accounts (${backend.name})`, function () {
    this.timeout(120_000);
    let store: Store;
    let clock: FakeClock;

    beforeEach(async () => {
      clock = new FakeClock();
      store = await backend.open(clock);
    });
    afterEach(async () => {
      await store.close();
    });

    /** tenant creates an account holding an API key, a TCP port and a tunnel key for it. */
    async function tenant(name: string) {
      const account = await store.createAccount({ name }, 'test');
      const apiKey = await store.createApiKey({ accountId: account.id, name: 'cli', scopes: ['tunnels', 'reservations'] }, 'test');
      const { reservation } = await store.createReservation({ accountId: account.id, spec: { kind: 'tcp-port', port: 30000 + name.length } }, 'test');
      const tunnelKey = await store.mintTunnelKey({ accountId: account.id, reservationId: reservation.id, protocol: 'tcp', maxConnections: 1, expiresAt: clock.now() + 60_000 }, 'test');
      return { account, apiKey, reservation, tunnelKey };
    }

    it('disables an account: its API keys and tunnel keys stop authenticating and are revoked, announced, and its reservations stay held', async () => {
      const a = await tenant('a');
      const b = await tenant('bb');
      const announced: string[][] = [];
      const unwatch = await store.watchTunnelKeyRevocations((ids) => announced.push([...ids]));
      clock.advance(1000);
      const result = await store.disableAccount(a.account.id, 'apikey:root');
      await unwatch();
      expect(result).to.deep.equal({
        account: { ...a.account, disabledAt: clock.now() },
        revokedApiKeyIds: [a.apiKey.record.id],
        revokedTunnelKeyIds: [a.tunnelKey.record.id],
      });
      expect(await store.getAccount(a.account.id)).to.deep.equal(result.account);
      expect(await store.authenticateApiKey(a.apiKey.token)).to.equal(undefined);
      expect(await store.authenticateTunnelKey(a.tunnelKey.token)).to.deep.equal({ ok: false, reason: 'revoked' });
      expect(await store.listApiKeys(a.account.id)).to.deep.equal([]);
      expect(await store.listTunnelKeys(a.account.id)).to.deep.equal([]);
      expect(announced.flat()).to.deep.equal([a.tunnelKey.record.id]);
      expect((await store.findReservation('tcp-port', a.reservation.value))?.id).to.equal(a.reservation.id);
      // The other account is untouched.
      expect((await store.authenticateApiKey(b.apiKey.token))?.id).to.equal(b.apiKey.record.id);
      expect((await store.authenticateTunnelKey(b.tunnelKey.token)).ok).to.equal(true);
      const audit = await store.listAuditEvents({ accountId: a.account.id });
      expect(audit.at(-1)).to.deep.include({ action: 'account.disable', actor: 'apikey:root', targetId: a.account.id });
    });

    it('refuses new API keys, reservations and tunnel keys for a disabled account with TUNA_STORE_CONFLICT', async () => {
      const a = await tenant('a');
      await store.disableAccount(a.account.id, 'test');
      const attempts = [
        () => store.createApiKey({ accountId: a.account.id, name: 'again', scopes: ['admin'] }, 'test'),
        () => store.createReservation({ accountId: a.account.id, spec: { kind: 'tcp-port', port: 31000 } }, 'test'),
        () => store.mintTunnelKey({ accountId: a.account.id, reservationId: a.reservation.id, protocol: 'tcp', maxConnections: 1, expiresAt: clock.now() + 60_000 }, 'test'),
      ];
      for (const attempt of attempts) {
        const err = await attempt().then(() => undefined, (e: unknown) => e);
        expect(err).to.include({ code: 'TUNA_STORE_CONFLICT' });
        expect((err as Error).message).to.contain('is disabled');
      }
    });

    it('changes nothing when the account is disabled already, and answers TUNA_STORE_NOT_FOUND for an unknown one', async () => {
      const a = await tenant('a');
      const first = await store.disableAccount(a.account.id, 'test');
      clock.advance(5000);
      expect(await store.disableAccount(a.account.id, 'test')).to.deep.equal({ account: first.account, revokedApiKeyIds: [], revokedTunnelKeyIds: [] });
      expect((await store.listAuditEvents({ accountId: a.account.id })).filter((e) => e.action === 'account.disable')).to.have.length(1);
      expect(await store.disableAccount('0123456789abcdef', 'test').catch((e: unknown) => e)).to.have.property('code', 'TUNA_STORE_NOT_FOUND');
      expect((await store.listAccounts()).map((x: Account) => x.disabledAt)).to.deep.equal([first.account.disabledAt]);
    });
  });
}

/**
 * A key that escaped the revocation (minted by a transaction that raced the disable) must not
 * authenticate either: the account's state is checked at authentication too. The race is staged by
 * setting disabled_at directly through a second connection.
 */
describe('store: keys of a disabled account that were never revoked', function () {
  this.timeout(120_000);
  const stages: { name: string; open: () => Promise<{ store: Store; raw: SqlDriver; done: () => void }> }[] = [
    {
      name: 'SQLite',
      open: async () => {
        const dir = mkdtempSync(join(tmpdir(), 'tuna-disabled-'));
        const path = join(dir, 'edge.db');
        return { store: await openSqliteStore(path), raw: new SqliteDriver(path), done: () => rmSync(dir, { recursive: true, force: true }) };
      },
    },
    {
      name: 'PostgreSQL',
      open: async () => {
        const target = await freshPostgresSchema();
        return { store: await openPostgresStore(target), raw: new PostgresDriver(target), done: () => undefined };
      },
    },
  ];
  for (const stage of stages) {
    it(`refuses the API key and the tunnel key (reason account-disabled) of a disabled account (${stage.name})`, async () => {
      const { store, raw, done } = await stage.open();
      try {
        const account = await store.createAccount({ name: 'a' }, 'test');
        const apiKey = await store.createApiKey({ accountId: account.id, name: 'cli', scopes: ['tunnels'] }, 'test');
        const { reservation } = await store.createReservation({ accountId: account.id, spec: { kind: 'tcp-port', port: 30001 } }, 'test');
        const tunnelKey = await store.mintTunnelKey({ accountId: account.id, reservationId: reservation.id, protocol: 'tcp', maxConnections: 1, expiresAt: Date.now() + 60_000 }, 'test');
        expect((await store.authenticateTunnelKey(tunnelKey.token)).ok).to.equal(true);
        await raw.run('UPDATE accounts SET disabled_at = ? WHERE id = ?', [Date.now(), account.id]);
        expect(await store.authenticateApiKey(apiKey.token)).to.equal(undefined);
        expect(await store.authenticateTunnelKey(tunnelKey.token)).to.deep.equal({ ok: false, reason: 'account-disabled' });
      } finally {
        await raw.close();
        await store.close();
        done();
      }
    });
  }
});
