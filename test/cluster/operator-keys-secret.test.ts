// operator-keys-secret.test.ts — the tunnel keys the operator mints survive a restart in Secrets
// (the shards tuna-tunnel-keys-00 … -1f): a new operator loads them and mints nothing, revokes nothing.
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { emptyGraph } from '../../src/model/index.js';
import { EdgeReconciler } from '../../src/operator/edge-reconciler.js';
import { SecretTunnelKeys, keyShardNames } from '../../src/operator/secret-tunnel-keys.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { hostBinding } from '../support/graph-builders.js';
import { clusterConfig } from './cluster-env.js';

describe('operator: tunnel keys kept in a Secret', function () {
  this.timeout(60_000);
  const namespace = `tuna-keys-${process.pid}`;
  let core: CoreV1Api;
  let store: Store;
  let edge: StoreEdge;
  let client: ControlClient;

  before(async () => {
    core = clusterConfig().makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    store = await openSqliteStore(':memory:');
    edge = await startStoreEdge(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, (await seedAccount(store)).reservationsToken);
  });

  after(async () => {
    await edge?.edge.close();
    await store?.close();
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  /** entryKeys are the data keys of every key shard the namespace holds (an absent shard holds none). */
  const entryKeys = async (): Promise<string[]> => {
    const keys: string[] = [];
    for (const name of keyShardNames()) {
      const shard = await core.readNamespacedSecret({ name, namespace }).catch((err: { code?: number }) => (err.code === 404 ? undefined : Promise.reject(err)));
      keys.push(...Object.keys(shard?.data ?? {}));
    }
    return keys;
  };

  it('stores the minted key, and a restarted operator reuses it without minting or revoking', async () => {
    const binding = hostBinding(`kept-${process.pid}.${BASE_DOMAIN}`).binding;
    const graph = { ...emptyGraph(), bindings: [binding] };
    const first = new SecretTunnelKeys(clusterConfig(), namespace);
    await first.load();
    expect((await new EdgeReconciler(client, first, { clusterId: 'keys' }).reconcile(graph)).minted).to.equal(1);
    const stored = await entryKeys();
    expect(stored).to.have.length(1);
    expect(stored[0]).to.match(/^[0-9a-f]{40}$/);

    const restarted = new SecretTunnelKeys(clusterConfig(), namespace);
    await restarted.load();
    expect(restarted.get(binding.id)).to.deep.equal(first.get(binding.id));
    const report = await new EdgeReconciler(client, restarted, { clusterId: 'keys' }).reconcile(graph);
    expect(report).to.include({ minted: 0, revoked: 0, reserved: 0 });
    expect(await restarted.resolveKey(binding.id, restarted.get(binding.id)!.keyId)).to.equal(first.get(binding.id)?.token);

    // the binding leaves: its key is revoked and the Secret no longer holds it
    await new EdgeReconciler(client, restarted, { clusterId: 'keys' }).reconcile(emptyGraph());
    expect(await entryKeys()).to.deep.equal([]);
  });
  it('persists 8,000 keys to the real apiserver, where one Secret of them is refused, and reloads every one', async () => {
    const space = `${namespace}-many`;
    await core.createNamespace({ body: { metadata: { name: space } } });
    try {
      const keys = new SecretTunnelKeys(clusterConfig(), space);
      await keys.load();
      const minted = new Map<string, { keyId: string; token: string }>();
      for (let i = 0; i < 8000; i++) {
        const key = { keyId: randomUUID(), token: `tuna_tk_${randomBytes(32).toString('base64url')}` };
        minted.set(`binding/host/web-${i}.tenant-${i % 97}.${BASE_DOMAIN}`, key);
        keys.set(`binding/host/web-${i}.tenant-${i % 97}.${BASE_DOMAIN}`, key);
      }
      await keys.persist();
      const restarted = new SecretTunnelKeys(clusterConfig(), space);
      await restarted.load();
      expect(restarted.size).to.equal(8000);
      for (const [bindingId, key] of minted) expect(restarted.get(bindingId), bindingId).to.deep.equal(key);

      // the control: the same entries in one Secret exceed the apiserver's 1 MiB and are refused
      const data: Record<string, string> = {};
      for (const [bindingId, key] of minted) data[bindingId.replace(/[^a-z0-9.-]/g, '-')] = Buffer.from(JSON.stringify({ bindingId, ...key })).toString('base64');
      const one = await core.createNamespacedSecret({ namespace: space, body: { metadata: { name: 'all-in-one' }, data } }).then(
        () => 'created',
        (err: { code?: number }) => err.code,
      );
      expect(one).to.equal(422);
    } finally {
      await core.deleteNamespace({ name: space }).catch(() => undefined);
    }
  });

  it('moves the keys of the single Secret of earlier versions into the shards and empties it', async () => {
    const space = `${namespace}-old`;
    await core.createNamespace({ body: { metadata: { name: space } } });
    try {
      const entry = { bindingId: `binding/host/old.${BASE_DOMAIN}`, keyId: 'k-old', token: 'tuna_tk_old' };
      await core.createNamespacedSecret({ namespace: space, body: { metadata: { name: 'tuna-tunnel-keys' }, data: { aaaa: Buffer.from(JSON.stringify(entry)).toString('base64') } } });
      const keys = new SecretTunnelKeys(clusterConfig(), space);
      await keys.load();
      expect(keys.get(entry.bindingId)).to.deep.equal({ keyId: 'k-old', token: 'tuna_tk_old' });
      await keys.persist();
      const old = await core.readNamespacedSecret({ name: 'tuna-tunnel-keys', namespace: space });
      expect(old.data ?? {}).to.deep.equal({});
      const restarted = new SecretTunnelKeys(clusterConfig(), space);
      await restarted.load();
      expect(restarted.get(entry.bindingId)).to.deep.equal({ keyId: 'k-old', token: 'tuna_tk_old' });
    } finally {
      await core.deleteNamespace({ name: space }).catch(() => undefined);
    }
  });
});
