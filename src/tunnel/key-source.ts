/**
 * TunnelKeySource turns a spec's opaque key reference into the key. In the cluster it reads the
 * Secret the reconciler minted; the CLI holds the key from a flag or file. A reference must
 * change whenever the key does: that is how the manager knows to reconnect.
 */
export interface TunnelKeySource {
  resolveKey(bindingId: string, keyRef: string): Promise<string>;
}

/** StaticKeySource resolves references from a fixed map (CLI, tests). */
export class StaticKeySource implements TunnelKeySource {
  readonly #keys: ReadonlyMap<string, string>;

  constructor(keys: ReadonlyMap<string, string>) {
    this.#keys = keys;
  }

  resolveKey(bindingId: string, keyRef: string): Promise<string> {
    const key = this.#keys.get(keyRef);
    if (key === undefined) return Promise.reject(new Error(`no tunnel key for ${bindingId} (reference ${keyRef})`));
    return Promise.resolve(key);
  }
}
