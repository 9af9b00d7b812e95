import { isInRange, parseCidr, parseIpAddress } from '../../model/index.js';
import type { IpAccessPolicy, IpRange } from '../../model/index.js';

/**
 * IpFilter decides on the client address the edge saw (`tuna-client-address`, tunnel metadata the
 * edge sets and no client can forge; docs/protocol.md §4), never on X-Forwarded-For. A deny match
 * wins; with an allow list, only its ranges pass. An address that does not parse is refused.
 */
export class IpFilter {
  private readonly allow: IpRange[];
  private readonly deny: IpRange[];

  constructor(policy: IpAccessPolicy) {
    // The graph was validated: every range parses.
    this.allow = policy.allow.map((r) => parseCidr(r)).filter((r): r is IpRange => r !== undefined);
    this.deny = policy.deny.map((r) => parseCidr(r)).filter((r): r is IpRange => r !== undefined);
  }

  /** isAllowed says whether a client address passes. */
  isAllowed(clientAddress: string): boolean {
    const address = parseIpAddress(clientAddress);
    if (address === undefined) return false;
    if (this.deny.some((r) => isInRange(address, r))) return false;
    return this.allow.length === 0 || this.allow.some((r) => isInRange(address, r));
  }
}
