import { expect } from 'chai';
import { StoreInvalidInputError, openPostgresStore } from '../../src/edge/store/index.js';
import type { Account, Reservation, ServedChanges, Store } from '../../src/edge/store/index.js';
import { FakeClock, STORE_BACKENDS, freshPostgresSchema } from '../support/postgres.js';

const held = (c: ServedChanges) => c.reservations.filter((r) => r.isHeld).map((r) => r.reservation.value);
const released = (c: ServedChanges) => c.reservations.filter((r) => !r.isHeld).map((r) => r.reservation.value);

for (const backend of STORE_BACKENDS) {
  describe(`store contract: the change feed of reservations and tunnel keys (${backend.name})`, function () {
    this.timeout(120_000);
    let store: Store;
    let clock: FakeClock;
    let account: Account;

    const reserve = async (hostname: string): Promise<Reservation> =>
      (await store.createReservation({ accountId: account.id, spec: { kind: 'domain', hostname, domainType: 'subdomain' } }, 't')).reservation;
    const mint = (reservationId: string, ttlMs = 60_000) =>
      store.mintTunnelKey({ accountId: account.id, reservationId, protocol: 'http', maxConnections: 1, expiresAt: clock.now() + ttlMs }, 't');

    beforeEach(async () => {
      clock = new FakeClock();
      store = await backend.open(clock);
      account = await store.createAccount({ name: 'acme' }, 't');
    });
    afterEach(async () => {
      await store.close();
    });

    it('loads every held reservation and live, unexpired key without a sequence number, and nothing released or revoked', async () => {
      const a = await reserve('a.tuna.test');
      const b = await reserve('b.tuna.test');
      await mint(a.id);
      const revoked = await mint(a.id);
      await store.revokeTunnelKey(account.id, revoked.record.id, 't');
      await mint(a.id, 1_000);
      await store.releaseReservation(account.id, b.id, 't');
      clock.advance(2_000);
      const full = await store.listServedChanges();
      expect(full.isFull).to.equal(true);
      expect(held(full)).to.deep.equal(['a.tuna.test']);
      expect(released(full)).to.deep.equal([]);
      expect(full.tunnelKeys.map((k) => [k.reservationId, k.protocol, k.isLive])).to.deep.equal([[a.id, 'http', true]]);
      expect(full.now).to.equal(clock.now());
    });

    it('brings only the rows written after a sequence number, in their current state', async () => {
      const a = await reserve('a.tuna.test');
      const start = await store.listServedChanges();
      expect(await store.listServedChanges(start.seq)).to.deep.include({ seq: start.seq, isFull: false, reservations: [], tunnelKeys: [] });

      const b = await reserve('b.tuna.test');
      const afterCreate = await store.listServedChanges(start.seq);
      expect(afterCreate.seq).to.be.greaterThan(start.seq);
      expect(held(afterCreate)).to.deep.equal(['b.tuna.test']);
      expect(afterCreate.tunnelKeys).to.deep.equal([]);

      const key = await mint(b.id);
      const afterMint = await store.listServedChanges(afterCreate.seq);
      expect(afterMint.reservations).to.deep.equal([]);
      expect(afterMint.tunnelKeys.map((k) => [k.id, k.isLive])).to.deep.equal([[key.record.id, true]]);

      await store.revokeTunnelKey(account.id, key.record.id, 't');
      const afterRevoke = await store.listServedChanges(afterMint.seq);
      expect(afterRevoke.tunnelKeys.map((k) => [k.id, k.isLive])).to.deep.equal([[key.record.id, false]]);

      const other = await mint(a.id);
      const mid = await store.listServedChanges(afterRevoke.seq);
      await store.releaseReservation(account.id, a.id, 't');
      const afterRelease = await store.listServedChanges(mid.seq);
      expect(released(afterRelease)).to.deep.equal(['a.tuna.test']);
      expect(afterRelease.tunnelKeys.map((k) => [k.id, k.isLive]), 'the release revokes its keys in the same feed').to.deep.equal([[other.record.id, false]]);
    });

    it('feeds a verified custom domain, a rotated key and the keys of a disabled account', async () => {
      const custom = (await store.createReservation({ accountId: account.id, spec: { kind: 'domain', hostname: 'www.example.org', domainType: 'custom' } }, 't')).reservation;
      const key = await mint(custom.id);
      const before = await store.listServedChanges();
      await store.markDomainVerified(account.id, custom.id, 't');
      const verified = await store.listServedChanges(before.seq);
      expect(verified.reservations.map((r) => [r.reservation.value, r.reservation.verified])).to.deep.equal([['www.example.org', true]]);
      await store.rotateTunnelKey(account.id, key.record.id, { expiresAt: clock.now() + 120_000 }, 't');
      const rotated = await store.listServedChanges(verified.seq);
      expect(rotated.tunnelKeys.map((k) => k.expiresAt)).to.deep.equal([clock.now() + 120_000]);
      await store.disableAccount(account.id, 't');
      const disabled = await store.listServedChanges(rotated.seq);
      expect(disabled.tunnelKeys.map((k) => [k.id, k.isLive])).to.deep.equal([[key.record.id, false]]);
    });

    it('starts again with a whole snapshot when the reader is ahead of the feed (a restored database)', async () => {
      await reserve('a.tuna.test');
      const now = await store.listServedChanges();
      const ahead = await store.listServedChanges(now.seq + 100);
      expect(ahead.isFull).to.equal(true);
      expect(held(ahead)).to.deep.equal(['a.tuna.test']);
    });

    for (const bad of [-1, 1.5, Number.NaN]) {
      it(`refuses afterSeq ${bad} naming the field`, async () => {
        const err = await store.listServedChanges(bad).catch((e: unknown) => e);
        expect(err).to.be.instanceOf(StoreInvalidInputError);
        expect((err as StoreInvalidInputError).field).to.equal('afterSeq');
      });
    }
  });
}

describe('store contract: the change feed misses nothing while two PostgreSQL nodes write at once', function () {
  this.timeout(120_000);

  it('a reader following the feed during 40 concurrent reservations from two nodes ends with all 40', async () => {
    const target = await freshPostgresSchema();
    const [nodeA, nodeB, reader] = await Promise.all([openPostgresStore(target), openPostgresStore(target), openPostgresStore(target)]);
    try {
      const account = await nodeA.createAccount({ name: 'acme' }, 't');
      const first = await reader.listServedChanges();
      const seen = new Set<string>(first.reservations.map((r) => r.reservation.value));
      let seq = first.seq;
      let writing = true;
      const writes = Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? nodeA : nodeB).createReservation({ accountId: account.id, spec: { kind: 'domain', hostname: `h${i}.tuna.test`, domainType: 'subdomain' } }, 't'),
        ),
      ).finally(() => (writing = false));
      // Bounded: the reader follows at most 400 reads while the writes run, then once more after.
      for (let reads = 0; writing && reads < 400; reads++) {
        const changes = await reader.listServedChanges(seq);
        for (const r of changes.reservations) seen.add(r.reservation.value);
        seq = changes.seq;
      }
      await writes;
      const last = await reader.listServedChanges(seq);
      for (const r of last.reservations) seen.add(r.reservation.value);
      expect(seen.size).to.equal(40);
    } finally {
      await Promise.all([nodeA.close(), nodeB.close(), reader.close()]);
    }
  });
});
