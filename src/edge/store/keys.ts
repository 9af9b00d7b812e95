import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Key tokens: `tuna_ak_<id>_<secret>` (account API keys) and `tuna_tk_<id>_<secret>` (tunnel keys).
 * The id is public and indexes the record; the secret is 32 random bytes (256 bits) and only its
 * SHA-256 digest is stored.
 *
 * Why a fast hash is enough here: slow hashes (scrypt, argon2) exist to make guessing
 * low-entropy human passwords expensive after a database leak. These secrets are generated, never
 * chosen, so a leaked digest leaves 2^256 candidates: no number of fast guesses gets near that.
 * A fast hash also keeps authentication cheap, so a flood of bad keys cannot burn the edge's CPU
 * (OWASP Password Storage Cheat Sheet; the same reasoning as GitHub's and Stripe's API tokens).
 * The digest comparison is constant-time so response timing reveals nothing about the stored hash.
 */

/** KeyKind tells an account API key from a tunnel key by its prefix. */
export type KeyKind = 'api' | 'tunnel';

const PREFIX: Record<KeyKind, string> = { api: 'tuna_ak_', tunnel: 'tuna_tk_' };
const ID_PATTERN = /^[0-9a-f]{16}$/;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** newRecordId returns a random 64-bit id in hex (never contains `_`, so tokens split cleanly). */
export function newRecordId(): string {
  return randomBytes(8).toString('hex');
}

/** newSecret returns 256 random bits, base64url without padding (43 characters). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** formatToken joins a kind, id and secret into the token handed to the user once. */
export function formatToken(kind: KeyKind, id: string, secret: string): string {
  return `${PREFIX[kind]}${id}_${secret}`;
}

/** ParsedToken is a token split into its public id and its secret. */
export interface ParsedToken {
  readonly id: string;
  readonly secret: string;
}

/** parseToken splits a token of the given kind, or returns undefined when it is malformed. */
export function parseToken(kind: KeyKind, token: string): ParsedToken | undefined {
  const prefix = PREFIX[kind];
  if (!token.startsWith(prefix)) return undefined;
  const rest = token.slice(prefix.length);
  const cut = rest.indexOf('_');
  if (cut < 0) return undefined;
  const id = rest.slice(0, cut);
  const secret = rest.slice(cut + 1);
  if (!ID_PATTERN.test(id) || !SECRET_PATTERN.test(secret)) return undefined;
  return { id, secret };
}

/** hashSecret returns the hex SHA-256 digest of a secret: what the store keeps. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** secretMatches compares a presented secret with a stored digest in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = createHash('sha256').update(secret, 'utf8').digest();
  const stored = Buffer.from(storedHash, 'hex');
  // Both are 32-byte digests, so the length check leaks nothing about the secret.
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}
