/**
 * The tunnel keys are spread over KEY_SHARDS Secrets (one Secret broke at about 7,000
 * hosts, past the 1 MiB an object may hold). Against a fake apiserver that refuses a Secret over
 * 1 MiB as the real one does: 8,000 keys are persisted and reloaded after a restart, a new key
 * rewrites one shard, the single Secret of earlier versions is migrated and emptied, a failed write
 * never loses the keys held, and config/rbac names every shard.
 */
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { KEY_SHARDS, KeysNotPersistedError, SecretTunnelKeys, keyShardNames } from '../../src/operator/secret-tunnel-keys.js';
import type { HeldKey } from '../../src/operator/tunnel-keys.js';
import { FakeSecretApi } from '../support/fake-secret-api.js';

const NS = 'tuna-system';
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** keyOf is a key as the edge mints them: a uuid and a 43-character token. */
const keyOf = (): HeldKey => ({ keyId: randomUUID(), token: `tuna_tk_${randomBytes(32).toString('base64url')}` });
const bindingOf = (i: number): string => `binding/host/web-${i}.tenant-${i % 97}.tuna.example.com`;

describe('tunnel keys spread over sharded Secrets', function () {
  this.timeout(60_000);
  let api: FakeSecretApi;
  let config: KubeConfig;

  beforeEach(async () => {
    api = new FakeSecretApi();
    config = await api.start();
  });

  afterEach(() => api.close());

  it('the fake refuses one Secret holding 8,000 keys, as the apiserver does past 1 MiB', async () => {
    const data: Record<string, string> = {};
    for (let i = 0; i < 8000; i++) data[`${i}`.padStart(40, '0')] = b64(JSON.stringify({ bindingId: bindingOf(i), ...keyOf() }));
    const refused = await config
      .makeApiClient(CoreV1Api)
      .createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'tuna-tunnel-keys' }, data } })
      .then(
        () => 'created',
        (err: { code?: number }) => err.code,
      );
    expect(refused).to.equal(422);
  });

  it('persists 8,000 keys, none of its Secrets over 1 MiB, and a restarted operator reloads every one', async () => {
    const keys = new SecretTunnelKeys(config, NS);
    await keys.load();
    const minted = new Map<string, HeldKey>();
    for (let i = 0; i < 8000; i++) {
      const key = keyOf();
      minted.set(bindingOf(i), key);
      keys.set(bindingOf(i), key);
    }
    await keys.persist();
    expect(api.calls.refusedTooLarge).to.equal(0);
    expect([...api.secrets.keys()].sort()).to.deep.equal(keyShardNames().map((n) => `${NS}/${n}`));
    for (const s of api.secrets.values()) expect(FakeSecretApi.sizeOf(s.data)).to.be.below(1024 * 1024);
    expect([...api.secrets.values()].reduce((n, s) => n + Object.keys(s.data).length, 0)).to.equal(8000);

    const restarted = new SecretTunnelKeys(config, NS);
    await restarted.load();
    expect(restarted.size).to.equal(8000);
    expect(restarted.problems).to.deep.equal([]);
    for (const [bindingId, key] of minted) expect(restarted.get(bindingId), bindingId).to.deep.equal(key);

    // nothing changed: nothing is written; one new key: one shard is written
    const writes = (): number => api.calls.create + api.calls.update;
    const before = writes();
    await restarted.persist();
    expect(writes()).to.equal(before);
    restarted.set(bindingOf(8000), keyOf());
    await restarted.persist();
    expect(writes()).to.equal(before + 1);
  });

  it('moves the keys of the single Secret of earlier versions into the shards and empties it', async () => {
    const legacy = { 'aaa': b64(JSON.stringify({ bindingId: 'binding/host/a.example', keyId: 'ka', token: 'ta' })), 'bbb': b64(JSON.stringify({ bindingId: 'binding/host/b.example', keyId: 'kb', token: 'tb' })) };
    await config.makeApiClient(CoreV1Api).createNamespacedSecret({ namespace: NS, body: { metadata: { name: 'tuna-tunnel-keys' }, data: legacy } });
    const keys = new SecretTunnelKeys(config, NS);
    await keys.load();
    expect(keys.bindings().sort()).to.deep.equal(['binding/host/a.example', 'binding/host/b.example']);
    await keys.persist();
    const old = api.secrets.get(`${NS}/tuna-tunnel-keys`);
    expect(old?.data).to.deep.equal({});
    expect(old?.metadata.annotations?.['tuna.dev/keys-moved-to']).to.equal('tuna-tunnel-keys-00 … tuna-tunnel-keys-1f');
    expect([...api.secrets.values()].reduce((n, s) => n + Object.keys(s.data).length, 0)).to.equal(2);

    const restarted = new SecretTunnelKeys(config, NS);
    await restarted.load();
    expect(restarted.get('binding/host/a.example')).to.deep.equal({ keyId: 'ka', token: 'ta' });
    expect(restarted.get('binding/host/b.example')).to.deep.equal({ keyId: 'kb', token: 'tb' });
    const writes = api.calls.create + api.calls.update;
    await restarted.persist();
    expect(api.calls.create + api.calls.update, 'migrated once').to.equal(writes);
  });

  it('keeps serving the keys it holds when the Secrets cannot be written, and writes them once it can', async () => {
    const keys = new SecretTunnelKeys(config, NS);
    await keys.load();
    keys.set('binding/host/a.example', { keyId: 'ka', token: 'ta' });
    api.failWrites = true;
    const failed = await keys.persist().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).to.be.instanceOf(KeysNotPersistedError);
    expect((failed as KeysNotPersistedError).code).to.equal('TUNA_KEYS_NOT_PERSISTED');
    expect((failed as Error).message).to.not.include('ta"');
    expect(await keys.resolveKey('binding/host/a.example', 'ka')).to.equal('ta');

    api.failWrites = false;
    await keys.persist();
    const restarted = new SecretTunnelKeys(config, NS);
    await restarted.load();
    expect(restarted.get('binding/host/a.example')).to.deep.equal({ keyId: 'ka', token: 'ta' });
  });

  it('is granted get and update on every shard, and the Secret of earlier versions, by config/rbac/operator.yaml', () => {
    expect(keyShardNames()).to.have.length(KEY_SHARDS);
    const file = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'config', 'rbac', 'operator.yaml');
    type Rule = { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] };
    const role = parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as { kind?: string; rules?: Rule[] })
      .find((d) => d.kind === 'Role');
    const named = (role?.rules ?? []).find((r) => r.resources.includes('secrets') && r.resourceNames !== undefined);
    expect(named?.verbs).to.deep.equal(['get', 'update']);
    expect(named?.resourceNames).to.deep.equal(['tuna-tunnel-keys', ...keyShardNames()]);
  });
});
