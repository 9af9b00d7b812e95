import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { Store } from '../../src/edge/store/index.js';
import { FakeClock, STORE_BACKENDS } from '../support/postgres.js';

/** Contract: accounts, API keys, certificates and the audit log behave the same on every backend. */
for (const backend of STORE_BACKENDS) {
  describe(`store contract: accounts, API keys, certificates, audit (${backend.name})`, function () {
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

    it('creates an account and refuses a second one with the same name with TUNA_STORE_CONFLICT', async () => {
      const account = await store.createAccount({ name: 'acme' }, 'test');
      expect(await store.getAccount(account.id)).to.deep.equal(account);
      const err = await store.createAccount({ name: 'acme' }, 'test').catch((e: unknown) => e);
      expect(err).to.have.property('code', 'TUNA_STORE_CONFLICT');
      expect((await store.listAccounts()).map((a) => a.name)).to.deep.equal(['acme']);
    });

    it('authenticates an API key by its token and returns its scopes', async () => {
      const account = await store.createAccount({ name: 'acme' }, 'test');
      const { record, token } = await store.createApiKey({ accountId: account.id, name: 'operator', scopes: ['reservations'] }, 'test');
      expect(token).to.match(/^tuna_ak_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
      expect(await store.authenticateApiKey(token)).to.deep.equal(record);
      expect(record.scopes).to.deep.equal(['reservations']);
    });

    it('refuses an API key with a wrong secret, a malformed token or after revocation', async () => {
      const account = await store.createAccount({ name: 'acme' }, 'test');
      const { record, token } = await store.createApiKey({ accountId: account.id, name: 'cli', scopes: ['tunnels'] }, 'test');
      const wrong = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
      expect(await store.authenticateApiKey(wrong)).to.equal(undefined);
      expect(await store.authenticateApiKey('tuna_ak_nonsense')).to.equal(undefined);
      expect(await store.authenticateApiKey(token.replace('tuna_ak_', 'tuna_tk_'))).to.equal(undefined);
      await store.revokeApiKey(account.id, record.id, 'test');
      expect(await store.authenticateApiKey(token)).to.equal(undefined);
      expect(await store.listApiKeys(account.id)).to.deep.equal([]);
    });

    it('rejects an API key with an unknown or empty scope list with field scopes', async () => {
      const account = await store.createAccount({ name: 'acme' }, 'test');
      for (const scopes of [[], ['root']] as never[][]) {
        const err = await store.createApiKey({ accountId: account.id, name: 'k', scopes }, 'test').catch((e: unknown) => e);
        expect(err).to.include({ code: 'TUNA_STORE_INVALID', field: 'scopes' });
      }
    });

    it('refuses to revoke an API key of another account with TUNA_STORE_NOT_FOUND', async () => {
      const a = await store.createAccount({ name: 'a' }, 'test');
      const b = await store.createAccount({ name: 'b' }, 'test');
      const { record } = await store.createApiKey({ accountId: a.id, name: 'k', scopes: ['admin'] }, 'test');
      const err = await store.revokeApiKey(b.id, record.id, 'test').catch((e: unknown) => e);
      expect(err).to.have.property('code', 'TUNA_STORE_NOT_FOUND');
      expect(await store.listApiKeys(a.id)).to.have.length(1);
    });

    it('stores, replaces, lists by expiry and deletes certificates', async () => {
      await store.putCertificate({ hostname: 'App.Example.com', chainPem: 'chain-1', keyPem: 'key-1', notAfter: 1000 }, 'acme');
      await store.putCertificate({ hostname: '*.edge.test', chainPem: 'wild', keyPem: 'wild-key', notAfter: 5000 }, 'acme');
      await store.putCertificate({ hostname: 'app.example.com', chainPem: 'chain-2', keyPem: 'key-2', notAfter: 3000 }, 'acme');
      expect(await store.getCertificate('app.example.com')).to.include({ chainPem: 'chain-2', keyPem: 'key-2', notAfter: 3000 });
      expect((await store.listCertificates({ notAfterBefore: 4000 })).map((c) => c.hostname)).to.deep.equal(['app.example.com']);
      expect((await store.listCertificates()).map((c) => c.hostname)).to.deep.equal(['*.edge.test', 'app.example.com']);
      await store.deleteCertificate('app.example.com', 'acme');
      expect(await store.getCertificate('app.example.com')).to.equal(undefined);
      const err = await store.deleteCertificate('app.example.com', 'acme').catch((e: unknown) => e);
      expect(err).to.have.property('code', 'TUNA_STORE_NOT_FOUND');
    });

    it('appends an audit event for every change, in order, with actor and time', async () => {
      const account = await store.createAccount({ name: 'acme' }, 'admin:1');
      clock.advance(10);
      const key = await store.createApiKey({ accountId: account.id, name: 'k', scopes: ['admin'] }, 'admin:1');
      clock.advance(10);
      await store.revokeApiKey(account.id, key.record.id, 'apikey:x');
      await store.putCertificate({ hostname: 'a.example.com', chainPem: 'c', keyPem: 'k', notAfter: 1 }, 'acme');
      const events = await store.listAuditEvents();
      expect(events.map((e) => [e.action, e.actor, e.at - events[0]!.at])).to.deep.equal([
        ['account.create', 'admin:1', 0],
        ['api-key.create', 'admin:1', 10],
        ['api-key.revoke', 'apikey:x', 20],
        ['certificate.put', 'acme', 20],
      ]);
      expect(events.map((e) => e.seq)).to.deep.equal([...events.map((e) => e.seq)].sort((x, y) => x - y));
      expect(await store.listAuditEvents({ accountId: account.id, afterSeq: events[0]!.seq })).to.have.length(2);
    });

    it('never writes a token, a secret hash or a private key into the audit log', async () => {
      const account = await store.createAccount({ name: 'acme' }, 'test');
      const api = await store.createApiKey({ accountId: account.id, name: 'k', scopes: ['reservations'] }, 'test');
      const { reservation } = await store.createReservation({ accountId: account.id, spec: { kind: 'tcp-port', port: 20000 } }, 'test');
      const tunnel = await store.mintTunnelKey({ accountId: account.id, reservationId: reservation.id, protocol: 'tcp', maxConnections: 2, expiresAt: clock.now() + 60_000 }, 'test');
      const rotated = await store.rotateTunnelKey(account.id, tunnel.record.id, { expiresAt: clock.now() + 120_000, graceMs: 1000 }, 'test');
      await store.putCertificate({ hostname: 'a.example.com', chainPem: 'CHAIN', keyPem: 'PRIVATE-KEY-MATERIAL', notAfter: 1 }, 'test');
      const text = JSON.stringify(await store.listAuditEvents());
      for (const token of [api.token, tunnel.token, rotated.token]) {
        const secret = token.slice('tuna_ak_'.length + 16 + 1);
        expect(secret).to.have.length(43);
        expect(text).not.to.include(secret);
        expect(text).not.to.include(createHash('sha256').update(secret).digest('hex'));
      }
      expect(text).not.to.include('PRIVATE-KEY-MATERIAL');
    });
  });
}
