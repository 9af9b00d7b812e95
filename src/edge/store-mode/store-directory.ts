import type { Store } from '../store/index.js';
import { StaticBindingDirectory } from '../tunnels/directory.js';
import type { AddressPort, BindingDirectory, EdgeBinding } from '../tunnels/directory.js';
import { bindingFromReservation } from './reservation-bindings.js';

/** DirectoryStore is the store as the binding directory reads it: only what it uses (docs/architecture.md, narrow interfaces). */
export type DirectoryStore = Pick<Store, 'listServedReservations'>;

/** StoreBindingDirectoryOptions configures the store-backed directory. */
export interface StoreBindingDirectoryOptions {
  store: DirectoryStore;
  /** ports opened on every dedicated address */
  addressPorts: readonly AddressPort[];
  /** how often to re-read the reservations (default 1 s): how soon another node's reservation is served */
  pollMs?: number;
  log?: (line: string) => void;
}

/**
 * StoreBindingDirectory serves the bindings of every held reservation (src/edge/store-mode/reservation-bindings.ts).
 * It re-reads the store on an interval, so a reservation made through another edge node sharing the
 * PostgreSQL database is served here within `pollMs`; `refresh()` re-reads at once (after a control
 * API change on this node, or when a tunnel asks for a binding this node has not seen yet).
 * Subscribers hear only real changes, so listeners are not reconciled for nothing.
 */
export class StoreBindingDirectory implements BindingDirectory {
  readonly #options: StoreBindingDirectoryOptions;
  readonly #inner = new StaticBindingDirectory();
  #signature = '';
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;
  #next: Promise<void> | undefined;

  constructor(options: StoreBindingDirectoryOptions) {
    this.#options = options;
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
   * refresh re-reads the store. Calls during a refresh coalesce into one more read after it, so a
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

  async #load(): Promise<void> {
    const served = await this.#options.store.listServedReservations();
    const bindings = served.flatMap((s): EdgeBinding[] => {
      const binding = bindingFromReservation(s, this.#options.addressPorts);
      return binding === undefined ? [] : [binding];
    });
    const signature = JSON.stringify(bindings);
    if (signature === this.#signature) return;
    this.#signature = signature;
    this.#inner.replace(bindings);
  }

  byId(id: string): EdgeBinding | undefined {
    return this.#inner.byId(id);
  }

  byHost(hostname: string): EdgeBinding | undefined {
    return this.#inner.byHost(hostname);
  }

  byPort(port: number): EdgeBinding | undefined {
    return this.#inner.byPort(port);
  }

  byAddress(address: string): EdgeBinding | undefined {
    return this.#inner.byAddress(address);
  }

  list(): readonly EdgeBinding[] {
    return this.#inner.list();
  }

  subscribe(listener: () => void): () => void {
    return this.#inner.subscribe(listener);
  }
}
