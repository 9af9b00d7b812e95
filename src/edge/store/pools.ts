import { intToIpv4, ipv4ToInt, readAddressPool } from '../../model/index.js';
import type { AddressPoolRange } from '../../model/index.js';
import { StoreInvalidInputError } from './errors.js';
import type { PortPool } from './store.js';
import { checkPort } from './validate.js';

/**
 * Allocation from pools: the lowest free port of a range, the lowest free IPv4 address of a CIDR
 * or range. The caller holds the allocation lock of its transaction (see sql-store.ts), so the
 * "free" set it passes in cannot change before the insert.
 */

/** MAX_POOL_SIZE bounds a pool so a scan stays cheap (a /16 of addresses, every TCP port). */
export const MAX_POOL_SIZE = 65536;

/** checkPortPool validates an inclusive port range. */
export function checkPortPool(field: string, pool: PortPool): PortPool {
  checkPort(`${field}.first`, pool.first);
  checkPort(`${field}.last`, pool.last);
  if (pool.first > pool.last) throw new StoreInvalidInputError(field, 'first must not exceed last');
  return pool;
}

/** pickFreePort returns the lowest port of the pool not in `used`, or undefined when none is left. */
export function pickFreePort(pool: PortPool, used: ReadonlySet<number>): number | undefined {
  for (let port = pool.first; port <= pool.last; port++) if (!used.has(port)) return port;
  return undefined;
}

/** AddressPool is an inclusive range of IPv4 addresses as 32-bit integers (the model's reading of a pool). */
export type AddressPool = AddressPoolRange;

export { intToIpv4 };

/** parseAddressPool reads `a.b.c.d/len` or `a.b.c.d-e.f.g.h` (IPv4 only), as the model's readAddressPool does, and bounds its size. */
export function parseAddressPool(field: string, text: string): AddressPool {
  const bad = (why: string): never => {
    throw new StoreInvalidInputError(field, `${why}: want an IPv4 CIDR (127.77.0.0/16) or range (127.77.0.1-127.77.0.9)`);
  };
  const pool = readAddressPool(text);
  if ('problem' in pool) return bad(pool.problem);
  if (pool.last - pool.first + 1 > MAX_POOL_SIZE) return bad(`more than ${MAX_POOL_SIZE} addresses`);
  return pool;
}

/** pickFreeAddress returns the lowest address of the pool not in `used`, or undefined. */
export function pickFreeAddress(pool: AddressPool, used: ReadonlySet<string>): string | undefined {
  for (let value = pool.first; value <= pool.last; value++) {
    const address = intToIpv4(value);
    if (!used.has(address)) return address;
  }
  return undefined;
}

/** addressInPool reports whether a canonical IPv4 address lies inside a pool. */
export function addressInPool(pool: AddressPool, address: string): boolean {
  const value = ipv4ToInt(address);
  return value !== undefined && value >= pool.first && value <= pool.last;
}
