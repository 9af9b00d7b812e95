import { expect } from 'chai';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import type { TunnelManager } from '../../src/tunnel/manager.js';
import type { TunnelRefusedError } from '../../src/tunnel/errors.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { waitUntil } from '../support/tunnel-harness.js';
import { newTestManager } from '../support/tunnel-manager-fixture.js';
import { BASE_DOMAIN, api, connectAgent, refusalStatus, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { Seeded, StoreEdge } from '../support/edge-store-harness.js';

/**
 * `tunnels`-scoped account API keys had no connection cap. All such keys of
 * an account now share one cap of live tunnels per edge node (`store.quotas.concurrentTunnels`,
 * an admin's per-account override wins); past it the handshake is refused with 429.
 */
describe('edge: concurrent tunnel cap of an account\'s tunnels-scoped API keys', function () {
  this.timeout(60_000);
  let store: Store;
  let running: StoreEdge;
  let acme: Seeded;
  const sessions: TunnelSession[] = [];
  let manager: TunnelManager | undefined;

  const host = (name: string): string => `binding/host/${name}.${BASE_DOMAIN}`;

  async function tunnelsKey(accountId: string, name: string): Promise<string> {
    return (await store.createApiKey({ accountId, name, scopes: ['tunnels'] }, 'test')).token;
  }

  async function reserve(accountId: string, name: string): Promise<void> {
    await store.createReservation({ accountId, spec: { kind: 'domain', hostname: `${name}.${BASE_DOMAIN}`, domainType: 'subdomain' } }, 'test');
  }

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    acme = await seedAccount(store, 'acme');
    await reserve(acme.accountId, 'a');
    await reserve(acme.accountId, 'b');
    running = await startStoreEdge(store, storeEdgeConfig('unused', { quotas: { concurrentTunnels: 2 } }));
  });

  afterEach(async () => {
    manager?.destroy();
    manager = undefined;
    for (const s of sessions.splice(0)) s.destroy();
    await running.edge.close();
    await store.close();
  });

  it('refuses the tunnel past the account\'s cap with 429, across its bindings and its keys, while another account connects', async () => {
    const laptop = await tunnelsKey(acme.accountId, 'laptop');
    const ci = await tunnelsKey(acme.accountId, 'ci');
    sessions.push(await connectAgent(running.endpoint, host('a'), laptop), await connectAgent(running.endpoint, host('b'), laptop));
    expect(await refusalStatus(running.endpoint, host('a'), laptop)).to.equal(429);
    expect(await refusalStatus(running.endpoint, host('b'), ci), 'another key of the same account').to.equal(429);
    const other = await seedAccount(store, 'other');
    await reserve(other.accountId, 'c');
    sessions.push(await connectAgent(running.endpoint, host('c'), await tunnelsKey(other.accountId, 'theirs')));
    await waitUntil(() => running.edge.registry.count().get(host('c')) === 1);
    expect(await running.edge.metrics.render(running.edge.registry)).to.include('tuna_edge_tunnel_handshakes_total{result="connection-limit"} 2');
  });

  it('gives the slot back when a tunnel closes', async () => {
    const laptop = await tunnelsKey(acme.accountId, 'laptop');
    sessions.push(await connectAgent(running.endpoint, host('a'), laptop), await connectAgent(running.endpoint, host('a'), laptop));
    expect(await refusalStatus(running.endpoint, host('b'), laptop)).to.equal(429);
    sessions.shift()!.destroy();
    await waitUntil(() => running.edge.registry.count().get(host('a')) === 1);
    sessions.push(await connectAgent(running.endpoint, host('b'), laptop));
    expect(await refusalStatus(running.endpoint, host('b'), laptop)).to.equal(429);
  });

  it('takes an admin\'s per-account override of concurrentTunnels, and reports it in the account\'s quotas', async () => {
    const path = `/v1/accounts/${acme.accountId}/quotas`;
    expect((await api(running.controlPort, 'GET', path, acme.adminToken)).body['quotas']).to.deep.include({
      overrides: { reservations: null, tunnelKeys: null, concurrentTunnels: null },
      limits: { reservations: 100, tunnelKeys: 500, concurrentTunnels: 2 },
    });
    const set = await api(running.controlPort, 'POST', path, acme.adminToken, { concurrentTunnels: 3 });
    expect(set.status).to.equal(200);
    expect(set.body['quotas']).to.deep.include({ limits: { reservations: 100, tunnelKeys: 500, concurrentTunnels: 3 } });
    const laptop = await tunnelsKey(acme.accountId, 'laptop');
    for (let i = 0; i < 3; i++) sessions.push(await connectAgent(running.endpoint, host(i === 0 ? 'a' : 'b'), laptop));
    expect(await refusalStatus(running.endpoint, host('a'), laptop)).to.equal(429);
    // an override of 0 lets none in; tunnel keys (their own caps) are not counted against it
    await api(running.controlPort, 'POST', path, acme.adminToken, { concurrentTunnels: 0 });
    for (const s of sessions.splice(0)) s.destroy();
    await waitUntil(() => running.edge.registry.all().length === 0);
    expect(await refusalStatus(running.endpoint, host('a'), laptop)).to.equal(429);
  });

  it('counts bindings attached on one shared connection (protocol version 2) against the same cap', async () => {
    await reserve(acme.accountId, 'c');
    const laptop = await tunnelsKey(acme.accountId, 'laptop');
    manager = newTestManager(new TestStreamHandler(), new Map([['laptop', laptop]]), { sharedConnections: true, backoff: { baseMs: 60_000, maxMs: 60_000 } });
    const errors = new Map<string, TunnelRefusedError>();
    manager.on('tunnel-error', (id: string, err: Error) => errors.set(id, err as TunnelRefusedError));
    manager.apply(['a', 'b', 'c'].map((name) => ({ bindingId: host(name), edges: [running.endpoint], keyRef: 'laptop' })));
    await waitUntil(() => errors.size === 1 && running.edge.registry.all().length === 2);
    expect([...errors.values()][0]!.statusCode).to.equal(429);
    expect(running.edge.registry.all().length).to.equal(2);
  });
});
