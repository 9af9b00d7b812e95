import { isIPv4 } from 'node:net';
import { ControlInvalidRequestError } from '../../control-api/index.js';
import type { PortPool } from '../../control-api/index.js';

/**
 * A tenant must not reserve a port or address the edge does not hand out. A
 * reservation on the edge's own public port made `tuna edge` exit with EADDRINUSE at its next start,
 * taking down the API that could undo it. So a specific port or address must lie inside the
 * configured pool, and a port must not be one the edge listens on itself.
 */

/** PoolRules are the edge's pools and its own listener ports (read per request: port 0 binds late). */
export interface PoolRules {
  readonly portPool?: PortPool;
  readonly addressPool?: string;
  /** the bound ports of the edge's own listeners (tunnel/control, HTTP, HTTPS, metrics) */
  readonly ownPorts?: () => readonly number[];
}

/** checkPortInPool refuses a port outside the pool, or one of the edge's own listeners, naming field `port`. */
export function checkPortInPool(port: number, rules: PoolRules): number {
  const pool = rules.portPool;
  if (pool === undefined) {
    throw new ControlInvalidRequestError('this edge has no TCP port pool (store.portPool): no port can be reserved', 'port');
  }
  if (!Number.isInteger(port) || port < pool.first || port > pool.last) {
    throw new ControlInvalidRequestError(`port ${port} is outside the TCP port pool ${pool.first}-${pool.last}`, 'port');
  }
  if ((rules.ownPorts?.() ?? []).includes(port)) {
    throw new ControlInvalidRequestError(`port ${port} is one of the edge's own listeners, not in the pool it hands out`, 'port');
  }
  return port;
}

/** checkAddressInPool refuses an address outside the IPv4 address pool, naming field `address`. */
export function checkAddressInPool(address: string, rules: PoolRules): string {
  const pool = rules.addressPool;
  if (pool === undefined) {
    throw new ControlInvalidRequestError('this edge has no address pool (store.addressPool): no address can be reserved', 'address');
  }
  const range = parseIpv4Pool(pool);
  const value = isIPv4(address) ? ipv4ToInt(address) : undefined;
  if (range === undefined || value === undefined || value < range.first || value > range.last) {
    throw new ControlInvalidRequestError(`address ${address} is outside the address pool ${pool}`, 'address');
  }
  return address;
}

/** isAddressInPool reports whether an IPv4 address lies inside a pool (CIDR or range); false for a pool that does not parse. */
export function isAddressInPool(address: string, pool: string): boolean {
  const range = parseIpv4Pool(pool);
  if (range === undefined || !isIPv4(address)) return false;
  const value = ipv4ToInt(address);
  return value >= range.first && value <= range.last;
}

function ipv4ToInt(address: string): number {
  return address.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

// The same reading as the store's parseAddressPool (network and broadcast left out of a CIDR up to /30).
function parseIpv4Pool(text: string): { first: number; last: number } | undefined {
  if (text.includes('/')) {
    const [base = '', lenText = ''] = text.split('/');
    const len = Number(lenText);
    if (!isIPv4(base) || !/^\d{1,2}$/.test(lenText) || len > 32) return undefined;
    const size = 2 ** (32 - len);
    const first = ipv4ToInt(base) - (ipv4ToInt(base) % size);
    return len <= 30 ? { first: first + 1, last: first + size - 2 } : { first, last: first + size - 1 };
  }
  const [a = '', b = ''] = text.split('-');
  if (!isIPv4(a) || !isIPv4(b)) return undefined;
  return { first: ipv4ToInt(a), last: ipv4ToInt(b) };
}
