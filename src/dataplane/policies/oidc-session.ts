import type { JWTPayload } from 'jose';
import { loadJose } from './jose.js';

/**
 * Sealed cookies of the oidc policy: a JWT encrypted with jose (JWE compact, `dir` with A256GCM,
 * the policy's 32-byte cookie key). GCM's tag authenticates the whole token, so a cookie that was
 * changed, cut, or sealed with another key does not open; `iss` (the provider), `aud` (the client
 * id) and `use` (session or login) bind a cookie to its policy and purpose, and `exp` ends it.
 */

/** MAX_OIDC_COOKIE_BYTES bounds a sealed cookie's value (browsers keep about 4 KiB per cookie). */
export const MAX_OIDC_COOKIE_BYTES = 3800;

/** Session is what a session cookie holds. */
export interface Session {
  sub: string;
  /** the claims the policy sends as headers, as text */
  claims: Record<string, string>;
  /** Unix seconds when the ID token expired: past it, a refresh (with `refreshToken`) or a new login */
  idExpires: number;
  refreshToken?: string;
  /** the ID token, kept as a hint for the provider's logout when it fits */
  idToken?: string;
  /** Unix seconds when the cookie itself expires (set when a cookie is opened) */
  expires?: number;
}

/** LoginState is what the short-lived login cookie holds while the browser is at the provider. */
export interface LoginState {
  state: string;
  nonce: string;
  verifier: string;
  /** the path and query to go back to */
  returnTo: string;
}

/** CookieSealer seals and opens the cookies of one policy. */
export class CookieSealer {
  private readonly key: Uint8Array;

  constructor(
    cookieKey: string,
    private readonly issuer: string,
    private readonly clientId: string,
    private readonly nowSeconds: () => number,
  ) {
    this.key = new Uint8Array(Buffer.from(cookieKey, 'base64url'));
  }

  sealSession(s: Session, lifetimeSeconds: number): Promise<string> {
    const payload: JWTPayload = { use: 'session', sub: s.sub, c: s.claims, ie: s.idExpires, ...(s.refreshToken === undefined ? {} : { rt: s.refreshToken }), ...(s.idToken === undefined ? {} : { it: s.idToken }) };
    return this.seal(payload, lifetimeSeconds);
  }

  async openSession(value: string): Promise<Session | undefined> {
    const p = await this.open(value, 'session');
    if (p === undefined || typeof p.sub !== 'string' || typeof p.ie !== 'number' || typeof p.c !== 'object' || p.c === null) return undefined;
    const claims: Record<string, string> = {};
    for (const [k, v] of Object.entries(p.c as Record<string, unknown>)) if (typeof v === 'string') claims[k] = v;
    return { sub: p.sub, claims, idExpires: p.ie, ...(typeof p.rt === 'string' ? { refreshToken: p.rt } : {}), ...(typeof p.it === 'string' ? { idToken: p.it } : {}), expires: p.exp! };
  }

  sealLogin(l: LoginState, lifetimeSeconds: number): Promise<string> {
    return this.seal({ use: 'login', st: l.state, n: l.nonce, v: l.verifier, r: l.returnTo }, lifetimeSeconds);
  }

  async openLogin(value: string): Promise<LoginState | undefined> {
    const p = await this.open(value, 'login');
    if (p === undefined || typeof p.st !== 'string' || typeof p.n !== 'string' || typeof p.v !== 'string' || typeof p.r !== 'string') return undefined;
    return { state: p.st, nonce: p.n, verifier: p.v, returnTo: p.r };
  }

  private async seal(payload: JWTPayload, lifetimeSeconds: number): Promise<string> {
    const { EncryptJWT } = await loadJose();
    const now = Math.floor(this.nowSeconds());
    return new EncryptJWT(payload).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).setIssuer(this.issuer).setAudience(this.clientId).setIssuedAt(now).setExpirationTime(now + lifetimeSeconds).encrypt(this.key);
  }

  /** open decrypts and checks a cookie; anything wrong (tampered, another key, expired, another purpose, too large) is undefined. */
  private async open(value: string, use: string): Promise<JWTPayload | undefined> {
    if (value.length > MAX_OIDC_COOKIE_BYTES || value.split('.').length !== 5) return undefined;
    const { jwtDecrypt } = await loadJose();
    try {
      const { payload } = await jwtDecrypt(value, this.key, {
        issuer: this.issuer,
        audience: this.clientId,
        keyManagementAlgorithms: ['dir'],
        contentEncryptionAlgorithms: ['A256GCM'],
        currentDate: new Date(this.nowSeconds() * 1000),
        clockTolerance: 0,
        requiredClaims: ['exp'],
      });
      return payload.use === use ? payload : undefined;
    } catch {
      return undefined;
    }
  }
}

/** cookieValue finds one cookie in a Cookie header (RFC 6265 §5.4: `name=value` pairs separated by `;`). */
export function cookieValue(header: string | string[] | undefined, name: string): string | undefined {
  for (const line of Array.isArray(header) ? header : header === undefined ? [] : [header])
    for (const pair of line.split(';')) {
      const eq = pair.indexOf('=');
      if (eq > 0 && pair.slice(0, eq).trim() === name) {
        const value = pair
          .slice(eq + 1)
          .trim()
          .replace(/^"(.*)"$/, '$1');
        if (value !== '') return value;
      }
    }
  return undefined;
}

/** withoutCookies is a Cookie header without the named cookies (undefined when none is left). */
export function withoutCookies(header: string | string[] | undefined, names: readonly string[]): string | undefined {
  const kept: string[] = [];
  for (const line of Array.isArray(header) ? header : header === undefined ? [] : [header])
    for (const pair of line.split(';')) {
      const eq = pair.indexOf('=');
      const name = (eq > 0 ? pair.slice(0, eq) : pair).trim();
      if (pair.trim() !== '' && !names.includes(name)) kept.push(pair.trim());
    }
  return kept.length === 0 ? undefined : kept.join('; ');
}
