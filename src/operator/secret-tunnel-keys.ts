import { createHash } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import { CodedError } from '../model/index.js';
import type { TunaCode } from '../model/index.js';
import { decodeWith, jsonText, looseObject, looseString, required } from '../codec/index.js';
import type { DecodeResult } from '../codec/index.js';
import { runBounded } from './bounded.js';
import { TunnelKeys } from './tunnel-keys.js';
import type { HeldKey } from './tunnel-keys.js';

/** StoredKey is one entry of a Secret: the binding it belongs to and its key. */
interface StoredKey extends HeldKey {
  bindingId: string;
}

/** storedKeyCodec decodes one entry: JSON text with the binding id, the key's id and its token (and the edge's binding id, where it differs). */
const storedKeyCodec = jsonText(
  looseObject('StoredKey', { bindingId: required(looseString), keyId: required(looseString), token: required(looseString), edgeBindingId: looseString }),
);

/**
 * decodeKeyEntry decodes one entry of the Secret (its base64-decoded text). Problems name the field
 * (`token: required`) and never quote the text, which holds a token.
 */
export function decodeKeyEntry(text: string): DecodeResult<StoredKey> {
  return decodeWith(storedKeyCodec, text);
}

/**
 * KEY_SHARDS is how many Secrets hold the keys. A Secret holds at most 1 MiB of data (the
 * apiserver refuses more with 422), about 6,000 entries of ~170 bytes: one Secret broke at about
 * 7,000 hosts in the scale benchmark. 32 shards hold about 190,000; the names are fixed so that RBAC can name
 * each one (resourceNames has no prefix match).
 */
export const KEY_SHARDS = 32;

/** MAX_SECRET_BYTES is the apiserver's limit on a Secret's data (keys plus decoded values). */
export const MAX_SECRET_BYTES = 1024 * 1024;

/** keyShardNames are the names of the Secrets that hold the keys, for the base name `name`: `<name>-00` … `<name>-1f`. */
export function keyShardNames(name = 'tuna-tunnel-keys'): string[] {
  return Array.from({ length: KEY_SHARDS }, (_, i) => `${name}-${i.toString(16).padStart(2, '0')}`);
}

/** entryKeyOf is the data key of a binding's entry: binding ids hold `/`, which Secret keys may not. */
function entryKeyOf(bindingId: string): string {
  return createHash('sha256').update(bindingId).digest('hex').slice(0, 40);
}

/** shardOf is the shard that holds an entry, from the first byte of its key (uniform over 32). */
function shardOf(entryKey: string): number {
  return Number.parseInt(entryKey.slice(0, 2), 16) % KEY_SHARDS;
}

/** KeysNotPersistedError: some Secrets could not be written; the keys stay held (and served) and are written on the next persist. */
export class KeysNotPersistedError extends CodedError<TunaCode> {
  constructor(readonly failures: string[]) {
    super('TUNA_KEYS_NOT_PERSISTED', `the tunnel keys were not all persisted (they are served, and written again on the next sync): ${failures.join('; ')}`);
  }
}

/**
 * SecretTunnelKeys keeps the tunnel keys the reconciler minted in the operator's namespace, so a
 * restarted operator finds its keys again instead of minting new ones and reconnecting every
 * binding. The entries are spread by a hash of their binding id over KEY_SHARDS Secrets
 * (`tuna-tunnel-keys-00` … `-1f`), so no count of hosts makes one Secret exceed the 1 MiB an
 * object may hold, and a new key rewrites one shard, not every key. Each entry is stored under a
 * hash of its binding id, as JSON with the binding id, the key's id and its token, and for a
 * dedicated address the edge's binding id (`edgeBindingId`). The token is the only secret the
 * operator holds; it is never logged.
 *
 * The single Secret of earlier versions (`tuna-tunnel-keys`) is read too; its entries are written
 * to the shards by the next persist, and it is then emptied (not deleted: RBAC grants no delete).
 * RBAC: get, update on these Secrets (by name) and create in the namespace (config/rbac).
 */
export class SecretTunnelKeys extends TunnelKeys {
  readonly #core: CoreV1Api;
  readonly #namespace: string;
  readonly #name: string;
  readonly #shardNames: string[];
  readonly #onProblem: (problem: string) => void;
  /** Secret name → the resourceVersion last read or written (absent: the Secret does not exist) */
  readonly #versions = new Map<string, string>();
  /** the legacy single Secret holds entries that the shards now hold (or will after the next persist) */
  #isLegacyToEmpty = false;

  /** problems of the last load: one line per entry that did not decode (it was skipped) */
  problems: string[] = [];

  /**
   * constructor names the Secrets by their base name. `onProblem` hears of each entry `load` skips
   * because it does not decode: the operator keeps running and mints that binding a new key, and
   * the log says why.
   */
  constructor(
    config: KubeConfig,
    namespace: string,
    name = 'tuna-tunnel-keys',
    onProblem: (problem: string) => void = () => undefined,
  ) {
    super();
    this.#onProblem = onProblem;
    this.#core = config.makeApiClient(CoreV1Api);
    this.#namespace = namespace;
    this.#name = name;
    this.#shardNames = keyShardNames(name);
  }

  /**
   * load reads the shards and the legacy Secret (an absent one holds no key), replacing what is
   * held. An entry of a shard wins over the legacy Secret's entry for the same binding.
   */
  async load(): Promise<void> {
    const names = [this.#name, ...this.#shardNames];
    const read = new Map<string, V1Secret | undefined>();
    await runBounded(names, 8, async (name) => void read.set(name, await this.#read(name)));
    this.problems = [];
    const loaded = new Map<string, HeldKey>();
    const fromLegacy = new Set<string>();
    for (const name of names) {
      const secret = read.get(name);
      const version = secret?.metadata?.resourceVersion;
      if (version === undefined) this.#versions.delete(name);
      else this.#versions.set(name, version);
      for (const entry of this.#decode(name, secret)) {
        if (name === this.#name) fromLegacy.add(entry.bindingId);
        else fromLegacy.delete(entry.bindingId);
        loaded.set(entry.bindingId, { keyId: entry.keyId, token: entry.token, ...(entry.edgeBindingId !== undefined ? { edgeBindingId: entry.edgeBindingId } : {}) });
      }
    }
    // a follower reloads: what the leader removed is gone here too
    for (const bindingId of this.bindings()) if (!loaded.has(bindingId)) this.delete(bindingId);
    for (const [bindingId, key] of loaded) {
      const held = this.get(bindingId);
      if (held?.keyId !== key.keyId || held.token !== key.token || held.edgeBindingId !== key.edgeBindingId) this.set(bindingId, key);
    }
    this.changed.clear();
    // the legacy entries go to the shards on the next persist
    for (const bindingId of fromLegacy) this.changed.add(bindingId);
    this.#isLegacyToEmpty = Object.keys(read.get(this.#name)?.data ?? {}).length > 0;
  }

  /**
   * persist writes the shards whose keys changed (create, or update at the version read, re-reading
   * on a conflict), then empties the legacy Secret once every shard holds its entries. A shard that
   * cannot be written (too large, refused, unreachable) stays changed for the next persist; the
   * others are written, and KeysNotPersistedError names what failed.
   */
  override async persist(): Promise<void> {
    if (!this.isDirty && !this.#isLegacyToEmpty) return;
    const dirty = new Map<number, string[]>();
    for (const bindingId of this.changed) {
      const shard = shardOf(entryKeyOf(bindingId));
      dirty.set(shard, [...(dirty.get(shard) ?? []), bindingId]);
    }
    const data = new Map<number, Record<string, string>>([...dirty.keys()].map((s) => [s, {}]));
    for (const bindingId of this.bindings()) {
      const entryKey = entryKeyOf(bindingId);
      const shard = data.get(shardOf(entryKey));
      const key = this.get(bindingId);
      if (shard === undefined || key === undefined) continue;
      const entry: StoredKey = { bindingId, keyId: key.keyId, token: key.token, ...(key.edgeBindingId !== undefined ? { edgeBindingId: key.edgeBindingId } : {}) };
      shard[entryKey] = Buffer.from(JSON.stringify(entry)).toString('base64');
    }
    const failures: string[] = [];
    await runBounded([...dirty], 4, async ([shard, bindingIds]) => {
      const name = this.#shardNames[shard] as string;
      try {
        await this.#write(name, data.get(shard) ?? {});
        for (const bindingId of bindingIds) this.changed.delete(bindingId);
      } catch (err) {
        failures.push(`Secret ${this.#namespace}/${name}: ${(err as Error).message}`);
      }
    });
    if (failures.length === 0 && this.#isLegacyToEmpty) {
      try {
        await this.#write(this.#name, {}, { 'tuna.dev/keys-moved-to': `${this.#shardNames[0]} … ${this.#shardNames.at(-1)}` });
        this.#isLegacyToEmpty = false;
      } catch (err) {
        failures.push(`Secret ${this.#namespace}/${this.#name} (emptying the single Secret of earlier versions): ${(err as Error).message}`);
      }
    }
    if (failures.length > 0) throw new KeysNotPersistedError(failures.sort());
  }

  /** decode yields the entries of one Secret that decode, reporting each that does not. */
  *#decode(name: string, secret: V1Secret | undefined): Generator<StoredKey> {
    for (const [key, value] of Object.entries(secret?.data ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const decoded = decodeKeyEntry(Buffer.from(value, 'base64').toString('utf8'));
      if (decoded.ok) {
        yield decoded.value;
        continue;
      }
      const problem = `Secret ${this.#namespace}/${name} entry ${key} is skipped: ${decoded.errors.join('; ')}`;
      this.problems.push(problem);
      this.#onProblem(problem);
    }
  }

  /** write stores one Secret's data (an absent Secret with nothing to hold is not created). */
  async #write(name: string, data: Record<string, string>, annotations?: Record<string, string>): Promise<void> {
    let bytes = 0;
    for (const [key, value] of Object.entries(data)) bytes += key.length + Math.floor((value.length * 3) / 4);
    if (bytes > MAX_SECRET_BYTES) throw new Error(`its ${Object.keys(data).length} entries are ${bytes} bytes, over the ${MAX_SECRET_BYTES} a Secret may hold`);
    if (!this.#versions.has(name) && Object.keys(data).length === 0) return;
    const metadata = { name, namespace: this.#namespace, labels: { 'app.kubernetes.io/managed-by': 'tuna' }, ...(annotations ? { annotations } : {}) };
    const body: V1Secret = { metadata, type: 'Opaque', data };
    for (let attempt = 0; attempt < 3; attempt++) {
      const version = this.#versions.get(name);
      try {
        const written =
          version === undefined
            ? await this.#core.createNamespacedSecret({ namespace: this.#namespace, body })
            : await this.#core.replaceNamespacedSecret({ name, namespace: this.#namespace, body: { ...body, metadata: { ...metadata, resourceVersion: version } } });
        const next = written.metadata?.resourceVersion;
        if (next === undefined) this.#versions.delete(name);
        else this.#versions.set(name, next);
        return;
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err;
        // someone else wrote it (or it exists already): take its version; what this process holds wins
        const current = (await this.#read(name))?.metadata?.resourceVersion;
        if (current === undefined) this.#versions.delete(name);
        else this.#versions.set(name, current);
      }
    }
    throw new Error('it keeps changing');
  }

  async #read(name: string): Promise<V1Secret | undefined> {
    try {
      return await this.#core.readNamespacedSecret({ name, namespace: this.#namespace });
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }
}
