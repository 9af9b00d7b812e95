import { isIPv4 } from 'node:net';
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

/** AddressPool is an inclusive range of IPv4 addresses as 32-bit integers. */
export interface AddressPool {
  readonly first: number;
  readonly last: number;
}

function ipv4ToInt(address: string): number {
  return address.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

/** intToIpv4 formats a 32-bit integer as a dotted quad. */
export function intToIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => String(Math.floor(value / 2 ** shift) % 256)).join('.');
}

/** parseAddressPool reads `a.b.c.d/len` or `a.b.c.d-e.f.g.h` (IPv4 only). */
export function parseAddressPool(field: string, text: string): AddressPool {
  const bad = (why: string): never => {
    throw new StoreInvalidInputError(field, `${why}: want an IPv4 CIDR (127.77.0.0/16) or range (127.77.0.1-127.77.0.9)`);
  };
  let pool: AddressPool;
  if (text.includes('/')) {
    const [base = '', lenText = ''] = text.split('/');
    const len = Number(lenText);
    if (!isIPv4(base) || !/^\d{1,2}$/.test(lenText) || len > 32) return bad('bad CIDR');
    const size = 2 ** (32 - len);
    const first = ipv4ToInt(base) - (ipv4ToInt(base) % size);
    // Leave out the network and broadcast addresses of a real subnet (RFC 919/922), keep /31 and /32 whole.
    pool = len <= 30 ? { first: first + 1, last: first + size - 2 } : { first, last: first + size - 1 };
  } else {
    const [a = '', b = ''] = text.split('-');
    if (!isIPv4(a) || !isIPv4(b)) return bad('bad range');
    pool = { first: ipv4ToInt(a), last: ipv4ToInt(b) };
    if (pool.first > pool.last) return bad('range is reversed');
  }
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
  if (!isIPv4(address)) return false;
  const value = ipv4ToInt(address);
  return value >= pool.first && value <= pool.last;
}
