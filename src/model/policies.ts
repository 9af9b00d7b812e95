import { parseCidr } from './ip-address.js';
import { validateJwt } from './jwt.js';
import type { JwtPolicy } from './jwt.js';
import { validateExternalAuth } from './filters.js';
import { validateOidc } from './oidc.js';
import type { OidcPolicy } from './oidc.js';
import type { CorsPolicy, ExternalAuth, HeaderModifier } from './types.js';

/**
 * Route policies (docs/policies.md): access, rate and shape rules the agent's data plane applies to
 * an HTTP request before any backend is called; the edge stays a relay. A route carries its own
 * (`HttpRoute.policies`), a binding carries the defaults of every route it serves
 * (`Binding.policies`); a route's policy of one kind replaces the binding's of that kind
 * (`mergePolicies`). Plain data like the rest of the graph; secrets are kept only as digests.
 */

/** RoutePolicies is the set of policies of a route or a binding; an absent field is no such policy. */
export interface RoutePolicies {
  /** client address allow and deny ranges (the address the edge saw, from the tunnel metadata) */
  ipAccess?: IpAccessPolicy;
  /** answer plain-HTTP requests (the public scheme the edge saw) with a redirect to https */
  httpsRedirect?: HttpsRedirectPolicy;
  /** token bucket per client address: 429 with Retry-After when empty */
  rateLimit?: RateLimitPolicy;
  /** CORS: preflights answered, headers added to responses */
  cors?: CorsPolicy;
  /** HTTP Basic authentication (RFC 7617) against htpasswd entries */
  basicAuth?: BasicAuthPolicy;
  /** a header that must carry one of the accepted keys */
  keyAuth?: KeyAuthPolicy;
  /** a bearer JSON Web Token signed by one of the policy's keys (src/model/jwt.ts) */
  jwt?: JwtPolicy;
  /** an OpenID Connect login for browsers, with an encrypted session cookie (src/model/oidc.ts) */
  oidc?: OidcPolicy;
  /** an authorization Service asked about each request before it is forwarded (Gateway API semantics: 200 allows) */
  externalAuth?: ExternalAuth;
  /** largest request body accepted, in bytes (larger: 413) */
  maxBodyBytes?: number;
  /** request headers set, added and removed before the backend is called */
  requestHeaders?: HeaderModifier;
  /** response headers set, added and removed before the client gets them */
  responseHeaders?: HeaderModifier;
  /** the whole exchange's deadline in milliseconds (expired before response headers: 504) */
  timeoutMs?: number;
}

/** IpAccessPolicy lists CIDR ranges (or single addresses), IPv4 or IPv6. A deny match wins; with an allow list, only its ranges pass. */
export interface IpAccessPolicy {
  allow: string[];
  deny: string[];
}

/** HttpsRedirectPolicy redirects `http` requests to `https` on the same host and path. */
export interface HttpsRedirectPolicy {
  statusCode: 301 | 302 | 307 | 308;
  /** the https port to name in Location; absent: the default (443, not written) */
  port?: number;
}

/** RateLimitPolicy is a token bucket per client address: `requests` tokens per `periodSeconds`, at most `burst` saved up. */
export interface RateLimitPolicy {
  requests: number;
  periodSeconds: number;
  burst: number;
}

/** HtpasswdUser is one htpasswd line: a user name and its hash (bcrypt `$2y$`/`$2a$`/`$2b$`, or `{SHA}`). */
export interface HtpasswdUser {
  name: string;
  hash: string;
}

/** BasicAuthPolicy is HTTP Basic authentication against a list of users. */
export interface BasicAuthPolicy {
  /** the realm named in WWW-Authenticate */
  realm: string;
  users: HtpasswdUser[];
}

/** KeyAuthPolicy requires `header` to carry one of the keys, given as SHA-256 digests (lowercase hex). */
export interface KeyAuthPolicy {
  header: string;
  sha256: string[];
}

/** policyKinds lists the fields of RoutePolicies, in the order the data plane applies them. */
export const policyKinds = [
  'ipAccess',
  'httpsRedirect',
  'rateLimit',
  'cors',
  'basicAuth',
  'keyAuth',
  'jwt',
  'oidc',
  'externalAuth',
  'maxBodyBytes',
  'requestHeaders',
  'responseHeaders',
  'timeoutMs',
] as const satisfies readonly (keyof RoutePolicies)[];

/**
 * mergePolicies gives the policies in force on a route: the binding's defaults with the route's
 * own on top, kind by kind. Undefined when neither has any, so the data plane does no work at all.
 */
export function mergePolicies(binding: RoutePolicies | undefined, route: RoutePolicies | undefined): RoutePolicies | undefined {
  if (binding === undefined) return isEmptyPolicies(route) ? undefined : route;
  if (route === undefined) return isEmptyPolicies(binding) ? undefined : binding;
  const merged: RoutePolicies = { ...binding, ...route };
  return isEmptyPolicies(merged) ? undefined : merged;
}

function isEmptyPolicies(p: RoutePolicies | undefined): boolean {
  return p === undefined || policyKinds.every((k) => p[k] === undefined);
}

/** HtpasswdParse is the outcome of reading htpasswd content: the users, or the problems (one per bad line). */
export type HtpasswdParse = { kind: 'ok'; users: HtpasswdUser[] } | { kind: 'invalid'; errors: string[] };

const bcryptHash = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;
const shaHash = /^\{SHA\}[A-Za-z0-9+/]{27}=$/;

/** isSupportedPasswordHash accepts the hashes the data plane verifies: bcrypt (`$2y$`, `$2a$`, `$2b$`, cost 4–31) and `{SHA}`. */
export function isSupportedPasswordHash(hash: string): boolean {
  return bcryptHash.test(hash) || shaHash.test(hash);
}

/**
 * parseHtpasswd reads htpasswd content (Apache's format: `user:hash` per line; blank lines and
 * `#` comments ignored). Only the hashes tuna verifies are accepted: MD5 (`$apr1$`), crypt(3) and
 * plain text are refused by line number, never silently skipped (a user would be locked out, or
 * worse, believe a route protected that is not).
 */
export function parseHtpasswd(content: string): HtpasswdParse {
  const users: HtpasswdUser[] = [];
  const errors: string[] = [];
  const seen = new Set<string>();
  content.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const colon = line.indexOf(':');
    const where = `line ${i + 1}`;
    if (colon <= 0) return void errors.push(`${where}: expected user:hash`);
    const name = line.slice(0, colon);
    const hash = line.slice(colon + 1);
    if (!isSupportedPasswordHash(hash)) return void errors.push(`${where}: user ${name}: unsupported hash (use bcrypt, htpasswd -B, or {SHA}, htpasswd -s)`);
    if (seen.has(name)) return void errors.push(`${where}: user ${name} appears twice`);
    seen.add(name);
    users.push({ name, hash });
  });
  if (errors.length === 0 && users.length === 0) errors.push('no users');
  return errors.length > 0 ? { kind: 'invalid', errors } : { kind: 'ok', users };
}

const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** isHeaderName accepts an RFC 9110 §5.1 field name (a token). */
export function isHeaderName(name: string): boolean {
  return token.test(name);
}

/** isHeaderValue refuses CR, LF and NUL (RFC 9110 §5.5): a value must not start another header. */
export function isHeaderValue(value: string): boolean {
  return !/[\r\n\0]/.test(value);
}

/** validatePolicies checks one policy set of node `id` (a route or a binding); each problem names the policy and field. */
export function validatePolicies(id: string, p: RoutePolicies): string[] {
  const errors: string[] = [];
  const fail = (what: string): void => void errors.push(`${id}: policies.${what}`);
  if (p.ipAccess) {
    if (p.ipAccess.allow.length + p.ipAccess.deny.length === 0) fail('ipAccess: no range');
    for (const list of ['allow', 'deny'] as const)
      for (const r of p.ipAccess[list]) if (parseCidr(r) === undefined) fail(`ipAccess.${list}: invalid CIDR ${r}`);
  }
  if (p.httpsRedirect) {
    if (![301, 302, 307, 308].includes(p.httpsRedirect.statusCode)) fail(`httpsRedirect.statusCode: ${p.httpsRedirect.statusCode} is not 301, 302, 307 or 308`);
    const port = p.httpsRedirect.port;
    if (port !== undefined && !isWhole(port, 1, 65535)) fail(`httpsRedirect.port: invalid port ${port}`);
  }
  if (p.rateLimit) {
    const { requests, periodSeconds, burst } = p.rateLimit;
    if (!isWhole(requests, 1, 1e9)) fail(`rateLimit.requests: ${requests} is not a whole number from 1`);
    if (!isWhole(periodSeconds, 1, 86400)) fail(`rateLimit.periodSeconds: ${periodSeconds} is not whole seconds from 1 to 86400`);
    if (!isWhole(burst, 1, 1e9)) fail(`rateLimit.burst: ${burst} is not a whole number from 1`);
  }
  if (p.cors && p.cors.allowOrigins.length === 0) fail('cors.allowOrigins: empty');
  if (p.basicAuth) {
    if (!isQuotableRealm(p.basicAuth.realm)) fail('basicAuth.realm: empty, or a quote, backslash or control character');
    if (p.basicAuth.users.length === 0) fail('basicAuth.users: empty');
    for (const u of p.basicAuth.users) {
      if (u.name === '' || u.name.includes(':')) fail(`basicAuth.users: invalid user name ${JSON.stringify(u.name)}`);
      if (!isSupportedPasswordHash(u.hash)) fail(`basicAuth.users: user ${u.name}: unsupported hash`);
    }
  }
  if (p.externalAuth) errors.push(...validateExternalAuth(`${id}: policies.externalAuth`, p.externalAuth));
  if (p.keyAuth) {
    if (!isHeaderName(p.keyAuth.header)) fail(`keyAuth.header: invalid header name ${JSON.stringify(p.keyAuth.header)}`);
    if (p.keyAuth.sha256.length === 0) fail('keyAuth.sha256: empty');
    for (const d of p.keyAuth.sha256) if (!/^[0-9a-f]{64}$/.test(d)) fail('keyAuth.sha256: not a lowercase hex SHA-256 digest');
  }
  if (p.jwt) for (const e of validateJwt(p.jwt, isHeaderName, isQuotableRealm)) fail(e);
  if (p.oidc) for (const e of validateOidc(p.oidc, isHeaderName)) fail(e);
  if (p.maxBodyBytes !== undefined && !isWhole(p.maxBodyBytes, 1, Number.MAX_SAFE_INTEGER)) fail(`maxBodyBytes: ${p.maxBodyBytes} is not a whole number of bytes from 1`);
  for (const kind of ['requestHeaders', 'responseHeaders'] as const) {
    const mod = p[kind];
    if (!mod) continue;
    for (const h of [...mod.set, ...mod.add]) {
      if (!isHeaderName(h.name)) fail(`${kind}: invalid header name ${JSON.stringify(h.name)}`);
      if (!isHeaderValue(h.value)) fail(`${kind}: header ${h.name}: value with CR, LF or NUL`);
    }
    for (const n of mod.remove) if (!isHeaderName(n)) fail(`${kind}: invalid header name ${JSON.stringify(n)}`);
  }
  if (p.timeoutMs !== undefined && !isWhole(p.timeoutMs, 1, 86_400_000)) fail(`timeoutMs: ${p.timeoutMs} is not whole milliseconds from 1 to 86400000`);
  return errors;
}

/** isQuotableRealm accepts a realm that fits a quoted-string as it is (RFC 9110 §5.6.4): no quote, backslash or control character. */
function isQuotableRealm(realm: string): boolean {
  if (realm === '') return false;
  for (let i = 0; i < realm.length; i++) {
    const c = realm.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

function isWhole(n: number, min: number, max: number): boolean {
  return Number.isInteger(n) && n >= min && n <= max;
}
