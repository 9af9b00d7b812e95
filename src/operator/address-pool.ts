/**
 * The edge's address pool as `GET /v1/edge` reports it (`127.77.0.0/16` or `127.77.0.1-127.77.0.9`),
 * read by the operator to tell whether a Gateway's `spec.addresses` can be asked for: the edge
 * serves an address only from its pool. A CIDR of /30 or wider leaves out its network and broadcast
 * addresses, as the edge's allocator does (docs/edge.md).
 */

import { isInAddressPool } from '../model/index.js';

/** inAddressPool tells whether `ip` (IPv4) is one of the addresses of `pool` (the model's one reading of a pool). */
export function inAddressPool(pool: string, ip: string): boolean {
  return isInAddressPool(pool, ip);
}
