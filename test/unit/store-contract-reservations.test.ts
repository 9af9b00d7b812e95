import { expect } from 'chai';
import type { Account, Store } from '../../src/edge/store/index.js';
import { FakeClock, STORE_BACKENDS } from '../support/postgres.js';

/** Contract: reservations — adopt, conflict, pools, labels, release — behave the same on every backend. */
for (const backend of STORE_BACKENDS) {
  describe(`store contract: reservations (${backend.name})`, function () {
    this.timeout(120_000);
    let store: Store;
    let alice: Account;
    let bob: Account;

    beforeEach(async () => {
      store = await backend.open(new FakeClock());
      alice = await store.createAccount({ name: 'alice' }, 'test');
      bob = await store.createAccount({ name: 'bob' }, 'test');
    });
    afterEach(async () => {
      await store.close();
    });

    it('reserves a subdomain as verified and adopts it when the same account asks again', async () => {
      const spec = { kind: 'domain', hostname: 'Web.Edge.Test', domainType: 'subdomain' } as const;
      const first = await store.createReservation({ accountId: alice.id, spec, labels: { cluster: 'c1' } }, 'test');
      expect(first.created).to.equal(true);
      expect(first.reservation).to.include({ kind: 'domain', value: 'web.edge.test', verified: true, verificationToken: null });
      const again = await store.createReservation({ accountId: alice.id, spec }, 'test');
      expect(again.created).to.equal(false);
      expect(again.reservation.id).to.equal(first.reservation.id);
      expect(again.reservation.labels).to.deep.equal({ cluster: 'c1' });
    });

    it('refuses a domain held by another account with TUNA_STORE_CONFLICT', async () => {
      const spec = { kind: 'domain', hostname: 'web.edge.test', domainType: 'subdomain' } as const;
      await store.createReservation({ accountId: alice.id, spec }, 'test');
      const err = await store.createReservation({ accountId: bob.id, spec }, 'test').catch((e: unknown) => e);
      expect(err).to.have.property('code', 'TUNA_STORE_CONFLICT');
      expect(await store.listReservations(bob.id)).to.deep.equal([]);
    });

    it('gives a custom domain a verification token and marks it verified on request', async () => {
      const { reservation } = await store.createReservation(
        { accountId: alice.id, spec: { kind: 'domain', hostname: 'shop.example.com', domainType: 'custom' } },
        'test',
      );
      expect(reservation.verified).to.equal(false);
      expect(reservation.verificationToken).to.match(/^[A-Za-z0-9_-]{22}$/);
      const verified = await store.markDomainVerified(alice.id, reservation.id, 'dns-check');
      expect(verified.verified).to.equal(true);
      expect((await store.getReservation(alice.id, reservation.id))?.verified).to.equal(true);
    });

    it('rejects a hostname that is not a DNS name with field spec.hostname', async () => {
      for (const hostname of ["x'; DROP TABLE reservations; --", 'single', '*.wild.test', '10.0.0.1', 'a..b']) {
        const err = await store
          .createReservation({ accountId: alice.id, spec: { kind: 'domain', hostname, domainType: 'custom' } }, 'test')
          .catch((e: unknown) => e);
        expect(err, hostname).to.include({ code: 'TUNA_STORE_INVALID', field: 'spec.hostname' });
      }
    });

    it('reserves a specific TCP port once across accounts', async () => {
      const spec = { kind: 'tcp-port', port: 20022 } as const;
      const { reservation } = await store.createReservation({ accountId: alice.id, spec }, 'test');
      expect(reservation.value).to.equal('20022');
      const err = await store.createReservation({ accountId: bob.id, spec }, 'test').catch((e: unknown) => e);
      expect(err).to.have.property('code', 'TUNA_STORE_CONFLICT');
    });

    it('allocates the lowest free port of the pool and reports TUNA_STORE_POOL_EXHAUSTED when none is left', async () => {
      const pool = { first: 30000, last: 30002 };
      await store.createReservation({ accountId: bob.id, spec: { kind: 'tcp-port', port: 30000 } }, 'test');
      const ports: string[] = [];
      for (let i = 0; i < 2; i++) {
        ports.push((await store.createReservation({ accountId: alice.id, spec: { kind: 'tcp-port', pool } }, 'test')).reservation.value);
      }
      expect(ports).to.deep.equal(['30001', '30002']);
      const err = await store.createReservation({ accountId: alice.id, spec: { kind: 'tcp-port', pool } }, 'test').catch((e: unknown) => e);
      expect(err).to.have.property('code', 'TUNA_STORE_POOL_EXHAUSTED');
    });

    it('allocates from a pool idempotently when the same name is given again', async () => {
      const input = { accountId: alice.id, name: 'default/ssh', spec: { kind: 'tcp-port', pool: { first: 30000, last: 30010 } } } as const;
      const first = await store.createReservation(input, 'test');
      const again = await store.createReservation({ ...input, labels: { 'owner-uid': 'u2' } }, 'test');
      expect(again).to.deep.include({ created: false });
      expect(again.reservation).to.include({ id: first.reservation.id, value: first.reservation.value });
      expect(again.reservation.labels).to.deep.equal({ 'owner-uid': 'u2' });
      const other = await store.createReservation({ ...input, name: 'default/other' }, 'test');
      expect(other.reservation.value).not.to.equal(first.reservation.value);
    });

    it('refuses a name that already holds a different address with TUNA_STORE_CONFLICT', async () => {
      await store.createReservation({ accountId: alice.id, name: 'n', spec: { kind: 'tcp-port', port: 20001 } }, 'test');
      const err = await store
        .createReservation({ accountId: alice.id, name: 'n', spec: { kind: 'tcp-port', port: 20002 } }, 'test')
        .catch((e: unknown) => e);
      expect(err).to.have.property('code', 'TUNA_STORE_CONFLICT');
    });

    it('allocates dedicated addresses from a CIDR pool, skipping the network address', async () => {
      const spec = { kind: 'address', pool: '127.77.0.0/30' } as const;
      const a = await store.createReservation({ accountId: alice.id, spec }, 'test');
      const b = await store.createReservation({ accountId: bob.id, spec }, 'test');
      expect([a.reservation.value, b.reservation.value]).to.deep.equal(['127.77.0.1', '127.77.0.2']);
      const err = await store.createReservation({ accountId: bob.id, spec }, 'test').catch((e: unknown) => e);
      expect(err).to.have.property('code', 'TUNA_STORE_POOL_EXHAUSTED');
      const taken = await store.createReservation({ accountId: alice.id, spec: { kind: 'address', address: '127.77.0.2' } }, 'test').catch((e: unknown) => e);
      expect(taken).to.have.property('code', 'TUNA_STORE_CONFLICT');
    });

    it('lists reservations by label selector', async () => {
      const mk = (port: number, labels: Record<string, string>) =>
        store.createReservation({ accountId: alice.id, spec: { kind: 'tcp-port', port }, labels }, 'test');
      await mk(20001, { cluster: 'c1', team: 'a' });
      await mk(20002, { cluster: 'c1', team: 'b' });
      await mk(20003, { cluster: 'c2' });
      const values = async (selector?: Record<string, string>) => (await store.listReservations(alice.id, selector)).map((r) => r.value);
      expect(await values({ cluster: 'c1' })).to.deep.equal(['20001', '20002']);
      expect(await values({ cluster: 'c1', team: 'b' })).to.deep.equal(['20002']);
      expect(await values({ missing: '' })).to.deep.equal([]);
      expect(await values()).to.have.length(3);
      expect(await store.listReservations(bob.id)).to.deep.equal([]);
    });

    it('releases a reservation, revokes its tunnel keys and frees the address for anyone', async () => {
      const { reservation } = await store.createReservation({ accountId: alice.id, spec: { kind: 'tcp-port', port: 20001 } }, 'test');
      const key = await store.mintTunnelKey(
        { accountId: alice.id, reservationId: reservation.id, protocol: 'tcp', maxConnections: 1, expiresAt: Date.UTC(2027, 0, 1) },
        'test',
      );
      const released = await store.releaseReservation(alice.id, reservation.id, 'test');
      expect(released.revokedTunnelKeyIds).to.deep.equal([key.record.id]);
      expect(await store.getReservation(alice.id, reservation.id)).to.equal(undefined);
      expect(await store.authenticateTunnelKey(key.token)).to.deep.equal({ ok: false, reason: 'revoked' });
      const reused = await store.createReservation({ accountId: bob.id, spec: { kind: 'tcp-port', port: 20001 } }, 'test');
      expect(reused.created).to.equal(true);
      expect((await store.findReservation('tcp-port', '20001'))?.accountId).to.equal(bob.id);
    });

    it('answers TUNA_STORE_NOT_FOUND when releasing another account\'s reservation', async () => {
      const { reservation } = await store.createReservation({ accountId: alice.id, spec: { kind: 'tcp-port', port: 20001 } }, 'test');
      const err = await store.releaseReservation(bob.id, reservation.id, 'test').catch((e: unknown) => e);
      expect(err).to.have.property('code', 'TUNA_STORE_NOT_FOUND');
      expect(await store.getReservation(bob.id, reservation.id)).to.equal(undefined);
      expect(await store.getReservation(alice.id, reservation.id)).to.not.equal(undefined);
    });

    it('gives concurrent pool allocations distinct ports', async () => {
      const pool = { first: 31000, last: 31049 };
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.createReservation({ accountId: i % 2 ? alice.id : bob.id, spec: { kind: 'tcp-port', pool } }, 'test'),
        ),
      );
      const ports = results.map((r) => r.reservation.value);
      expect(new Set(ports).size).to.equal(20);
    });
  });
}
