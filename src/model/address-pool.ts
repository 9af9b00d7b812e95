/**
 * IPv4 address pools as the edge hands addresses out and the operator checks them: a CIDR
 * (`127.77.0.0/16`) or an inclusive range (`127.77.0.1-127.77.0.9`). A CIDR of /30 or wider leaves
 * out its network and broadcast addresses (RFC 919/922); /31 and /32 stay whole. One reading for
 * the store's allocator, the control API's checks and the operator's `spec.addresses` check, so
 * the three never disagree on what an address pool holds.
 */

/** AddressPoolRange is an inclusive range of IPv4 addresses as 32-bit integers. */
export interface AddressPoolRange {
  readonly first: number;
  readonly last: number;
}

/** AddressPoolProblem says why a text is not an address pool. */
export type AddressPoolProblem = 'bad CIDR' | 'bad range' | 'range is reversed';

const OCTET = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${OCTET}(\\.${OCTET}){3}$`);

/** ipv4ToInt reads a dotted quad as a 32-bit integer, or undefined when it is not one. */
export function ipv4ToInt(text: string): number | undefined {
  if (!IPV4.test(text)) return undefined;
  return text.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

/** intToIpv4 formats a 32-bit integer as a dotted quad. */
export function intToIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => String(Math.floor(value / 2 ** shift) % 256)).join('.');
}

/** readAddressPool reads a pool's text: its range, or the problem that makes it none. */
export function readAddressPool(text: string): AddressPoolRange | { problem: AddressPoolProblem } {
  if (text.includes('/')) {
    const [base = '', lenText = ''] = text.split('/');
    const start = ipv4ToInt(base);
    const len = Number(lenText);
    if (start === undefined || !/^\d{1,2}$/.test(lenText) || len > 32) return { problem: 'bad CIDR' };
    const size = 2 ** (32 - len);
    const first = start - (start % size);
    return len <= 30 ? { first: first + 1, last: first + size - 2 } : { first, last: first + size - 1 };
  }
  const [a = '', b = ''] = text.split('-');
  const first = ipv4ToInt(a);
  const last = ipv4ToInt(b);
  if (first === undefined || last === undefined) return { problem: 'bad range' };
  if (first > last) return { problem: 'range is reversed' };
  return { first, last };
}

/** isInAddressPool tells whether `address` (IPv4) is one of the addresses of `pool`; false for a pool that does not parse. */
export function isInAddressPool(pool: string, address: string): boolean {
  const range = readAddressPool(pool);
  const value = ipv4ToInt(address);
  return !('problem' in range) && value !== undefined && value >= range.first && value <= range.last;
}
