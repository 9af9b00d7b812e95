import { createPublicKey } from 'node:crypto';
import { isInRange, parseCidr, parseIpAddress } from './ip-address.js';

/**
 * The `jwt` route policy (docs/policies.md): a request must carry a JSON Web Token (RFC 7519)
 * signed by one of the policy's keys, from one of its issuers, for one of its audiences. The keys
 * are public (a JSON Web Key Set, RFC 7517), so they may sit in the graph in clear; a set the agent
 * fetches is named by its URL. Plain data; the data plane verifies with `jose`.
 */

/** JWT_ALGORITHMS are the signature algorithms accepted: no `none`, no HMAC (HS*), whose secret a public key would be. */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** JwtAlgorithm is one of JWT_ALGORITHMS. */
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** PublicJwk is one public signing key of a set: RSA, EC (P-256, P-384, P-521) or OKP (Ed25519); private members never kept. */
export interface PublicJwk {
  kty: 'RSA' | 'EC' | 'OKP';
  kid?: string;
  alg?: JwtAlgorithm;
  use?: 'sig';
  n?: string;
  e?: string;
  crv?: string;
  x?: string;
  y?: string;
}

/** JwksSource is where a policy's keys come from: given in the graph, or fetched by the agent from a URL. */
export type JwksSource = { kind: 'inline'; keys: PublicJwk[] } | { kind: 'url'; url: string; refreshSeconds: number };

/** ClaimRequirement is one condition on a claim: equals a value, an array claim contains it, or a space-separated claim (a scope) contains it. */
export interface ClaimRequirement {
  claim: string;
  match: 'equals' | 'contains' | 'scope';
  value: string;
}

/** ClaimHeader copies a claim (string, number or boolean) into a request header; a client's own copy is always removed. */
export interface ClaimHeader {
  claim: string;
  header: string;
}

/** JwtPolicy requires a valid bearer token on the route. */
export interface JwtPolicy {
  /** the realm named in WWW-Authenticate */
  realm: string;
  /** accepted `iss` values (one must match) */
  issuers: string[];
  /** accepted `aud` values (one must be in the token's) */
  audiences: string[];
  jwks: JwksSource;
  /** leeway for `exp`, `nbf` and `iat`, in seconds */
  clockSkewSeconds: number;
  /** a cookie that may carry the token, besides `Authorization: Bearer` */
  cookie?: string;
  /** a header that may carry the token (its whole value), besides `Authorization: Bearer` */
  header?: string;
  claimToHeaders: ClaimHeader[];
  /** every requirement must hold (else 403) */
  require: ClaimRequirement[];
}

/** DEFAULT_JWT_CLOCK_SKEW_SECONDS is the leeway on `exp`, `nbf` and `iat` when a policy gives none. */
export const DEFAULT_JWT_CLOCK_SKEW_SECONDS = 60;

/** DEFAULT_JWKS_REFRESH_SECONDS is how often a fetched key set is fetched again. */
export const DEFAULT_JWKS_REFRESH_SECONDS = 300;

/** MAX_JWKS_BYTES bounds a key set, in a Secret, a file or a fetched answer. */
export const MAX_JWKS_BYTES = 256 * 1024;

const maxKeys = 100;

/** JwksParse is the outcome of reading a key set: its public signing keys, or what is wrong (never quoting the content). */
export type JwksParse = { kind: 'ok'; keys: PublicJwk[] } | { kind: 'invalid'; error: string };

const curves: Record<string, readonly string[]> = { EC: ['P-256', 'P-384', 'P-521'], OKP: ['Ed25519'] };
const algKty: Record<string, PublicJwk['kty']> = { RS: 'RSA', PS: 'RSA', ES: 'EC', Ed: 'OKP' };
const ecAlgCurve: Record<string, string> = { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' };

/**
 * parseJwks reads a JSON Web Key Set (`{"keys": [...]}`): every key must be a public RSA, EC or
 * OKP (Ed25519) key that Node can import, with an `alg` (if any) of JWT_ALGORITHMS that fits its
 * type and curve. Encryption keys (`use: enc`) are left out; a symmetric (`oct`) key or any other
 * type refuses the whole set, so that a mistake is seen instead of a key silently missing. Private
 * members are dropped. Messages name the key by index and never quote the content.
 */
export function parseJwks(input: string | unknown): JwksParse {
  let doc: unknown = input;
  if (typeof input === 'string') {
    if (Buffer.byteLength(input) > MAX_JWKS_BYTES) return { kind: 'invalid', error: `larger than ${MAX_JWKS_BYTES} bytes` };
    try {
      doc = JSON.parse(input);
    } catch {
      // JSON.parse's message quotes the input: a mistaken Secret key must not reach a status.
      return { kind: 'invalid', error: 'not valid JSON' };
    }
  }
  const list = (doc as { keys?: unknown } | null)?.keys;
  if (typeof doc !== 'object' || doc === null || !Array.isArray(list)) return { kind: 'invalid', error: 'not a JSON Web Key Set (an object with a "keys" array)' };
  if (list.length > maxKeys) return { kind: 'invalid', error: `more than ${maxKeys} keys` };
  const keys: PublicJwk[] = [];
  for (const [i, raw] of list.entries()) {
    const key = publicJwk(raw);
    if (typeof key === 'string') return { kind: 'invalid', error: `key ${i}: ${key}` };
    if (key !== undefined) keys.push(key);
  }
  if (keys.length === 0) return { kind: 'invalid', error: 'no signing key' };
  return { kind: 'ok', keys };
}

/**
 * looksLikeJwks is a cheap first look at a Secret or ConfigMap value (no JSON parse): a JSON object
 * naming "keys", within the size limit. Only such values are read as key sets (parseJwks), so that
 * certificates and other data of the same object are never parsed nor kept.
 */
export function looksLikeJwks(value: string): boolean {
  return value.length <= MAX_JWKS_BYTES && /^\s*\{/.test(value) && value.includes('"keys"');
}

/** jwksOfData reads every value of an object's data that looks like a key set: the key names to their parse (public keys only, or the problem). */
export function jwksOfData(values: Record<string, string | undefined>): Record<string, JwksParse> | undefined {
  let out: Record<string, JwksParse> | undefined;
  for (const [key, value] of Object.entries(values)) if (value !== undefined && looksLikeJwks(value)) (out ??= {})[key] = parseJwks(value);
  return out;
}

/** publicJwk checks one key: the public key, undefined for an encryption key, or what is wrong. */
function publicJwk(raw: unknown): PublicJwk | undefined | string {
  if (typeof raw !== 'object' || raw === null) return 'not an object';
  const k = raw as Record<string, unknown>;
  const text = (name: string): string | undefined => (typeof k[name] === 'string' ? (k[name] as string) : undefined);
  const kty = text('kty');
  if (kty !== 'RSA' && kty !== 'EC' && kty !== 'OKP') return `unsupported key type ${JSON.stringify(String(k.kty ?? '')).slice(0, 20)} (RSA, EC or OKP)`;
  if (k.use !== undefined && k.use !== 'sig') return k.use === 'enc' ? undefined : 'use is neither sig nor enc';
  const crv = text('crv');
  if (kty !== 'RSA' && !curves[kty]!.includes(crv ?? '')) return `${kty} key with curve ${crv ?? '(none)'} (${curves[kty]!.join(', ')})`;
  const alg = text('alg');
  if (alg !== undefined) {
    if (!(JWT_ALGORITHMS as readonly string[]).includes(alg)) return `algorithm ${alg.slice(0, 12)} is not accepted (${JWT_ALGORITHMS.join(', ')})`;
    if (algKty[alg.slice(0, 2)] !== kty || (kty === 'EC' && ecAlgCurve[alg] !== crv)) return `algorithm ${alg} does not fit a ${kty}${crv ? ` ${crv}` : ''} key`;
  }
  const members = kty === 'RSA' ? ['n', 'e'] : kty === 'EC' ? ['crv', 'x', 'y'] : ['crv', 'x'];
  const key: PublicJwk = { kty };
  for (const m of members) {
    const v = text(m);
    if (v === undefined || v === '') return `${m} missing`;
    (key as unknown as Record<string, string>)[m] = v;
  }
  try {
    createPublicKey({ key: { kty, ...Object.fromEntries(members.map((m) => [m, k[m]])) }, format: 'jwk' });
  } catch {
    return 'not a valid public key';
  }
  const kid = text('kid');
  if (kid !== undefined) key.kid = kid;
  if (alg !== undefined) key.alg = alg as JwtAlgorithm;
  if (k.use === 'sig') key.use = 'sig';
  return key;
}

/**
 * isJwksUrl accepts where a key set may be fetched from: https anywhere, plain http only from a
 * loopback address (a local identity provider or a test), since keys fetched in clear could be
 * anyone's.
 */
export function isJwksUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

const loopbackRanges = ['127.0.0.0/8', '::1/128'].map((r) => parseCidr(r)!);

/** isLoopbackHost accepts `localhost` and loopback address literals (a URL's hostname: IPv6 in brackets). */
function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost') return true;
  const address = parseIpAddress(hostname.replace(/^\[(.*)\]$/, '$1'));
  return address !== undefined && loopbackRanges.some((r) => isInRange(address, r));
}

/** claimHeadersRefused are request headers a claim may not set: they route, frame or authenticate the request. */
const claimHeadersRefused = new Set(['host', 'authorization', 'cookie', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'te', 'upgrade', 'keep-alive', 'proxy-connection', 'http2-settings', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'forwarded']);

/** isClaimHeaderAllowed says whether a claim may be copied into header `name` (lowercased). */
export function isClaimHeaderAllowed(name: string): boolean {
  return !claimHeadersRefused.has(name.toLowerCase());
}

/** validateClaimHeaders checks the claim headers of a jwt or oidc policy: header names, none that routes or authenticates the request, none twice. */
export function validateClaimHeaders(list: readonly ClaimHeader[], isHeaderName: (n: string) => boolean, fail: (what: string) => void): void {
  const seen = new Set<string>();
  for (const c of list) {
    if (c.claim === '') fail('claimToHeaders: an empty claim name');
    if (!isHeaderName(c.header)) fail(`claimToHeaders: invalid header name ${JSON.stringify(c.header)}`);
    else if (!isClaimHeaderAllowed(c.header)) fail(`claimToHeaders: header ${c.header} may not be set from a claim`);
    else if (seen.has(c.header.toLowerCase())) fail(`claimToHeaders: header ${c.header} given twice`);
    seen.add(c.header.toLowerCase());
  }
}

/** validateJwt checks a jwt policy; each problem names its field (after `jwt.`). */
export function validateJwt(p: JwtPolicy, isHeaderName: (n: string) => boolean, isQuotable: (s: string) => boolean): string[] {
  const errors: string[] = [];
  const fail = (what: string): void => void errors.push(`jwt.${what}`);
  if (!isQuotable(p.realm)) fail('realm: empty, or a quote, backslash or control character');
  if (p.issuers.length === 0) fail('issuers: empty');
  if (p.audiences.length === 0) fail('audiences: empty');
  for (const list of ['issuers', 'audiences'] as const) if (p[list].some((v) => v === '')) fail(`${list}: an empty value`);
  if (!Number.isInteger(p.clockSkewSeconds) || p.clockSkewSeconds < 0 || p.clockSkewSeconds > 600) fail(`clockSkewSeconds: ${p.clockSkewSeconds} is not whole seconds from 0 to 600`);
  if (p.jwks.kind === 'url') {
    if (!isJwksUrl(p.jwks.url)) fail(`jwks.url: ${JSON.stringify(p.jwks.url)} is not an https URL (or http to a loopback address)`);
    if (!Number.isInteger(p.jwks.refreshSeconds) || p.jwks.refreshSeconds < 1 || p.jwks.refreshSeconds > 86400) fail(`jwks.refreshSeconds: ${p.jwks.refreshSeconds} is not whole seconds from 1 to 86400`);
  } else {
    const parsed = parseJwks({ keys: p.jwks.keys });
    if (parsed.kind === 'invalid') fail(`jwks: ${parsed.error}`);
  }
  if (p.cookie !== undefined && !isHeaderName(p.cookie)) fail(`cookie: invalid cookie name ${JSON.stringify(p.cookie)}`);
  if (p.header !== undefined && !isHeaderName(p.header)) fail(`header: invalid header name ${JSON.stringify(p.header)}`);
  validateClaimHeaders(p.claimToHeaders, isHeaderName, fail);
  for (const r of p.require) {
    if (r.claim === '') fail('require: an empty claim name');
    if (!['equals', 'contains', 'scope'].includes(r.match)) fail(`require: claim ${r.claim}: unknown match ${JSON.stringify(r.match)}`);
    if (r.value === '' || (r.match === 'scope' && /\s/.test(r.value))) fail(`require: claim ${r.claim}: an empty value${r.match === 'scope' ? ' or one with spaces' : ''}`);
  }
  return errors;
}
