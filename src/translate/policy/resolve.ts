/**
 * resolvePolicy turns a RoutePolicy's spec into graph policies (src/model/policies.ts): Secrets
 * read (basic auth: htpasswd in key `auth`; key auth: a `tuna.dev/key-auth` Secret, every value a
 * key; jwt: a JSON Web Key Set in a Secret or ConfigMap key; oidc: a tuna.dev/oidc Secret's client
 * secret and cookie key), the durations parsed, then every
 * value checked by validatePolicies.
 */
import type { RoutePolicySpec } from '../../crd/index.js';
import type { ClaimRequirement, ExternalAuth, HtpasswdParse, JwksParse, JwksSource, JwtPolicy, OidcPolicy, RoutePolicies } from '../../model/index.js';
import { DEFAULT_JWKS_REFRESH_SECONDS, DEFAULT_JWT_CLOCK_SKEW_SECONDS, DEFAULT_OIDC_COOKIE, DEFAULT_OIDC_DISCOVERY_REFRESH_SECONDS, DEFAULT_OIDC_SESSION_SECONDS, validatePolicies } from '../../model/index.js';
import { resolveServiceBackend } from '../common/backend.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import type { TunaReason } from '../common/reasons.js';
import { parseDuration } from '../gateway/duration.js';
import { KEY_AUTH_SECRET_TYPE, OIDC_SECRET_TYPE } from '../kinds.js';
import type { OidcClientSecret } from '../kinds.js';

/** PolicyProblem is what is wrong with a policy: the condition it goes on, its reason and message. */
export interface PolicyProblem {
  condition: 'Accepted' | 'ResolvedRefs';
  reason: TunaReason;
  message: string;
}

/** ResolvedPolicy is a policy's graph form, or the problems that keep it from applying. */
export type ResolvedPolicy = { kind: 'ok'; policies: RoutePolicies } | { kind: 'invalid'; problems: PolicyProblem[] };

const defaultRealm = 'Authentication Required';

/** DEFAULT_JWKS_KEY is the Secret or ConfigMap key of a JSON Web Key Set when the RoutePolicy names none. */
export const DEFAULT_JWKS_KEY = 'jwks.json';

/** resolvePolicy reads the policy fields of one RoutePolicy of namespace `ns`. */
export function resolvePolicy(id: string, ns: string, spec: RoutePolicySpec, index: SnapshotIndex): ResolvedPolicy {
  const problems: PolicyProblem[] = [];
  const p: RoutePolicies = {};
  const refProblem = (reason: TunaReason, message: string): void => void problems.push({ condition: 'ResolvedRefs', reason, message });
  if (spec.basicAuth) {
    const name = spec.basicAuth.secretRef.name;
    const secret = index.secrets.get(`${ns}/${name}`);
    const parsed = (secret as { authHtpasswd?: HtpasswdParse } | undefined)?.authHtpasswd;
    if (!secret) refProblem('AuthSecretNotFound', `spec.basicAuth.secretRef: Secret ${ns}/${name} not found`);
    else if (!parsed) refProblem('AuthSecretInvalid', `spec.basicAuth.secretRef: Secret ${ns}/${name} has no key auth (htpasswd)`);
    else if (parsed.kind === 'invalid') refProblem('AuthSecretInvalid', `spec.basicAuth.secretRef: Secret ${ns}/${name} key auth: ${parsed.errors.join(', ')}`);
    else p.basicAuth = { realm: spec.basicAuth.realm ?? defaultRealm, users: parsed.users };
  }
  if (spec.keyAuth) {
    const name = spec.keyAuth.secretRef.name;
    const secret = index.secrets.get(`${ns}/${name}`) as { type?: string; keyDigests?: Record<string, string> } | undefined;
    if (!secret) refProblem('AuthSecretNotFound', `spec.keyAuth.secretRef: Secret ${ns}/${name} not found`);
    else if (secret.type !== KEY_AUTH_SECRET_TYPE || !secret.keyDigests) refProblem('AuthSecretInvalid', `spec.keyAuth.secretRef: Secret ${ns}/${name} is not of type ${KEY_AUTH_SECRET_TYPE}`);
    else {
      const digests = [...new Set(Object.values(secret.keyDigests))].sort();
      if (digests.length === 0) refProblem('AuthSecretInvalid', `spec.keyAuth.secretRef: Secret ${ns}/${name} holds no key`);
      else p.keyAuth = { header: spec.keyAuth.header, sha256: digests };
    }
  }
  if (spec.jwt) {
    const jwt = resolveJwt(ns, spec.jwt, index, problems);
    if (jwt) p.jwt = jwt;
  }
  if (spec.oidc) {
    const oidc = resolveOidc(ns, spec.oidc, index, problems);
    if (oidc) p.oidc = oidc;
  }
  if (spec.externalAuth) {
    const auth = resolveExternalAuth(ns, spec.externalAuth, index, problems);
    if (auth) p.externalAuth = auth;
  }
  if (spec.ipAccess) p.ipAccess = { allow: [...(spec.ipAccess.allow ?? [])], deny: [...(spec.ipAccess.deny ?? [])] };
  if (spec.rateLimit) p.rateLimit = { requests: spec.rateLimit.requests, periodSeconds: spec.rateLimit.periodSeconds, burst: spec.rateLimit.burst ?? spec.rateLimit.requests };
  if (spec.httpsRedirect) {
    const code = spec.httpsRedirect.statusCode ?? 308;
    p.httpsRedirect = { statusCode: code as 301 | 302 | 307 | 308, ...(spec.httpsRedirect.port !== undefined ? { port: spec.httpsRedirect.port } : {}) };
  }
  for (const kind of ['requestHeaders', 'responseHeaders'] as const) {
    const m = spec[kind];
    if (m) p[kind] = { set: (m.set ?? []).map((h) => ({ ...h })), add: (m.add ?? []).map((h) => ({ ...h })), remove: [...(m.remove ?? [])] };
  }
  if (spec.maxBodyBytes !== undefined) p.maxBodyBytes = spec.maxBodyBytes;
  if (spec.cors) {
    const c = spec.cors;
    p.cors = {
      allowOrigins: [...c.allowOrigins],
      allowMethods: [...(c.allowMethods ?? [])],
      allowHeaders: [...(c.allowHeaders ?? [])],
      exposeHeaders: [...(c.exposeHeaders ?? [])],
      allowCredentials: c.allowCredentials ?? false,
      maxAgeSeconds: c.maxAgeSeconds ?? 5,
    };
  }
  if (spec.timeout !== undefined) {
    const ms = parseDuration(spec.timeout);
    if (ms === undefined) problems.push({ condition: 'Accepted', reason: 'Invalid', message: `spec.timeout: ${JSON.stringify(spec.timeout)} is not a Gateway API duration (such as 30s, 1m, 500ms)` });
    else p.timeoutMs = ms;
  }
  for (const e of validatePolicies(id, p)) problems.push({ condition: 'Accepted', reason: 'Invalid', message: e.replace(`${id}: policies.`, 'spec.') });
  return problems.length > 0 ? { kind: 'invalid', problems } : { kind: 'ok', policies: p };
}

type ExternalAuthSpec = NonNullable<RoutePolicySpec['externalAuth']>;

/** EXTERNAL_AUTH_TIMEOUT_MS is how long a policy's authorization answer may take when it names no timeout. */
const EXTERNAL_AUTH_TIMEOUT_MS = 10_000;

/**
 * resolveExternalAuth reads `spec.externalAuth`: a Service port of the policy's own namespace
 * that speaks HTTP, asked as Gateway API's ExternalAuth filter asks (200 allows). Undefined when
 * the Service cannot be used (the problem is recorded; the policy then fails closed).
 */
function resolveExternalAuth(ns: string, spec: ExternalAuthSpec, index: SnapshotIndex, problems: PolicyProblem[]): ExternalAuth | undefined {
  const { name, port } = spec.serviceRef;
  const r = resolveServiceBackend(index, ns, name, port);
  if (!r.ok) {
    const reason = r.reason === 'ServiceNotFound' || r.reason === 'ServicePortNotFound' || r.reason === 'ExternalNameService' ? r.reason : 'Invalid';
    problems.push({ condition: 'ResolvedRefs', reason, message: `spec.externalAuth.serviceRef: ${r.message}` });
    return undefined;
  }
  if (r.backend.protocol !== 'http' && r.backend.protocol !== 'h2c' && r.backend.protocol !== 'h2') {
    problems.push({ condition: 'ResolvedRefs', reason: 'Invalid', message: `spec.externalAuth.serviceRef: Service ${ns}/${name} port ${port} speaks ${r.backend.protocol}, not HTTP` });
    return undefined;
  }
  let timeoutMs = EXTERNAL_AUTH_TIMEOUT_MS;
  if (spec.timeout !== undefined) {
    const ms = parseDuration(spec.timeout);
    if (ms === undefined || ms === 0) problems.push({ condition: 'Accepted', reason: 'Invalid', message: `spec.externalAuth.timeout: ${JSON.stringify(spec.timeout)} is not a Gateway API duration above 0 (such as 2s)` });
    else timeoutMs = ms;
  }
  const path = spec.path ?? '';
  const response = (spec.allowedResponseHeaders ?? []).map((h) => h.toLowerCase());
  return {
    backend: { ...r.backend, weight: 1 },
    pathPrefix: path.replace(/\/+$/, ''),
    requestHeaders: (spec.allowedHeaders ?? []).map((h) => h.toLowerCase()),
    responseHeaders: response.length === 0 ? 'all' : response,
    forwardBodyBytes: spec.forwardBodyBytes ?? 0,
    timeoutMs,
    semantics: 'gateway',
  };
}

type JwtSpec = NonNullable<RoutePolicySpec['jwt']>;

/**
 * resolveJwt reads `spec.jwt`: the key set from exactly one of a Secret key, a ConfigMap key (the
 * snapshot holds them parsed, public keys only: src/translate/kinds.ts) or a URL the agent
 * fetches; the durations; the claim requirements (exactly one of equals, contains, scope each).
 * Undefined when no key set could be had (the problem is recorded).
 */
function resolveJwt(ns: string, spec: JwtSpec, index: SnapshotIndex, problems: PolicyProblem[]): JwtPolicy | undefined {
  const invalid = (message: string): void => void problems.push({ condition: 'Accepted', reason: 'Invalid', message });
  const { secretRef, configMapRef, url } = spec.jwks;
  const sources = [secretRef, configMapRef, url].filter((s) => s !== undefined).length;
  let jwks: JwksSource | undefined;
  if (sources !== 1) invalid('spec.jwt.jwks: give exactly one of secretRef, configMapRef and url');
  else if (url !== undefined) {
    const refresh = spec.jwks.refreshInterval === undefined ? DEFAULT_JWKS_REFRESH_SECONDS * 1000 : parseDuration(spec.jwks.refreshInterval);
    if (refresh === undefined || refresh % 1000 !== 0) invalid(`spec.jwt.jwks.refreshInterval: ${JSON.stringify(spec.jwks.refreshInterval)} is not a Gateway API duration in whole seconds (such as 5m)`);
    else jwks = { kind: 'url', url, refreshSeconds: refresh / 1000 };
  } else {
    const kind = secretRef ? 'Secret' : 'ConfigMap';
    const ref = (secretRef ?? configMapRef)!;
    const key = ref.key ?? DEFAULT_JWKS_KEY;
    const field = `spec.jwt.jwks.${secretRef ? 'secretRef' : 'configMapRef'}`;
    const obj = (secretRef ? index.secrets : index.configMaps).get(`${ns}/${ref.name}`) as { jwks?: Record<string, JwksParse> } | undefined;
    const parsed = obj?.jwks?.[key];
    const refProblem = (reason: 'JWKSNotFound' | 'JWKSInvalid', message: string): void => void problems.push({ condition: 'ResolvedRefs', reason, message: `${field}: ${kind} ${ns}/${ref.name} ${message}` });
    if (!obj) refProblem('JWKSNotFound', 'not found');
    else if (!parsed) refProblem('JWKSInvalid', `has no JSON Web Key Set in key ${key} (a JSON object with a "keys" array)`);
    else if (parsed.kind === 'invalid') refProblem('JWKSInvalid', `key ${key}: ${parsed.error}`);
    else jwks = { kind: 'inline', keys: parsed.keys };
  }
  let clockSkewSeconds = DEFAULT_JWT_CLOCK_SKEW_SECONDS;
  if (spec.clockSkew !== undefined) {
    const ms = parseDuration(spec.clockSkew);
    if (ms === undefined || ms % 1000 !== 0) invalid(`spec.jwt.clockSkew: ${JSON.stringify(spec.clockSkew)} is not a Gateway API duration in whole seconds (such as 60s)`);
    else clockSkewSeconds = ms / 1000;
  }
  const require: ClaimRequirement[] = [];
  for (const r of spec.require ?? []) {
    const given = (['equals', 'contains', 'scope'] as const).filter((m) => r[m] !== undefined);
    if (given.length !== 1) invalid(`spec.jwt.require: claim ${r.claim}: give exactly one of equals, contains and scope`);
    else require.push({ claim: r.claim, match: given[0]!, value: r[given[0]!]! });
  }
  // with other problems too, the policy is returned so that validatePolicies names the rest of them
  if (jwks === undefined) return undefined;
  return {
    realm: spec.realm ?? defaultRealm,
    issuers: [...spec.issuers],
    audiences: [...spec.audiences],
    jwks,
    clockSkewSeconds,
    ...(spec.cookie !== undefined ? { cookie: spec.cookie } : {}),
    ...(spec.header !== undefined ? { header: spec.header } : {}),
    claimToHeaders: (spec.claimToHeaders ?? []).map((c) => ({ ...c })),
    require,
  };
}

type OidcSpec = NonNullable<RoutePolicySpec['oidc']>;

/**
 * resolveOidc reads `spec.oidc`: the client secret and cookie key from a Secret of type
 * tuna.dev/oidc of the policy's namespace (keys `client-secret` and `cookie-secret`), the scopes
 * (openid always among them) and the durations. Undefined when the Secret could not be had (the
 * problem is recorded, ResolvedRefs False); messages never quote a secret.
 */
function resolveOidc(ns: string, spec: OidcSpec, index: SnapshotIndex, problems: PolicyProblem[]): OidcPolicy | undefined {
  const invalid = (message: string): void => void problems.push({ condition: 'Accepted', reason: 'Invalid', message });
  const seconds = (field: string, value: string | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    const ms = parseDuration(value);
    if (ms === undefined || ms % 1000 !== 0) {
      invalid(`spec.oidc.${field}: ${JSON.stringify(value)} is not a Gateway API duration in whole seconds (such as 8h)`);
      return fallback;
    }
    return ms / 1000;
  };
  const sessionSeconds = seconds('sessionLifetime', spec.sessionLifetime, DEFAULT_OIDC_SESSION_SECONDS);
  const discoveryRefreshSeconds = seconds('discoveryRefreshInterval', spec.discoveryRefreshInterval, DEFAULT_OIDC_DISCOVERY_REFRESH_SECONDS);
  const name = spec.secretRef.name;
  const secret = index.secrets.get(`${ns}/${name}`) as { type?: string; oidcClient?: OidcClientSecret } | undefined;
  const refProblem = (reason: 'OIDCSecretNotFound' | 'OIDCSecretInvalid', message: string): void => void problems.push({ condition: 'ResolvedRefs', reason, message: `spec.oidc.secretRef: Secret ${ns}/${name} ${message}` });
  if (!secret) return void refProblem('OIDCSecretNotFound', 'not found');
  if (secret.type !== OIDC_SECRET_TYPE || secret.oidcClient === undefined) return void refProblem('OIDCSecretInvalid', `is not of type ${OIDC_SECRET_TYPE}`);
  if (secret.oidcClient.kind === 'invalid') return void refProblem('OIDCSecretInvalid', secret.oidcClient.error);
  return {
    issuer: spec.issuer,
    clientId: spec.clientId,
    clientSecret: secret.oidcClient.clientSecret,
    scopes: [...new Set(['openid', ...(spec.scopes ?? [])])],
    cookieKey: secret.oidcClient.cookieKey,
    cookieName: spec.cookieName ?? DEFAULT_OIDC_COOKIE,
    sessionSeconds,
    discoveryRefreshSeconds,
    claimToHeaders: (spec.claimToHeaders ?? []).map((c) => ({ ...c })),
  };
}
