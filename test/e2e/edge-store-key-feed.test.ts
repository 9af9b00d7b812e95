import { expect } from 'chai';
import { StoreBindingDirectory } from '../../src/edge/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { BASE_DOMAIN, connectAgent, reserveAndMint, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { STORE_BACKENDS } from '../support/postgres.js';

/**
 * deaf is the store with its revocation announcements cut off, as on a node whose LISTEN
 * connection was down when the key was revoked: only the change feed can tell the edge.
 */
function deaf(store: Store): Store {
  return Object.assign(Object.create(store) as Store, { watchTunnelKeyRevocations: async () => async () => undefined });
}

/** settle waits (bounded: 1 s) for the edge to count `n` usable connections of a key: a connection becomes usable, and is forgotten, a moment after the handshake or destroy(). */
async function settle(running: StoreEdge, keyId: string, n: number): Promise<void> {
  for (let i = 0; i < 40 && running.edge.registry.countForKey(keyId) !== n; i++) await new Promise((resolve) => setTimeout(resolve, 25));
}

for (const backend of STORE_BACKENDS) {
  describe(`edge store mode: a revocation the edge did not hear announced closes the tunnel from the change feed (${backend.name})`, function () {
    this.timeout(60_000);
    let store: Store;
    let running: StoreEdge;
    const sessions: TunnelSession[] = [];

    beforeEach(async () => {
      store = await backend.open({ now: () => Date.now() });
      // a long poll: the test reads the feed itself, so nothing but that read can close the tunnel
      running = await startStoreEdge(deaf(store), storeEdgeConfig('unused', { pollMs: 600_000 }));
    });
    afterEach(async () => {
      await Promise.all(sessions.splice(0).map((s) => s.close().catch(() => undefined)));
      await running.edge.close();
      await store.close();
    });

    it('drops the connection of a key revoked in the store at the next read of the feed, before any 10 s re-check', async () => {
      const seeded = await seedAccount(store);
      const t = await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: `feed.${BASE_DOMAIN}` }, { protocol: 'http' });
      sessions.push(await connectAgent(running.endpoint, t.bindingId, t.token));
      await settle(running, t.keyId, 1);
      expect(running.edge.registry.countForKey(t.keyId)).to.equal(1);
      await store.revokeTunnelKey(seeded.accountId, t.keyId, 'test');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(running.edge.registry.countForKey(t.keyId), 'no announcement reached the edge').to.equal(1);
      const directory = running.edge.directory;
      if (!(directory instanceof StoreBindingDirectory)) throw new Error('a store-mode edge has a StoreBindingDirectory');
      await directory.refresh();
      await settle(running, t.keyId, 0);
      expect(running.edge.registry.countForKey(t.keyId)).to.equal(0);
    });
  });
}
