import { expect } from 'chai';
import { ControlClient } from '../../src/control-api/index.js';
import { challengeName } from '../../src/edge/control/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { Binding, RouteGraph } from '../../src/model/index.js';
import { emptyGraph } from '../../src/model/index.js';
import { EdgeReconciler, TunnelKeys } from '../../src/operator/edge-reconciler.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { Seeded, StoreEdge } from '../support/edge-store-harness.js';
import { hostBinding } from '../support/graph-builders.js';

const cluster = { 'tuna.dev/cluster': 'east' };

/** addressBinding is a Gateway's dedicated-address binding as the translator makes it. */
function addressBinding(name: string): Binding {
  return { id: `binding/address/default/${name}`, kind: 'address', hostnames: [], source: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name } };
}

function graphOf(...bindings: Binding[]): RouteGraph {
  return { ...emptyGraph(), bindings };
}

describe('operator: edge reconciler against a store-mode edge', () => {
  let store: Store;
  let running: StoreEdge;
  let seeded: Seeded;
  let client: ControlClient;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store);
    seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
  });

  afterEach(async () => {
    await running.edge.close();
    await store.close();
  });

  const liveKeys = async () => (await client.listTunnelKeys(cluster)).tunnelKeys.filter((k) => k.revokedAt === null);

  it('reserves each host once, mints one key per binding, and does nothing more when nothing changed', async () => {
    const keys = new TunnelKeys();
    const reconciler = new EdgeReconciler(client, keys, { clusterId: 'east' });
    const a = hostBinding(`a.${BASE_DOMAIN}`).binding;
    const b = hostBinding(`b.${BASE_DOMAIN}`).binding;
    const first = await reconciler.reconcile(graphOf(a, b));
    expect(first).to.include({ reserved: 2, minted: 2, released: 0, revoked: 0 });
    expect([...first.ready].sort()).to.deep.equal([a.id, b.id]);
    expect((await liveKeys()).map((k) => k.id).sort()).to.deep.equal([keys.get(a.id)?.keyId, keys.get(b.id)?.keyId].sort());
    expect(await keys.resolveKey(a.id, keys.get(a.id)!.keyId)).to.match(/^tuna_tk_/);
    const second = await reconciler.reconcile(graphOf(a, b));
    expect(second).to.include({ reserved: 0, minted: 0, released: 0, revoked: 0 });
  });

  it('releases and revokes what a binding that left the graph held, and nothing of another cluster', async () => {
    const other = new EdgeReconciler(client, new TunnelKeys(), { clusterId: 'west' });
    await other.reconcile(graphOf(hostBinding(`w.${BASE_DOMAIN}`).binding));
    const keys = new TunnelKeys();
    const reconciler = new EdgeReconciler(client, keys, { clusterId: 'east' });
    const a = hostBinding(`a.${BASE_DOMAIN}`).binding;
    await reconciler.reconcile(graphOf(a));
    const after = await reconciler.reconcile(graphOf());
    expect(after).to.include({ released: 1, revoked: 1 });
    expect(keys.get(a.id)).to.equal(undefined);
    expect((await client.listReservations(cluster)).reservations).to.deep.equal([]);
    expect((await client.listReservations({ 'tuna.dev/cluster': 'west' })).reservations.map((r) => r.value)).to.deep.equal([`w.${BASE_DOMAIN}`]);
  });

  it('after a restart, mints a new key and revokes the one it no longer holds', async () => {
    const a = hostBinding(`a.${BASE_DOMAIN}`).binding;
    await new EdgeReconciler(client, new TunnelKeys(), { clusterId: 'east' }).reconcile(graphOf(a));
    const before = (await liveKeys()).map((k) => k.id);
    const keys = new TunnelKeys();
    const report = await new EdgeReconciler(client, keys, { clusterId: 'east' }).reconcile(graphOf(a));
    expect(report).to.include({ reserved: 0, minted: 1, revoked: 1 });
    expect((await liveKeys()).map((k) => k.id)).to.deep.equal([keys.get(a.id)?.keyId]);
    expect(before).to.not.include(keys.get(a.id)?.keyId);
  });

  it('holds back a custom domain until it is verified, and bindings it cannot reserve yet', async () => {
    const keys = new TunnelKeys();
    const reconciler = new EdgeReconciler(client, keys, { clusterId: 'east' });
    const custom = hostBinding('shop.customer.example').binding;
    const wildcard = hostBinding(`*.${BASE_DOMAIN}`).binding;
    const report = await reconciler.reconcile(graphOf(custom, wildcard));
    expect(report.ready.size).to.equal(0);
    expect(new Map(report.pending.map((p) => [p.bindingId, p.reason]))).to.deep.equal(
      new Map([
        [custom.id, 'DomainNotVerified'],
        [wildcard.id, 'UnsupportedBinding'],
      ]),
    );
    const [reservation] = (await client.listReservations(cluster)).reservations.filter((r) => r.value === 'shop.customer.example');
    const token = reservation?.verificationToken ?? '';
    expect(token).to.not.equal('');
    const held = report.pending.find((p) => p.bindingId === custom.id);
    expect(held?.txtRecord).to.deep.equal({ name: challengeName('shop.customer.example'), value: token });
    expect(held?.message).to.include(`Create the DNS TXT record _tuna-challenge.shop.customer.example with the value ${token}`);
    expect(await liveKeys()).to.deep.equal([]);
  });
  it('labels what it reserves and mints with the owner kind, keeps what an unlisted kind owned, and lets it go once that kind is listed', async () => {
    const keys = new TunnelKeys();
    const reconciler = new EdgeReconciler(client, keys, { clusterId: 'east' });
    const fromTunnel: Binding = { ...hostBinding(`t.${BASE_DOMAIN}`).binding, source: { group: 'tuna.dev', kind: 'Tunnel', namespace: 'default', name: 't' } };
    await reconciler.reconcile(graphOf(fromTunnel));
    const [reservation] = (await client.listReservations(cluster)).reservations;
    expect(reservation?.labels).to.deep.equal({ ...cluster, 'tuna.dev/owner-kind': 'Tunnel.tuna.dev' });
    expect((await liveKeys()).map((k) => k.labels)).to.deep.equal([{ ...cluster, 'tuna.dev/owner-kind': 'Tunnel.tuna.dev' }]);

    // The Tunnel kind is not listed (its CRD is absent, say): a graph without its binding proves nothing.
    const unlisted = await reconciler.reconcile(graphOf(), (owner) => owner?.kind !== 'Tunnel');
    expect(unlisted).to.include({ released: 0, revoked: 0, kept: 1 });
    expect((await client.listReservations(cluster)).reservations.map((r) => r.id)).to.deep.equal([reservation?.id]);
    expect(keys.get(fromTunnel.id), 'the key is still held').to.not.equal(undefined);
    expect(await liveKeys()).to.have.length(1);

    const listed = await reconciler.reconcile(graphOf(), () => true);
    expect(listed).to.include({ released: 1, revoked: 1, kept: 0 });
    expect(await liveKeys()).to.deep.equal([]);
  });

  it('releases a reservation without an owner label only when every kind is listed', async () => {
    await client.reserve({ kind: 'domain', hostname: `old.${BASE_DOMAIN}`, labels: cluster });
    const reconciler = new EdgeReconciler(client, new TunnelKeys(), { clusterId: 'east' });
    expect(await reconciler.reconcile(graphOf(), (owner) => owner !== undefined)).to.include({ released: 0, kept: 1 });
    expect(await reconciler.reconcile(graphOf(), () => true)).to.include({ released: 1, kept: 0 });
  });

  it('reserves an address per Gateway with a key recording the edge’s binding id, finds it again after a restart, and releases it when the Gateway goes', async () => {
    const keys = new TunnelKeys();
    const gw = addressBinding('gw');
    const first = await new EdgeReconciler(client, keys, { clusterId: 'east' }).reconcile(graphOf(gw));
    expect(first).to.include({ reserved: 1, minted: 1 });
    const address = first.addresses.get(gw.id);
    expect(address).to.match(/^127\.77\./);
    const [reservation] = (await client.listReservations(cluster)).reservations;
    expect(reservation).to.deep.include({ kind: 'address', value: address });
    expect(reservation?.labels).to.deep.equal({ ...cluster, 'tuna.dev/owner-kind': 'Gateway.gateway.networking.k8s.io', 'tuna.dev/binding': gw.id });
    expect(keys.get(gw.id)?.edgeBindingId).to.equal(`binding/address/${address}`);
    // the tunnel names the edge's id; the key source answers for it
    expect(keys.forTunnel(`binding/address/${address}`)?.keyId).to.equal(keys.get(gw.id)?.keyId);
    expect(await keys.resolveKey(`binding/address/${address}`, keys.get(gw.id)!.keyId)).to.match(/^tuna_tk_/);

    const restartedKeys = new TunnelKeys();
    const restarted = await new EdgeReconciler(client, restartedKeys, { clusterId: 'east' }).reconcile(graphOf(gw));
    expect(restarted).to.include({ reserved: 0, minted: 1, revoked: 1 });
    expect(restarted.addresses.get(gw.id), 'the same address').to.equal(address);
    expect(restartedKeys.edgeIdOf(gw.id)).to.equal(`binding/address/${address}`);

    const gone = await new EdgeReconciler(client, restartedKeys, { clusterId: 'east' }).reconcile(graphOf());
    expect(gone).to.include({ released: 1, revoked: 1 });
    expect((await client.listReservations(cluster)).reservations).to.deep.equal([]);
    expect(await liveKeys()).to.deep.equal([]);
  });

  it('holds a Gateway back as AddressNotAssigned when the pool is exhausted, and when the edge has none', async () => {
    await running.edge.close();
    running = await startStoreEdge(store, storeEdgeConfig('unused', { addressPool: '127.77.0.9-127.77.0.9' }));
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    const [a, b] = [addressBinding('a'), addressBinding('b')];
    const report = await new EdgeReconciler(client, new TunnelKeys(), { clusterId: 'east' }).reconcile(graphOf(a, b));
    expect([...report.ready]).to.deep.equal([a.id]);
    expect(report.addresses).to.deep.equal(new Map([[a.id, '127.77.0.9']]));
    expect(report.pending.map((p) => [p.bindingId, p.reason])).to.deep.equal([[b.id, 'AddressNotAssigned']]);
    expect(report.pending[0]?.message).to.match(/^the edge has assigned no address: it refused to reserve one from its pool: /);

    await running.edge.close();
    const bare = storeEdgeConfig('unused');
    delete bare.store?.addressPool;
    running = await startStoreEdge(store, bare);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    const none = await new EdgeReconciler(client, new TunnelKeys(), { clusterId: 'west' }).reconcile(graphOf(addressBinding('c')));
    expect(none.pending.map((p) => p.reason)).to.deep.equal(['AddressNotAssigned']);
    expect(none.ready.size).to.equal(0);
  });
});
