import type { ServedKey, Store } from '../store/index.js';
import type { AddressPort, BindingDirectory, EdgeBinding } from '../tunnels/index.js';
import { ServedBindings } from './served-bindings.js';

/** DirectoryStore is the store as the binding directory reads it: only what it uses (docs/architecture.md, narrow interfaces). */
export type DirectoryStore = Pick<Store, 'listServedChanges'>;

/** StoreBindingDirectoryOptions configures the store-backed directory. */
export interface StoreBindingDirectoryOptions {
  store: DirectoryStore;
  /** ports opened on every dedicated address */
  addressPorts: readonly AddressPort[];
  /** how often to read the change feed (default 1 s): how soon another node's reservation is served */
  pollMs?: number;
  log?: (line: string) => void;
}

/**
 * StoreBindingDirectory serves the bindings of every held reservation (src/edge/store-mode/reservation-bindings.ts).
 * It loads them once, then follows the store's change feed (`listServedChanges` after the last
 * sequence number seen, docs/edge-store.md "Change feed"): each read brings only the reservation and key rows
 * written since, and only their bindings are rebuilt, so neither the poll nor a handshake costs a
 * reload of every host. The feed is read on an interval, so a reservation made through another
 * edge node sharing the PostgreSQL database is served here within `pollMs`; `refresh()` reads at
 * once (after a control API change on this node, or when a tunnel asks for a binding this node has
 * not seen yet). Subscribers hear only real changes, so listeners are not reconciled for nothing.
 */
export class StoreBindingDirectory implements BindingDirectory {
  readonly #options: StoreBindingDirectoryOptions;
  readonly #served: ServedBindings;
  readonly #listeners = new Set<() => void>();
  readonly #keyListeners = new Set<(keys: readonly ServedKey[]) => void>();
  #seq: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;
  #next: Promise<void> | undefined;

  constructor(options: StoreBindingDirectoryOptions) {
    this.#options = options;
    this.#served = new ServedBindings(options.addressPorts);
  }

  /** start loads the bindings once and then polls. */
  async start(): Promise<void> {
    await this.refresh();
    this.#timer = setInterval(() => {
      this.refresh().catch((err: Error) => this.#options.log?.(`binding directory: refresh failed: ${err.name} ${(err as { code?: string }).code ?? ''}`.trim()));
    }, this.#options.pollMs ?? 1000);
    this.#timer.unref();
  }

  /** stop ends polling. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * refresh reads the change feed. Calls during a refresh coalesce into one more read after it, so a
   * caller always sees the state of a read that started after its call.
   */
  refresh(): Promise<void> {
    if (this.#refreshing === undefined) {
      this.#refreshing = this.#load().finally(() => (this.#refreshing = undefined));
      return this.#refreshing;
    }
    this.#next ??= this.#refreshing
      .catch(() => undefined)
      .then(() => {
        this.#next = undefined;
        return this.refresh();
      });
    return this.#next;
  }

  // Only one read runs at a time (refresh coalesces), so the sequence number moves in order.
  async #load(): Promise<void> {
    const changes = await this.#options.store.listServedChanges(this.#seq);
    const changed = this.#served.apply(changes);
    this.#seq = changes.seq;
    if (changed) for (const listener of this.#listeners) listener();
    if (changes.tunnelKeys.length > 0) for (const listener of this.#keyListeners) listener(changes.tunnelKeys);
  }

  byId(id: string): EdgeBinding | undefined {
    return this.#served.index.byId(id);
  }

  byHost(hostname: string): EdgeBinding | undefined {
    return this.#served.index.byHost(hostname);
  }

  byPort(port: number): EdgeBinding | undefined {
    return this.#served.index.byPort(port);
  }

  byAddress(address: string): EdgeBinding | undefined {
    return this.#served.index.byAddress(address);
  }

  list(): readonly EdgeBinding[] {
    return this.#served.index.list();
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** subscribeKeys hears every tunnel key row a read of the feed brings (minted, rotated, revoked), after the bindings are applied. */
  subscribeKeys(listener: (keys: readonly ServedKey[]) => void): () => void {
    this.#keyListeners.add(listener);
    return () => this.#keyListeners.delete(listener);
  }
}
