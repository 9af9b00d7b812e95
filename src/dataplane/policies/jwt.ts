import { hash as digestOf } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { JWT_ALGORITHMS, isHeaderValue } from '../../model/index.js';
import type { ClaimRequirement, JwtPolicy } from '../../model/index.js';
import type { HeaderMap } from '../headers.js';
import { loadJose } from './jose.js';
import type { KeySource, KeyState } from './jwks.js';
import { cookieValue } from './oidc-session.js';

/** JwtVerdict is a jwt check's answer: pass with the claim headers to set, or the local answer that refuses. */
export type JwtVerdict = { kind: 'pass'; claimHeaders: HeaderMap } | { kind: 'refuse'; status: 401 | 403 | 503; body: string; headers: HeaderMap };

/** How many verified tokens a checker remembers (each by its SHA-256 digest, until it expires). */
const maxRemembered = 1024;
/** The longest claim value copied into a header. */
const maxClaimHeaderBytes = 4096;

interface Remembered {
  /** Unix seconds after which the token no longer passes (exp + skew) */
  until: number;
  verdict: JwtVerdict;
  /** the keys it was verified with: a new key set forgets it */
  keys: KeyState;
}

/**
 * JwtChecker verifies a bearer JSON Web Token (RFC 7519) with `jose`: the signature with one of
 * the source's keys (the key type must fit `alg`, which must be one of JWT_ALGORITHMS: never
 * `none` nor HMAC), `iss` one of the issuers, `aud` naming one of the audiences, `exp` required,
 * `exp`, `nbf` and `iat` (not in the future) within the clock skew. The token comes from
 * `Authorization: Bearer`, else from the policy's header or cookie. Refusals follow RFC 6750 §3:
 * no token, 401 with `WWW-Authenticate: Bearer realm="…"`; a bad one, 401 with
 * `error="invalid_token"` and nothing said of which check failed; a claim requirement that does
 * not hold, 403 with `error="insufficient_scope"`; no keys yet (a key set not fetched), 503.
 *
 * `jose` is loaded on the first verification (loadJose). A token that verified is remembered by its SHA-256 digest, with its verdict, until it expires
 * or the key set changes (at most 1,024; the oldest forgotten first), so a client sending the same
 * token again costs a digest and a map lookup instead of a signature verification. A failure is
 * never remembered.
 */
export class JwtChecker {
  private readonly remembered = new Map<string, Remembered>();
  private readonly realm: string;
  /** strip lists the lowercase claim headers: a client's copies are removed from every request forwarded */
  readonly strip: readonly string[];

  constructor(
    private readonly policy: JwtPolicy,
    private readonly source: KeySource,
    private readonly nowSeconds: () => number = () => Date.now() / 1000,
  ) {
    this.realm = `realm="${policy.realm}"`;
    this.strip = policy.claimToHeaders.map((c) => c.header.toLowerCase());
  }

  /** check judges a request's token; it answers at once for a remembered token or none at all. */
  check(headers: Record<string, string | string[] | undefined>): JwtVerdict | Promise<JwtVerdict> {
    const token = this.tokenOf(headers);
    if (token === undefined) return this.refuse(401, 'authentication required\n', `Bearer ${this.realm}`);
    const digest = digestOf('sha256', token, 'base64');
    const prior = this.remembered.get(digest);
    if (prior !== undefined) {
      const state = this.source.keys();
      if (prior.keys === state && this.nowSeconds() <= prior.until) return prior.verdict;
      this.remembered.delete(digest);
    }
    return this.verify(token, digest);
  }

  private async verify(token: string, digest: string): Promise<JwtVerdict> {
    let state = await this.source.keys();
    if (state.kind === 'unavailable') return this.unavailable();
    const { decodeProtectedHeader, jwtVerify } = await loadJose();
    let kid: unknown;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return this.invalid();
    }
    if (typeof kid === 'string' && !state.kids.has(kid)) {
      state = await this.source.refreshFor(kid);
      if (state.kind === 'unavailable') return this.unavailable();
    }
    const { policy } = this;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await state.getKey(), {
        issuer: policy.issuers,
        audience: policy.audiences,
        algorithms: [...JWT_ALGORITHMS],
        clockTolerance: policy.clockSkewSeconds,
        requiredClaims: ['exp'],
      }));
    } catch {
      return this.invalid();
    }
    const now = this.nowSeconds();
    if (typeof payload.iat === 'number' && payload.iat > now + policy.clockSkewSeconds) return this.invalid();
    const verdict: JwtVerdict = policy.require.every((r) => meets(payload[r.claim], r))
      ? { kind: 'pass', claimHeaders: this.claimHeaders(payload) }
      : this.refuse(403, 'forbidden: the token does not grant this\n', `Bearer ${this.realm}, error="insufficient_scope"`);
    this.remember(digest, { until: (payload.exp ?? 0) + policy.clockSkewSeconds, verdict, keys: state });
    return verdict;
  }

  /** tokenOf finds the token: `Authorization: Bearer`, else the policy's header, else its cookie. */
  private tokenOf(headers: Record<string, string | string[] | undefined>): string | undefined {
    const auth = headers.authorization;
    if (typeof auth === 'string') {
      const m = /^bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(auth);
      if (m) return m[1];
    }
    const { header, cookie } = this.policy;
    if (header !== undefined) {
      const v = headers[header.toLowerCase()];
      if (typeof v === 'string' && v.trim() !== '') return v.trim();
    }
    if (cookie !== undefined) return cookieValue(headers.cookie, cookie);
    return undefined;
  }

  private claimHeaders(payload: JWTPayload): HeaderMap {
    const out: HeaderMap = {};
    for (const { claim, header } of this.policy.claimToHeaders) {
      const v = payload[claim];
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue;
      const text = String(v);
      if (isHeaderValue(text) && Buffer.byteLength(text) <= maxClaimHeaderBytes) out[header.toLowerCase()] = text;
    }
    return out;
  }

  private remember(digest: string, entry: Remembered): void {
    if (this.remembered.size >= maxRemembered) {
      const oldest = this.remembered.keys().next();
      if (oldest.done !== true) this.remembered.delete(oldest.value);
    }
    this.remembered.set(digest, entry);
  }

  private invalid(): JwtVerdict {
    return this.refuse(401, 'invalid token\n', `Bearer ${this.realm}, error="invalid_token"`);
  }

  private unavailable(): JwtVerdict {
    return { kind: 'refuse', status: 503, body: 'service unavailable: the token signing keys could not be fetched yet\n', headers: { 'retry-after': '10' } };
  }

  private refuse(status: 401 | 403, body: string, challenge: string): JwtVerdict {
    return { kind: 'refuse', status, body, headers: { 'www-authenticate': challenge } };
  }
}

/** meets says whether a claim satisfies one requirement. */
function meets(claim: unknown, r: ClaimRequirement): boolean {
  switch (r.match) {
    case 'equals':
      return (typeof claim === 'string' || typeof claim === 'number' || typeof claim === 'boolean') && String(claim) === r.value;
    case 'contains':
      return Array.isArray(claim) && claim.some((v) => v === r.value);
    case 'scope':
      return typeof claim === 'string' ? claim.split(' ').includes(r.value) : Array.isArray(claim) && claim.includes(r.value);
  }
}
