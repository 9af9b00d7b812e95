import type { BindingKind, ListenerProtocol, TlsMode } from '../../model/index.js';
import { normalizeHost, wildcardSuffixes } from '../../wire/index.js';

/** AddressPort is one port of a dedicated-address binding and what it speaks (`udp`: a UDP socket, UdpListeners'). */
export interface AddressPort {
  port: number;
  protocol: ListenerProtocol;
}

/** PortTransport is a transport a tcp-port binding's port is opened for at the edge. */
export type PortTransport = 'tcp' | 'udp';

/** EdgeBinding is a binding as the edge routes it. */
export interface EdgeBinding {
  id: string;
  kind: BindingKind;
  /** host: names on the shared HTTP(S) listeners (exact or `*.suffix`) */
  hostnames: string[];
  /** who terminates TLS for this binding's hostnames on the shared HTTPS listener */
  tls: TlsMode;
  /** tcp-port: the edge port (UDP too, see transports) */
  port?: number;
  /**
   * tcp-port: the transports the port is opened for: a TCP listener, a UDP socket, or both
   * (docs/protocol.md §4.6); absent means `['tcp']`
   */
  transports?: readonly PortTransport[];
  /** address: the dedicated IP and its ports */
  address?: string;
  ports?: AddressPort[];
}

/**
 * BindingDirectory answers "which binding is this?" for Host/SNI, port and address. The config
 * file gives StaticBindingDirectory; the store replaces it. `subscribe` reports changes so the
 * edge opens and closes port and address listeners.
 */
export interface BindingDirectory {
  byId(id: string): EdgeBinding | undefined;
  byHost(hostname: string): EdgeBinding | undefined;
  byPort(port: number): EdgeBinding | undefined;
  byAddress(address: string): EdgeBinding | undefined;
  list(): readonly EdgeBinding[];
  subscribe(listener: () => void): () => void;
}

/**
 * BindingIndex holds bindings by id, host, port and address: the one index behind both
 * directories, the config file's (StaticBindingDirectory, built whole) and the store's
 * (src/edge/store-mode/served-bindings.ts, changed one binding at a time so a new reservation
 * costs one entry, not a rebuild of every map; docs/edge-store.md "Change feed"). Host lookup, on
 * the normal form the data plane uses too (src/wire/host-name.ts: lowercase, no port, no trailing
 * dot): the exact name first, then the longest `*.suffix` wildcard that covers it with one or more
 * labels. One or more is the Gateway API's reach and the widest of the APIs; the edge does not
 * know which API a binding came from, so the binding's data plane narrows it (an Ingress wildcard
 * covers one label) and answers a deeper name 404 itself (docs/edge.md "Host names").
 */
export class BindingIndex {
  readonly #byId = new Map<string, EdgeBinding>();
  readonly #exact = new Map<string, EdgeBinding>();
  readonly #wildcard = new Map<string, EdgeBinding>();
  readonly #port = new Map<number, EdgeBinding>();
  readonly #address = new Map<string, EdgeBinding>();
  #list: readonly EdgeBinding[] | undefined;

  /**
   * of indexes a whole set in order, as the config file lists it. A later binding with an id
   * already seen takes the id, and the earlier one keeps its names, ports and address (the config
   * does not refuse a repeated id, and the edge has always served both that way).
   */
  static of(bindings: readonly EdgeBinding[]): BindingIndex {
    const index = new BindingIndex();
    for (const binding of bindings) index.#add(binding);
    return index;
  }

  /** set adds a binding (replacing one of the same id, and every entry of it). */
  set(binding: EdgeBinding): void {
    this.delete(binding.id);
    this.#add(binding);
  }

  #add(binding: EdgeBinding): void {
    this.#byId.set(binding.id, binding);
    for (const name of binding.hostnames) {
      const lower = name.toLowerCase();
      if (lower.startsWith('*.')) this.#wildcard.set(lower.slice(1), binding);
      else this.#exact.set(lower, binding);
    }
    if (binding.kind === 'tcp-port' && binding.port !== undefined) this.#port.set(binding.port, binding);
    if (binding.kind === 'address' && binding.address !== undefined) this.#address.set(binding.address, binding);
    this.#list = undefined;
  }

  /** delete removes a binding and only its own entries. */
  delete(id: string): void {
    const binding = this.#byId.get(id);
    if (binding === undefined) return;
    this.#byId.delete(id);
    for (const name of binding.hostnames) {
      const lower = name.toLowerCase();
      const [map, key] = lower.startsWith('*.') ? [this.#wildcard, lower.slice(1)] : [this.#exact, lower];
      if (map.get(key) === binding) map.delete(key);
    }
    if (binding.port !== undefined && this.#port.get(binding.port) === binding) this.#port.delete(binding.port);
    if (binding.address !== undefined && this.#address.get(binding.address) === binding) this.#address.delete(binding.address);
    this.#list = undefined;
  }

  byId(id: string): EdgeBinding | undefined {
    return this.#byId.get(id);
  }

  byHost(hostname: string): EdgeBinding | undefined {
    const name = normalizeHost(hostname);
    if (name === undefined) return undefined;
    const exact = this.#exact.get(name);
    if (exact !== undefined || this.#wildcard.size === 0) return exact;
    for (const suffix of wildcardSuffixes(name)) {
      const binding = this.#wildcard.get(suffix);
      if (binding !== undefined) return binding;
    }
    return undefined;
  }

  byPort(port: number): EdgeBinding | undefined {
    return this.#port.get(port);
  }

  byAddress(address: string): EdgeBinding | undefined {
    return this.#address.get(address);
  }

  /** list returns every binding; the array is kept until the next change. */
  list(): readonly EdgeBinding[] {
    this.#list ??= [...this.#byId.values()];
    return this.#list;
  }
}

/** StaticBindingDirectory is an in-memory directory (the config file's): a BindingIndex replaced whole. */
export class StaticBindingDirectory implements BindingDirectory {
  #index: BindingIndex;
  readonly #listeners = new Set<() => void>();

  constructor(bindings: readonly EdgeBinding[] = []) {
    this.#index = BindingIndex.of(bindings);
  }

  /** replace swaps the whole set of bindings and notifies subscribers. */
  replace(bindings: readonly EdgeBinding[]): void {
    this.#index = BindingIndex.of(bindings);
    for (const listener of this.#listeners) listener();
  }

  byId(id: string): EdgeBinding | undefined {
    return this.#index.byId(id);
  }

  byHost(hostname: string): EdgeBinding | undefined {
    return this.#index.byHost(hostname);
  }

  byPort(port: number): EdgeBinding | undefined {
    return this.#index.byPort(port);
  }

  byAddress(address: string): EdgeBinding | undefined {
    return this.#index.byAddress(address);
  }

  list(): readonly EdgeBinding[] {
    return this.#index.list();
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** portTransports are the transports a tcp-port binding's port is opened for (absent: TCP only, as before UDP). */
export function portTransports(binding: Pick<EdgeBinding, 'transports'>): readonly PortTransport[] {
  return binding.transports ?? ['tcp'];
}
