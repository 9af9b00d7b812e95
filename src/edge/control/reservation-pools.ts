import { ControlInvalidRequestError } from '../../control-api/index.js';
import { isInAddressPool } from '../../model/index.js';
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
  if (!isInAddressPool(pool, address)) {
    throw new ControlInvalidRequestError(`address ${address} is outside the address pool ${pool}`, 'address');
  }
  return address;
}
