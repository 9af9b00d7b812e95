import type { Reservation } from '../store/index.js';

/** ReservationLookup is the part of the edge store that knows reserved hostnames. */
export interface ReservationLookup {
  findReservation(kind: 'domain', value: string): Promise<Reservation | undefined>;
}

/**
 * isReservedHostname is the default issuance policy: a held, verified domain reservation. An
 * unreserved name never starts an order, so a stranger's SNI cannot spend the CA's rate limits.
 */
export function isReservedHostname(store: ReservationLookup): (hostname: string) => Promise<boolean> {
  return async (hostname) => (await store.findReservation('domain', hostname.toLowerCase()))?.verified === true;
}
