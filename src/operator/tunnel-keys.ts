import type { TunnelKeySource } from '../tunnel/index.js';

/**
 * HeldKey is a tunnel key the operator minted: its record id at the edge and its secret token, and
 * for a binding whose value the edge assigns (a dedicated address), the edge's binding id that the
 * tunnel names (`binding/address/<ip>`; absent: the graph's id is the edge's, as for hosts).
 */
export interface HeldKey {
  keyId: string;
  token: string;
  edgeBindingId?: string;
}

/**
 * TunnelKeys holds the tunnel keys the reconciler minted, by binding id, and hands them to the
 * tunnel manager (a TunnelKeySource whose reference is the key id, so a new key reconnects).
 * This one keeps them in memory: after a restart the reconciler mints new keys and revokes the
 * old ones, which it finds by the cluster label. SecretTunnelKeys keeps them in Secrets.
 *
 * Every lookup is a map lookup (by binding id, by edge binding id, by key id): a sync asks for
 * each binding's key, and a linear search per binding made a sync of N bindings N².
 */
export class TunnelKeys implements TunnelKeySource {
  readonly #byBinding = new Map<string, HeldKey>();
  /** edge binding id → the graph binding id whose key records it */
  readonly #byEdgeId = new Map<string, string>();
  /** key id → how many bindings hold it (one, but a test may give two bindings one key) */
  readonly #keyIds = new Map<string, number>();
  /** the binding ids set or deleted since the last persist (or load): what persist must write */
  protected readonly changed = new Set<string>();

  /** isDirty tells whether keys were set or deleted since the last persist (or load). */
  protected get isDirty(): boolean {
    return this.changed.size > 0;
  }

  get(bindingId: string): HeldKey | undefined {
    return this.#byBinding.get(bindingId);
  }

  /**
   * set records the key of a binding. An edge binding id (a Gateway address) belongs to one binding
   * at a time: an address released by a Gateway that went and reserved again by a new one must not
   * lead the new one's tunnels to the old, revoked key, so any other entry naming it is dropped.
   */
  set(bindingId: string, key: HeldKey): void {
    if (key.edgeBindingId !== undefined) {
      const other = this.#byEdgeId.get(key.edgeBindingId);
      if (other !== undefined && other !== bindingId) this.delete(other);
    }
    this.#forget(bindingId);
    this.#byBinding.set(bindingId, key);
    if (key.edgeBindingId !== undefined) this.#byEdgeId.set(key.edgeBindingId, bindingId);
    this.#keyIds.set(key.keyId, (this.#keyIds.get(key.keyId) ?? 0) + 1);
    this.changed.add(bindingId);
  }

  delete(bindingId: string): void {
    if (this.#forget(bindingId)) this.changed.add(bindingId);
  }

  /**
   * forTunnel is the key a tunnel of `bindingId` uses: the graph's binding id, or the edge's binding
   * id recorded with the key (the tunnel and the data plane name a dedicated address by the edge's id).
   */
  forTunnel(bindingId: string): HeldKey | undefined {
    const direct = this.#byBinding.get(bindingId);
    if (direct !== undefined) return direct;
    const owner = this.#byEdgeId.get(bindingId);
    return owner === undefined ? undefined : this.#byBinding.get(owner);
  }

  /** edgeIdOf is the edge's binding id of a graph binding (the graph's own id when the key records none). */
  edgeIdOf(bindingId: string): string {
    return this.#byBinding.get(bindingId)?.edgeBindingId ?? bindingId;
  }

  /** bindings are the binding ids that hold a key. */
  bindings(): string[] {
    return [...this.#byBinding.keys()];
  }

  /** size is how many bindings hold a key. */
  get size(): number {
    return this.#byBinding.size;
  }

  /** heldKeyIds are the ids of every key held. */
  heldKeyIds(): Set<string> {
    return new Set(this.#keyIds.keys());
  }

  /** isHeld tells whether some binding holds the key with this id. */
  isHeld(keyId: string): boolean {
    return this.#keyIds.has(keyId);
  }

  /** persist saves the keys, when they changed, where a restarted operator finds them again (memory: nowhere). */
  persist(): Promise<void> {
    this.changed.clear();
    return Promise.resolve();
  }

  resolveKey(bindingId: string, keyRef: string): Promise<string> {
    const held = this.forTunnel(bindingId);
    if (held === undefined || held.keyId !== keyRef) return Promise.reject(new Error(`no tunnel key for ${bindingId}`));
    return Promise.resolve(held.token);
  }

  /** forget drops a binding's entry from every index (true when it held one); `changed` is the caller's. */
  #forget(bindingId: string): boolean {
    const held = this.#byBinding.get(bindingId);
    if (held === undefined) return false;
    this.#byBinding.delete(bindingId);
    if (held.edgeBindingId !== undefined && this.#byEdgeId.get(held.edgeBindingId) === bindingId) this.#byEdgeId.delete(held.edgeBindingId);
    const count = (this.#keyIds.get(held.keyId) ?? 1) - 1;
    if (count <= 0) this.#keyIds.delete(held.keyId);
    else this.#keyIds.set(held.keyId, count);
    return true;
  }
}
