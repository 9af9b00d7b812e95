import { createHash, timingSafeEqual } from 'node:crypto';
import type { BasicAuthPolicy } from '../../model/index.js';

/** How many verified credentials a checker remembers (each is one SHA-256 digest). */
const maxRemembered = 1024;

/**
 * BasicAuthChecker verifies `Authorization: Basic …` (RFC 7617) against htpasswd users: bcrypt
 * (`$2y$`, `$2a$`, `$2b$`; bcryptjs, asynchronous so a verification never blocks other streams)
 * or `{SHA}` (unsalted SHA-1, Apache's `htpasswd -s`; compared with `timingSafeEqual`). bcrypt is
 * slow on purpose (tens of milliseconds at cost 10), far too slow to pay on every request of a
 * logged-in browser, so a credential that verified is remembered by its SHA-256 digest (never in
 * clear), at most 1,024 of them, the oldest forgotten first; a failure is never remembered. The
 * memory dies with the checker, which a new route graph replaces.
 */
export class BasicAuthChecker {
  private readonly users: Map<string, string>;
  private readonly verified = new Set<string>();
  /** challenge is the WWW-Authenticate value of a 401 */
  readonly challenge: string;

  constructor(policy: BasicAuthPolicy) {
    this.users = new Map(policy.users.map((u) => [u.name, u.hash]));
    this.challenge = `Basic realm="${policy.realm}", charset="UTF-8"`;
  }

  /** check resolves true when the Authorization header names a user with the right password. */
  async check(authorization: string | string[] | undefined): Promise<boolean> {
    if (typeof authorization !== 'string') return false;
    const m = /^basic +([A-Za-z0-9+/]+=*) *$/i.exec(authorization);
    if (!m) return false;
    const digest = createHash('sha256').update(authorization).digest('base64');
    if (this.verified.has(digest)) return true;
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    const hash = this.users.get(decoded.slice(0, colon));
    if (hash === undefined) return false;
    const isGood = await verifyPassword(decoded.slice(colon + 1), hash);
    if (isGood) this.remember(digest);
    return isGood;
  }

  private remember(digest: string): void {
    if (this.verified.size >= maxRemembered) {
      const oldest = this.verified.values().next();
      if (oldest.done !== true) this.verified.delete(oldest.value);
    }
    this.verified.add(digest);
  }
}

/** verifyPassword checks a password against one supported htpasswd hash. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  if (hash.startsWith('{SHA}')) {
    const want = Buffer.from(hash.slice(5), 'base64');
    const got = createHash('sha1').update(password, 'utf8').digest();
    return want.length === got.length && timingSafeEqual(want, got);
  }
  // Loaded on first use: an agent without basic auth never loads it (issue 13 counts idle RSS).
  const { default: bcrypt } = await import('bcryptjs');
  // `$2y$` (PHP, Apache's htpasswd -B) is the same algorithm as `$2b$`; bcryptjs reads the latter.
  return bcrypt.compare(password, hash.startsWith('$2y$') ? `$2b$${hash.slice(4)}` : hash);
}
