import { expect } from 'chai';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelManager } from '../../src/tunnel/manager.js';
import type { TunnelError } from '../../src/tunnel/errors.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { http1, waitUntil } from '../support/tunnel-harness.js';
import { newTestManager } from '../support/tunnel-manager-fixture.js';
import { BASE_DOMAIN, api, reserveAndMint, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { MintedTunnel, Seeded, StoreEdge } from '../support/edge-store-harness.js';

const N = 100;

/** statusOf asks the edge for a host: 200 with the binding the agent saw, else the status. */
async function answerOf(port: number, host: string): Promise<string | number> {
  const answer = await http1(port, host, '/');
  if (answer.status !== 200) return answer.status;
  return (JSON.parse(answer.body.toString('utf8')) as { context: { bindingId: string } }).context.bindingId;
}

describe('many bindings on one connection against a store-mode edge: per-binding keys and revocation', function () {
  this.timeout(90_000);
  let store: Store;
  let running: StoreEdge;
  let seeded: Seeded;
  let manager: TunnelManager;
  let minted: MintedTunnel[];
  let keys: Map<string, string>;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store);
    seeded = await seedAccount(store);
    minted = [];
    for (let i = 0; i < N; i++) {
      minted.push(await reserveAndMint(running.controlPort, seeded.reservationsToken, { kind: 'domain', hostname: `s${i}.${BASE_DOMAIN}` }, { protocol: 'http', maxConnections: 1 }));
    }
    keys = new Map(minted.map((m) => [m.keyId, m.token]));
    manager = newTestManager(new TestStreamHandler(), keys, { sharedConnections: true, backoff: { baseMs: 200, maxMs: 1000 } });
    manager.apply(minted.map((m) => ({ bindingId: m.bindingId, edges: [running.endpoint], keyRef: m.keyId })));
    await waitUntil(() => running.edge.registry.all().length === N, 30_000);
  });

  afterEach(async () => {
    manager.destroy();
    await running.edge.close();
    await store.close();
  });

  it('serves 100 bindings on one connection, each proved with its own tunnel key', async () => {
    expect(new Set(running.edge.registry.all().map((t) => t.socket)).size).to.equal(1);
    expect(new Set(running.edge.registry.all().map((t) => t.keyId))).to.deep.equal(new Set(minted.map((m) => m.keyId)));
    for (const m of minted) expect(await answerOf(running.httpPort, m.value)).to.equal(m.bindingId);
  });

  it('cuts only the binding whose key is revoked; the other 99 carry on over the same connection', async () => {
    const [socket] = new Set(running.edge.registry.all().map((t) => t.socket));
    const victim = minted[42]!;
    const refusals: TunnelError[] = [];
    manager.on('tunnel-error', (id: string, err: Error) => {
      if (id === victim.bindingId) refusals.push(err as TunnelError);
    });
    const revoked = await api(running.controlPort, 'DELETE', `/v1/tunnel-keys/${victim.keyId}`, seeded.reservationsToken);
    expect(revoked.status).to.equal(200);
    await waitUntil(() => !running.edge.registry.all().some((t) => t.bindingId === victim.bindingId));
    expect(running.edge.registry.all()).to.have.length(N - 1);
    expect(await answerOf(running.httpPort, victim.value)).to.equal(503);
    for (const m of minted.filter((x) => x !== victim)) expect(await answerOf(running.httpPort, m.value)).to.equal(m.bindingId);
    expect([...new Set(running.edge.registry.all().map((t) => t.socket))]).to.deep.equal([socket]);
    // the agent tries the binding again and is refused, naming it; the connection stays
    await waitUntil(() => refusals.some((e) => e.code === 'TUNA_TUNNEL_REFUSED'), 10_000);
    expect(refusals.find((e) => e.code === 'TUNA_TUNNEL_REFUSED')!.message).to.include(victim.bindingId);
    expect(manager.sharedConnectionCount).to.equal(1);
  });

  it('rotates one binding to a newly minted key on the same connection and cuts nothing when the old key is revoked', async () => {
    const target = minted[7]!;
    const [socket] = new Set(running.edge.registry.all().map((t) => t.socket));
    const next = await api(running.controlPort, 'POST', '/v1/tunnel-keys', seeded.reservationsToken, { reservationId: target.reservationId, protocol: 'http' });
    expect(next.status).to.equal(201);
    const nextId = (next.body['tunnelKey'] as { id: string }).id;
    keys.set(nextId, next.body['token'] as string);
    manager.apply(minted.map((m) => ({ bindingId: m.bindingId, edges: [running.endpoint], keyRef: m === target ? nextId : m.keyId })));
    await waitUntil(() => running.edge.registry.all().some((t) => t.bindingId === target.bindingId && t.keyId === nextId));
    await waitUntil(() => running.edge.registry.all().filter((t) => t.bindingId === target.bindingId).length === 1);
    const revoked = await api(running.controlPort, 'DELETE', `/v1/tunnel-keys/${target.keyId}`, seeded.reservationsToken);
    expect(revoked.status).to.equal(200);
    expect(await answerOf(running.httpPort, target.value)).to.equal(target.bindingId);
    expect(running.edge.registry.all()).to.have.length(N);
    expect([...new Set(running.edge.registry.all().map((t) => t.socket))]).to.deep.equal([socket]);
  });
});
