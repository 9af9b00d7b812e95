import type { Reservation, ServedChanges, ServedKey, TunnelProtocol } from '../store/index.js';
import { BindingIndex } from '../tunnels/index.js';
import type { AddressPort, EdgeBinding } from '../tunnels/index.js';
import { bindingFromReservation } from './reservation-bindings.js';

/**
 * ServedBindings is the edge's copy of what the store serves: held reservations and their live
 * keys, applied one read of the change feed at a time (Store.listServedChanges), and the bindings
 * they make (src/edge/store-mode/reservation-bindings.ts). Only the reservations a read touches are
 * rebuilt. A key's expiry changes no row, so it is judged by the store's clock of each read: when
 * the earliest expiry has passed, the expired keys go and their reservations are rebuilt. The
 * bindings land in the edge's one BindingIndex (src/edge/tunnels/directory.ts), the config file's
 * too; what is kept here besides is what the index does not need: the reservations and live keys
 * the bindings are made from.
 */
export class ServedBindings {
  readonly index = new BindingIndex();
  readonly #addressPorts: readonly AddressPort[];
  readonly #reservations = new Map<string, Reservation>();
  readonly #keys = new Map<string, ServedKey>();
  readonly #keysOf = new Map<string, Set<string>>();
  readonly #bound = new Map<string, EdgeBinding>();
  #nextExpiry = Number.POSITIVE_INFINITY;

  constructor(addressPorts: readonly AddressPort[]) {
    this.#addressPorts = addressPorts;
  }

  /** apply takes one read of the feed and says whether any binding changed. */
  apply(changes: ServedChanges): boolean {
    const touched = new Set<string>();
    if (changes.isFull) {
      for (const id of this.#bound.keys()) touched.add(id);
      this.#reservations.clear();
      this.#keys.clear();
      this.#keysOf.clear();
      this.#nextExpiry = Number.POSITIVE_INFINITY;
    }
    for (const { reservation, isHeld } of changes.reservations) {
      touched.add(reservation.id);
      if (isHeld) this.#reservations.set(reservation.id, reservation);
      else this.#reservations.delete(reservation.id);
    }
    for (const key of changes.tunnelKeys) {
      this.#dropKey(key.id, touched);
      if (key.isLive && key.expiresAt > changes.now) this.#addKey(key, touched);
    }
    if (changes.now >= this.#nextExpiry) this.#sweepExpired(changes.now, touched);
    let changed = false;
    for (const id of touched) changed = this.#rebind(id) || changed;
    return changed;
  }

  #addKey(key: ServedKey, touched: Set<string>): void {
    this.#keys.set(key.id, key);
    let ids = this.#keysOf.get(key.reservationId);
    if (ids === undefined) this.#keysOf.set(key.reservationId, (ids = new Set()));
    ids.add(key.id);
    this.#nextExpiry = Math.min(this.#nextExpiry, key.expiresAt);
    touched.add(key.reservationId);
  }

  #dropKey(id: string, touched: Set<string>): void {
    const key = this.#keys.get(id);
    if (key === undefined) return;
    this.#keys.delete(id);
    const ids = this.#keysOf.get(key.reservationId);
    ids?.delete(id);
    if (ids?.size === 0) this.#keysOf.delete(key.reservationId);
    touched.add(key.reservationId);
  }

  #sweepExpired(now: number, touched: Set<string>): void {
    let next = Number.POSITIVE_INFINITY;
    for (const key of [...this.#keys.values()]) {
      if (key.expiresAt <= now) this.#dropKey(key.id, touched);
      else next = Math.min(next, key.expiresAt);
    }
    this.#nextExpiry = next;
  }

  #protocolsOf(reservationId: string): TunnelProtocol[] {
    const protocols = new Set<TunnelProtocol>();
    for (const id of this.#keysOf.get(reservationId) ?? []) protocols.add(this.#keys.get(id)!.protocol);
    return [...protocols].sort();
  }

  // Rebuilds one reservation's binding; true when it differs from the one served.
  #rebind(reservationId: string): boolean {
    const reservation = this.#reservations.get(reservationId);
    const next = reservation && bindingFromReservation({ reservation, protocols: this.#protocolsOf(reservationId) }, this.#addressPorts);
    const current = this.#bound.get(reservationId);
    if (JSON.stringify(current) === JSON.stringify(next)) return false;
    // Another reservation may hold the same binding id by now (released, then reserved again).
    if (current !== undefined && this.index.byId(current.id) === current) this.index.delete(current.id);
    if (next === undefined) {
      this.#bound.delete(reservationId);
    } else {
      this.#bound.set(reservationId, next);
      this.index.set(next);
    }
    return true;
  }
}
