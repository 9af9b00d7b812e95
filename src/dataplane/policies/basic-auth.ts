import { createHash, hash as digestOf, timingSafeEqual } from 'node:crypto';
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

  /**
   * check says whether the Authorization header names a user with the right password. It answers
   * at once (no promise) unless a bcrypt verification has to run: a remembered credential, a
   * malformed header, an unknown user and `{SHA}` cost no microtask on the request path.
   */
  check(authorization: string | string[] | undefined): boolean | Promise<boolean> {
    if (typeof authorization !== 'string') return false;
    const m = /^basic +([A-Za-z0-9+/]+=*) *$/i.exec(authorization);
    if (!m) return false;
    // crypto.hash is the one-shot form: about a third of createHash's cost per request.
    const digest = digestOf('sha256', authorization, 'base64');
    if (this.verified.has(digest)) return true;
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    const hash = this.users.get(decoded.slice(0, colon));
    if (hash === undefined) return false;
    const verdict = verifyPassword(decoded.slice(colon + 1), hash);
    if (typeof verdict === 'boolean') return verdict && this.remember(digest);
    return verdict.then((isGood) => isGood && this.remember(digest));
  }

  /** remember keeps a verified credential's digest (and returns true, for the caller's expression). */
  private remember(digest: string): true {
    if (this.verified.size >= maxRemembered) {
      const oldest = this.verified.values().next();
      if (oldest.done !== true) this.verified.delete(oldest.value);
    }
    this.verified.add(digest);
    return true;
  }
}

/** verifyPassword checks a password against one supported htpasswd hash: at once for `{SHA}`, asynchronously for bcrypt. */
export function verifyPassword(password: string, hash: string): boolean | Promise<boolean> {
  if (hash.startsWith('{SHA}')) {
    const want = Buffer.from(hash.slice(5), 'base64');
    const got = createHash('sha1').update(password, 'utf8').digest();
    return want.length === got.length && timingSafeEqual(want, got);
  }
  return verifyBcrypt(password, hash);
}

async function verifyBcrypt(password: string, hash: string): Promise<boolean> {
  // Loaded on first use: an agent without basic auth never loads it (idle RSS: docs/tunnel-performance.md §7.2).
  const { default: bcrypt } = await import('bcryptjs');
  // `$2y$` (PHP, Apache's htpasswd -B) is the same algorithm as `$2b$`; bcryptjs reads the latter.
  return bcrypt.compare(password, hash.startsWith('$2y$') ? `$2b$${hash.slice(4)}` : hash);
}
