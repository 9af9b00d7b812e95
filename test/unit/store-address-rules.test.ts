import { expect } from 'chai';
import { StoreInvalidInputError, openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';

/** The store's own line under the reservation pools: addresses no dedicated listener may ever take. */
describe('store: dedicated addresses a reservation can never hold', () => {
  let store: Store;
  let accountId: string;
  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    accountId = (await store.createAccount({ name: 'acme' }, 'test')).id;
  });
  afterEach(() => store.close());

  for (const address of ['0.0.0.0', '::', '0:0::0', '255.255.255.255', '224.0.0.1', 'ff02::1']) {
    it(`refuses ${address} with field spec.address`, async () => {
      const err = await store.createReservation({ accountId, spec: { kind: 'address', address } }, 'test').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(StoreInvalidInputError);
      expect((err as StoreInvalidInputError).field).to.equal('spec.address');
    });
  }

  it('still holds a unicast address such as 127.77.0.9 or fd00::9', async () => {
    for (const address of ['127.77.0.9', 'fd00::9']) {
      expect((await store.createReservation({ accountId, spec: { kind: 'address', address } }, 'test')).created).to.equal(true);
    }
  });
});
