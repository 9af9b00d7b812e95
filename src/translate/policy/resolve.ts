/**
 * resolvePolicy turns a RoutePolicy's spec into graph policies (src/model/policies.ts): Secrets
 * read (basic auth: htpasswd in key `auth`; key auth: a `tuna.dev/key-auth` Secret, every value a
 * key), the duration parsed, then every value checked by validatePolicies.
 */
import type { RoutePolicySpec } from '../../crd/index.js';
import type { HtpasswdParse, RoutePolicies } from '../../model/index.js';
import { validatePolicies } from '../../model/index.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import type { TunaReason } from '../common/reasons.js';
import { parseDuration } from '../gateway/duration.js';
import { KEY_AUTH_SECRET_TYPE } from '../kinds.js';

/** PolicyProblem is what is wrong with a policy: the condition it goes on, its reason and message. */
export interface PolicyProblem {
  condition: 'Accepted' | 'ResolvedRefs';
  reason: TunaReason;
  message: string;
}

/** ResolvedPolicy is a policy's graph form, or the problems that keep it from applying. */
export type ResolvedPolicy = { kind: 'ok'; policies: RoutePolicies } | { kind: 'invalid'; problems: PolicyProblem[] };

const defaultRealm = 'Authentication Required';

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
