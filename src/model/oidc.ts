import { isJwksUrl, validateClaimHeaders } from './jwt.js';
import type { ClaimHeader } from './jwt.js';

/**
 * The `oidc` route policy (docs/policies.md): a browser without a session is sent to an OpenID
 * Connect provider (authorization code flow with PKCE), comes back to the reserved callback path
 * of the host, and gets an encrypted session cookie; the claims the policy names reach the backend
 * as request headers. Unlike the other policies this one carries two secrets in the graph — the
 * client secret and the cookie key — because the agent itself talks to the provider and seals the
 * cookies; the graph stays in the agent's memory and neither is ever logged.
 */

/** OIDC_PATH_PREFIX starts the paths the oidc policy reserves on a host it protects any route of. */
export const OIDC_PATH_PREFIX = '/.tuna/oidc/';

/** OIDC_CALLBACK_PATH is where the provider sends the browser back (`<scheme>://<host>/.tuna/oidc/callback`). */
export const OIDC_CALLBACK_PATH = '/.tuna/oidc/callback';

/** OIDC_LOGOUT_PATH clears the session (and goes on to the provider's end_session_endpoint when it has one). */
export const OIDC_LOGOUT_PATH = '/.tuna/oidc/logout';

/** DEFAULT_OIDC_DISCOVERY_REFRESH_SECONDS is how often the provider's configuration is fetched again. */
export const DEFAULT_OIDC_DISCOVERY_REFRESH_SECONDS = 3600;

/** DEFAULT_OIDC_SESSION_SECONDS is the longest a session cookie is accepted after its login or last refresh. */
export const DEFAULT_OIDC_SESSION_SECONDS = 8 * 3600;

/** OidcPolicy signs browsers in with an OpenID Connect provider. */
export interface OidcPolicy {
  /** the provider's issuer URL (https, or http to a loopback address); its configuration is at `/.well-known/openid-configuration` below it */
  issuer: string;
  clientId: string;
  /** sent to the token endpoint with HTTP Basic (client_secret_basic) */
  clientSecret: string;
  /** scopes asked for; `openid` is always among them */
  scopes: string[];
  /** the 32-byte key (base64url) that encrypts and authenticates the session cookies (A256GCM) */
  cookieKey: string;
  /** the session cookie's name */
  cookieName: string;
  /** the longest a session is accepted after its login or last refresh, in seconds */
  sessionSeconds: number;
  discoveryRefreshSeconds: number;
  claimToHeaders: ClaimHeader[];
}

/** DEFAULT_OIDC_COOKIE is the session cookie's name when a policy gives none. */
export const DEFAULT_OIDC_COOKIE = 'tuna_oidc';

/** isOidcCookieKey accepts a base64url (or base64) text of exactly 32 bytes. */
export function isOidcCookieKey(text: string): boolean {
  return /^[A-Za-z0-9_\-+/]{43}=?$/.test(text) && Buffer.from(text, 'base64').length === 32;
}

/**
 * parseOidcCookieSecret reads a cookie secret as given in a file or a Secret: 32 bytes as base64 or
 * base64url (43 or 44 characters) or as hex (64 characters), surrounding white space ignored. It
 * returns the key as base64url, or undefined: a short or textual secret is refused rather than
 * stretched, so the key is always a full 256 random bits.
 */
export function parseOidcCookieSecret(text: string): string | undefined {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex').toString('base64url');
  if (/^[A-Za-z0-9_\-+/]{43}=?$/.test(t)) {
    const bytes = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === 32) return bytes.toString('base64url');
  }
  return undefined;
}

/** validateOidc checks an oidc policy; each problem names its field (after `oidc.`), never a secret's value. */
export function validateOidc(p: OidcPolicy, isHeaderName: (n: string) => boolean): string[] {
  const errors: string[] = [];
  const fail = (what: string): void => void errors.push(`oidc.${what}`);
  if (!isJwksUrl(p.issuer)) fail(`issuer: ${JSON.stringify(p.issuer)} is not an https URL (or http to a loopback address)`);
  else if (/[?#]/.test(p.issuer)) fail(`issuer: ${JSON.stringify(p.issuer)} has a query or fragment`);
  if (p.clientId === '' || !/^[\x21-\x7e]+$/.test(p.clientId)) fail('clientId: empty, or not visible ASCII');
  if (p.clientSecret === '' || /[\r\n\0]/.test(p.clientSecret)) fail('clientSecret: empty, or with CR, LF or NUL');
  if (!p.scopes.includes('openid')) fail('scopes: openid missing');
  for (const s of p.scopes) if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s)) fail(`scopes: ${JSON.stringify(s)} is not a scope token (RFC 6749 §3.3)`);
  if (!isOidcCookieKey(p.cookieKey)) fail('cookieKey: not 32 bytes in base64url');
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(p.cookieName)) fail(`cookieName: ${JSON.stringify(p.cookieName)} is not 1-64 letters, digits, _ or -`);
  if (!Number.isInteger(p.sessionSeconds) || p.sessionSeconds < 60 || p.sessionSeconds > 30 * 86400) fail(`sessionSeconds: ${p.sessionSeconds} is not whole seconds from 60 to 2592000`);
  if (!Number.isInteger(p.discoveryRefreshSeconds) || p.discoveryRefreshSeconds < 1 || p.discoveryRefreshSeconds > 86400) fail(`discoveryRefreshSeconds: ${p.discoveryRefreshSeconds} is not whole seconds from 1 to 86400`);
  validateClaimHeaders(p.claimToHeaders, isHeaderName, fail);
  return errors;
}
