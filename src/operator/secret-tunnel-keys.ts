import { createHash } from 'node:crypto';
import { CoreV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import { decodeWith, jsonText, looseObject, looseString, required } from '../codec/index.js';
import type { DecodeResult } from '../codec/index.js';
import { TunnelKeys } from './edge-reconciler.js';
import type { HeldKey } from './edge-reconciler.js';

/** StoredKey is one entry of the Secret: the binding it belongs to and its key. */
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
 * SecretTunnelKeys keeps the tunnel keys the reconciler minted in one Secret of the operator's
 * namespace (default `tuna-tunnel-keys`), so a restarted operator finds its keys again instead of
 * minting new ones and reconnecting every binding. Each entry is stored under a hash of its
 * binding id (binding ids hold `/`, which Secret keys may not), as JSON with the binding id, the
 * key's id and its token, and for a dedicated address the edge's binding id (`edgeBindingId`). The token is the only secret the operator holds; it is never logged.
 * RBAC: get, update on this Secret (by name) and create in the namespace (config/rbac).
 */
export class SecretTunnelKeys extends TunnelKeys {
  readonly #core: CoreV1Api;
  readonly #namespace: string;
  readonly #name: string;
  readonly #onProblem: (problem: string) => void;
  #resourceVersion: string | undefined;

  /** problems of the last load: one line per entry that did not decode (it was skipped) */
  problems: string[] = [];

  /**
   * constructor names the Secret. `onProblem` hears of each entry `load` skips because it does not
   * decode: the operator keeps running and mints that binding a new key, and the log says why.
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
  }

  /** load reads the Secret (an absent Secret means no key yet), replacing what is held. */
  async load(): Promise<void> {
    const secret = await this.#read();
    this.#resourceVersion = secret?.metadata?.resourceVersion;
    const loaded = new Set<string>();
    this.problems = [];
    for (const [key, value] of Object.entries(secret?.data ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const decoded = decodeKeyEntry(Buffer.from(value, 'base64').toString('utf8'));
      if (!decoded.ok) {
        const problem = `Secret ${this.#namespace}/${this.#name} entry ${key} is skipped: ${decoded.errors.join('; ')}`;
        this.problems.push(problem);
        this.#onProblem(problem);
        continue;
      }
      const entry = decoded.value;
      this.set(entry.bindingId, { keyId: entry.keyId, token: entry.token, ...(entry.edgeBindingId !== undefined ? { edgeBindingId: entry.edgeBindingId } : {}) });
      loaded.add(entry.bindingId);
    }
    // a follower reloads: what the leader removed is gone here too
    for (const bindingId of this.bindings()) if (!loaded.has(bindingId)) this.delete(bindingId);
    this.isDirty = false;
  }

  /** persist writes every held key when they changed (create, or update at the version read, re-reading on a conflict). */
  override async persist(): Promise<void> {
    if (!this.isDirty) return;
    const data: Record<string, string> = {};
    for (const bindingId of this.bindings()) {
      const key = this.get(bindingId);
      if (key === undefined) continue;
      const entry: StoredKey = { bindingId, keyId: key.keyId, token: key.token, ...(key.edgeBindingId !== undefined ? { edgeBindingId: key.edgeBindingId } : {}) };
      data[createHash('sha256').update(bindingId).digest('hex').slice(0, 40)] = Buffer.from(JSON.stringify(entry)).toString('base64');
    }
    const body: V1Secret = { metadata: { name: this.#name, namespace: this.#namespace, labels: { 'app.kubernetes.io/managed-by': 'tuna' } }, type: 'Opaque', data };
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const written =
          this.#resourceVersion === undefined
            ? await this.#core.createNamespacedSecret({ namespace: this.#namespace, body })
            : await this.#core.replaceNamespacedSecret({ name: this.#name, namespace: this.#namespace, body: { ...body, metadata: { ...body.metadata, resourceVersion: this.#resourceVersion } } });
        this.#resourceVersion = written.metadata?.resourceVersion;
        this.isDirty = false;
        return;
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err;
        // someone else wrote it (or it exists already): take its version; what this process holds wins
        this.#resourceVersion = (await this.#read())?.metadata?.resourceVersion;
      }
    }
    throw new Error(`could not write Secret ${this.#namespace}/${this.#name}: it keeps changing`);
  }

  async #read(): Promise<V1Secret | undefined> {
    try {
      return await this.#core.readNamespacedSecret({ name: this.#name, namespace: this.#namespace });
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }
}
