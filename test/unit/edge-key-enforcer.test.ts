/**
 * The key enforcer closes a tunnel once its key expires. Its sweep looks at the tracked keys only
 * once the earliest expiry it knows of has passed (at 10,000 tunnels a sweep of every key
 * four times a second was the edge's idle CPU), so these pin that an expiry is never missed: two
 * keys expiring one after the other, and a rotation that moves an expiry earlier or later.
 */
import { expect } from 'chai';
import { TunnelKeyEnforcer } from '../../src/edge/store-mode/key-enforcer.js';
import type { EnforcerStore } from '../../src/edge/store-mode/key-enforcer.js';
import type { ServedKey } from '../../src/edge/store/index.js';
import type { TunnelRegistry } from '../../src/edge/tunnels/tunnel-registry.js';

interface FakeTunnel {
  keyId: string;
  destroy(): void;
}

function setup() {
  let now = 0;
  const closed: string[] = [];
  const tunnels: FakeTunnel[] = [];
  let feed: ((keys: readonly ServedKey[]) => void) | undefined;
  const store = {
    watchTunnelKeyRevocations: () => Promise.resolve(() => Promise.resolve()),
    getTunnelKey: () => Promise.resolve(undefined),
    listApiKeys: () => Promise.resolve([]),
  } as unknown as EnforcerStore;
  const registry = { all: () => tunnels } as unknown as TunnelRegistry;
  const enforcer = new TunnelKeyEnforcer({
    store,
    registry,
    now: () => now,
    sweepMs: 1,
    recheckMs: 3_600_000,
    keyFeed: { subscribeKeys: (listener) => ((feed = listener), () => undefined) },
  });
  const open = (keyId: string, expiresAt: number): void => {
    tunnels.push({ keyId, destroy: () => closed.push(keyId) });
    enforcer.track({ ok: true, bindingId: `binding/${keyId}`, keyId, accountId: 'acct', expiresAt });
  };
  return {
    enforcer,
    closed,
    open,
    setNow: (t: number) => (now = t),
    rotate: (keyId: string, expiresAt: number) => feed?.([{ id: keyId, isLive: true, expiresAt } as unknown as ServedKey]),
  };
}

/** ticks lets the sweep run a few times (bounded). */
async function ticks(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 5));
}

describe('edge: the key enforcer closes tunnels at their keys’ expiry', () => {
  it('closes two keys one after the other, each at its own expiry', async () => {
    const t = setup();
    await t.enforcer.start();
    try {
      t.open('k1', 100);
      t.open('k2', 200);
      t.setNow(50);
      await ticks();
      expect(t.closed).to.deep.equal([]);
      t.setNow(150);
      await ticks();
      expect(t.closed).to.deep.equal(['k1']);
      t.setNow(250);
      await ticks();
      expect(t.closed).to.deep.equal(['k1', 'k2']);
    } finally {
      await t.enforcer.stop();
    }
  });

  it('follows a rotation that moves an expiry earlier, and one that moves it later', async () => {
    const t = setup();
    await t.enforcer.start();
    try {
      t.open('early', 10_000);
      t.open('late', 300);
      t.rotate('early', 120);
      t.rotate('late', 5_000);
      t.setNow(130);
      await ticks();
      expect(t.closed, 'the key rotated to expire at 120 is closed').to.deep.equal(['early']);
      t.setNow(400);
      await ticks();
      expect(t.closed, 'the key rotated to expire at 5,000 stays').to.deep.equal(['early']);
      t.setNow(5_000);
      await ticks();
      expect(t.closed).to.deep.equal(['early', 'late']);
    } finally {
      await t.enforcer.stop();
    }
  });
});
