import { hash as digestOf, timingSafeEqual } from 'node:crypto';
import type { KeyAuthPolicy } from '../../model/index.js';

/**
 * KeyChecker accepts a request whose key header carries one of the accepted keys. Keys are held
 * as SHA-256 digests and compared digest to digest with `timingSafeEqual`, every accepted digest
 * visited (no early exit), so neither the key's length nor its first wrong byte shows in timing.
 */
export class KeyChecker {
  private readonly digests: Buffer[];
  /** header is the lowercase header name */
  readonly header: string;

  constructor(policy: KeyAuthPolicy) {
    this.header = policy.header.toLowerCase();
    this.digests = policy.sha256.map((d) => Buffer.from(d, 'hex'));
  }

  /** isAccepted checks the header's value (one value; a repeated header is refused). */
  isAccepted(value: string | string[] | undefined): boolean {
    if (typeof value !== 'string' || value === '') return false;
    const digest = digestOf('sha256', value, 'buffer');
    let isMatch = false;
    for (const d of this.digests) isMatch = timingSafeEqual(d, digest) || isMatch;
    return isMatch;
  }
}
