/**
 * The edge's address pool as `GET /v1/edge` reports it (`127.77.0.0/16` or `127.77.0.1-127.77.0.9`),
 * read by the operator to tell whether a Gateway's `spec.addresses` can be asked for: the edge
 * serves an address only from its pool. A CIDR of /30 or wider leaves out its network and broadcast
 * addresses, as the edge's allocator does (docs/edge.md).
 */

const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);

function toInt(ip: string): number {
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

/** rangeOf returns the pool's first and last address as integers, or undefined when the text is not a pool. */
function rangeOf(pool: string): { first: number; last: number } | undefined {
  if (pool.includes('/')) {
    const [base = '', lenText = ''] = pool.split('/');
    const len = Number(lenText);
    if (!IPV4.test(base) || !/^\d{1,2}$/.test(lenText) || len > 32) return undefined;
    const size = 2 ** (32 - len);
    const first = toInt(base) - (toInt(base) % size);
    return len <= 30 ? { first: first + 1, last: first + size - 2 } : { first, last: first + size - 1 };
  }
  const [a = '', b = ''] = pool.split('-');
  if (!IPV4.test(a) || !IPV4.test(b)) return undefined;
  return { first: toInt(a), last: toInt(b) };
}

/** inAddressPool tells whether `ip` (IPv4) is one of the addresses of `pool`. */
export function inAddressPool(pool: string, ip: string): boolean {
  const range = rangeOf(pool);
  if (range === undefined || !IPV4.test(ip)) return false;
  const value = toInt(ip);
  return value >= range.first && value <= range.last;
}
