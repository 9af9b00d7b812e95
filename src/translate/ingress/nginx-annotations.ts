import type { V1Ingress } from '@kubernetes/client-node';
import type { CorsPolicy, ExternalAuth, HtpasswdParse, RoutePolicies } from '../../model/index.js';
import { compareStrings, validatePolicies } from '../../model/index.js';
import { resolveServiceBackend } from '../common/backend.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { namespaceOf } from '../common/meta.js';
import type { TunaReason } from '../common/reasons.js';
import type { Problem } from '../common/report.js';

/**
 * ingress-nginx annotations: the most used `nginx.ingress.kubernetes.io/` annotations
 * of an Ingress become route policies on its routes (docs/migrate-from-ingress-nginx.md). Every
 * other annotation of the prefix is named in a Warning event and ignored. Annotations whose loss
 * would leave a route less protected than its author meant — a `*-snippet`, an authentication that
 * cannot be set up, an IP range that does not parse — hold back all the routes of the Ingress
 * (fail closed, as ingress-nginx denies a location whose auth cannot be read); any other bad value
 * is ignored with a Warning event. Nothing here touches another Ingress.
 */

/** nginxPrefix is the annotation prefix of ingress-nginx. */
export const nginxPrefix = 'nginx.ingress.kubernetes.io/';

/** NginxAnnotations is what the annotations of one Ingress ask for. */
export interface NginxAnnotations {
  /** policies for every route of the Ingress (the HTTPS redirect is decided per host, below) */
  policies: RoutePolicies;
  /** `ssl-redirect: "true"`: redirect http to https on hosts served with a certificate */
  sslRedirect: boolean;
  /** `force-ssl-redirect: "true"`: redirect http to https on every host */
  forceSslRedirect: boolean;
  /** ignored annotations and ignored bad values, for Warning events only */
  warnings: { reason: TunaReason; message: string }[];
  /** reasons to publish none of the Ingress's routes */
  holdBack: Problem[];
  /** `auth-url` (with `auth-signin`, `auth-response-headers`): every route of the Ingress asks this Service first */
  externalAuth?: ExternalAuth;
}

/** The annotations read, without the prefix. */
const known = new Set([
  'ssl-redirect',
  'force-ssl-redirect',
  'auth-type',
  'auth-secret',
  'auth-secret-type',
  'auth-realm',
  'auth-url',
  'auth-signin',
  'auth-response-headers',
  'limit-rps',
  'limit-rpm',
  'limit-burst-multiplier',
  'proxy-body-size',
  'whitelist-source-range',
  'allowlist-source-range',
  'denylist-source-range',
  'enable-cors',
  'cors-allow-origin',
  'cors-allow-methods',
  'cors-allow-headers',
  'cors-expose-headers',
  'cors-allow-credentials',
  'cors-max-age',
  'proxy-read-timeout',
  'x-forwarded-prefix',
]);

// ingress-nginx's defaults (docs: annotations, "Enable CORS").
const corsDefaults = {
  methods: 'GET, PUT, POST, DELETE, PATCH, OPTIONS',
  headers: 'DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization',
  maxAge: 1728000,
};
const defaultBurstMultiplier = 5;
const defaultRealm = 'Authentication Required';

/** authSecretRef names the Secret of an Ingress's `auth-secret` annotation in its own namespace, if it asks for basic auth. */
export function authSecretRef(ingress: V1Ingress): { namespace: string; name: string } | undefined {
  const a = ingress.metadata?.annotations ?? {};
  const name = a[`${nginxPrefix}auth-secret`];
  if (a[`${nginxPrefix}auth-type`] !== 'basic' || !name) return undefined;
  const parsed = splitSecretName(name, namespaceOf(ingress));
  return parsed.namespace === namespaceOf(ingress) && parsed.name !== '' ? parsed : undefined;
}

function splitSecretName(value: string, own: string): { namespace: string; name: string } {
  const slash = value.indexOf('/');
  return slash < 0 ? { namespace: own, name: value } : { namespace: value.slice(0, slash), name: value.slice(slash + 1) };
}

/** readNginxAnnotations reads the `nginx.ingress.kubernetes.io/` annotations of one Ingress. */
export function readNginxAnnotations(ingress: V1Ingress, index: SnapshotIndex): NginxAnnotations {
  const out: NginxAnnotations = { policies: {}, sslRedirect: false, forceSslRedirect: false, warnings: [], holdBack: [] };
  const all = ingress.metadata?.annotations ?? {};
  const a = new Map<string, string>();
  for (const [k, v] of Object.entries(all).sort(([x], [y]) => compareStrings(x, y))) {
    if (!k.startsWith(nginxPrefix)) continue;
    const name = k.slice(nginxPrefix.length);
    if (name.endsWith('-snippet'))
      out.holdBack.push({
        condition: 'Accepted',
        reason: 'SnippetRefused',
        message: `annotation ${k}: tuna refuses nginx configuration snippets (raw configuration, ingress-nginx's worst security hole, CVE-2021-25742, CVE-2025-1974); remove it and express what it did with the supported annotations; no route of this Ingress is published`,
      });
    else if (known.has(name)) a.set(name, v);
    else out.warnings.push({ reason: 'UnsupportedAnnotation', message: `annotation ${k}: not supported by tuna, ignored` });
  }
  const ignore = (name: string, why: string): void => void out.warnings.push({ reason: 'InvalidAnnotation', message: `annotation ${nginxPrefix}${name}: ${why}; ignored` });
  const refuse = (reason: TunaReason, name: string, why: string): void =>
    void out.holdBack.push({ condition: reason.startsWith('AuthSecret') || reason.startsWith('Service') || reason === 'ExternalNameService' ? 'ResolvedRefs' : 'Accepted', reason, message: `annotation ${nginxPrefix}${name}: ${why}; no route of this Ingress is published` });
  /** checked sets one policy kind only if validatePolicies accepts it. */
  const checked = <K extends keyof RoutePolicies>(name: string, kind: K, value: RoutePolicies[K], onError: (why: string) => void): void => {
    const errors = validatePolicies(`annotation ${nginxPrefix}${name}`, { [kind]: value });
    if (errors.length === 0) out.policies[kind] = value;
    else onError(errors.map((e) => e.replace(/^annotation \S+: /, '')).join('; '));
  };

  for (const name of ['ssl-redirect', 'force-ssl-redirect'] as const) {
    const v = a.get(name);
    if (v === undefined) continue;
    const b = parseBool(v);
    if (b === undefined) ignore(name, `${JSON.stringify(v)} is not true or false`);
    else if (name === 'ssl-redirect') out.sslRedirect = b;
    else out.forceSslRedirect = b;
  }

  readAuth(a, ingress, index, out, refuse, checked);
  readExternalAuth(a, ingress, index, out, refuse, ignore);
  readRateLimit(a, ignore, checked);
  readBodySize(a, ignore, checked);

  const allow = [a.get('whitelist-source-range'), a.get('allowlist-source-range')].filter((v): v is string => v !== undefined);
  const deny = a.get('denylist-source-range');
  if (allow.length > 0 || deny !== undefined) {
    const ipAccess = { allow: allow.flatMap(splitList), deny: deny === undefined ? [] : splitList(deny) };
    const which = allow.length > 0 && deny !== undefined ? 'whitelist-source-range/denylist-source-range' : allow.length > 0 ? 'whitelist-source-range' : 'denylist-source-range';
    checked(which, 'ipAccess', ipAccess, (why) => refuse('InvalidAnnotation', which, why));
  }

  if (a.has('enable-cors')) {
    const enabled = parseBool(a.get('enable-cors') ?? '');
    if (enabled === undefined) ignore('enable-cors', `${JSON.stringify(a.get('enable-cors'))} is not true or false`);
    else if (enabled) {
      const credentials = a.has('cors-allow-credentials') ? parseBool(a.get('cors-allow-credentials') ?? '') : true;
      const maxAge = a.has('cors-max-age') ? parseWhole(a.get('cors-max-age') ?? '') : corsDefaults.maxAge;
      if (credentials === undefined) ignore('cors-allow-credentials', 'not true or false');
      if (maxAge === undefined) ignore('cors-max-age', 'not a whole number of seconds');
      const cors: CorsPolicy = {
        allowOrigins: splitList(a.get('cors-allow-origin') ?? '*'),
        allowMethods: splitList(a.get('cors-allow-methods') ?? corsDefaults.methods).map((m) => m.toUpperCase()),
        allowHeaders: splitList(a.get('cors-allow-headers') ?? corsDefaults.headers),
        exposeHeaders: splitList(a.get('cors-expose-headers') ?? ''),
        allowCredentials: credentials ?? true,
        maxAgeSeconds: maxAge ?? corsDefaults.maxAge,
      };
      checked('enable-cors', 'cors', cors, (why) => ignore('enable-cors', why));
    }
  }

  const read = a.get('proxy-read-timeout');
  if (read !== undefined) {
    const s = parseWhole(read);
    if (s === undefined || s === 0) ignore('proxy-read-timeout', `${JSON.stringify(read)} is not a whole number of seconds from 1`);
    else checked('proxy-read-timeout', 'timeoutMs', s * 1000, (why) => ignore('proxy-read-timeout', why));
  }

  const prefix = a.get('x-forwarded-prefix');
  if (prefix !== undefined && prefix !== '')
    checked('x-forwarded-prefix', 'requestHeaders', { set: [{ name: 'X-Forwarded-Prefix', value: prefix }], add: [], remove: [] }, (why) => ignore('x-forwarded-prefix', why));
  return out;
}

/** NGINX_AUTH_TIMEOUT_MS is how long an auth-url answer may take (ingress-nginx has no annotation for it either). */
const NGINX_AUTH_TIMEOUT_MS = 10_000;

/**
 * readExternalAuth reads `auth-url`: the Service it names must be of the Ingress's own namespace
 * (`http://NAME[.NAMESPACE[.svc[.cluster.local]]][:PORT]/PATH`, plain HTTP: a route publishes only
 * its own namespace's Services, and tuna reaches only Services). One it cannot use holds the
 * Ingress back (fail closed).
 */
function readExternalAuth(
  a: Map<string, string>,
  ingress: V1Ingress,
  index: SnapshotIndex,
  out: NginxAnnotations,
  refuse: (reason: TunaReason, name: string, why: string) => void,
  ignore: (name: string, why: string) => void,
): void {
  const raw = a.get('auth-url');
  if (raw === undefined) {
    for (const n of ['auth-signin', 'auth-response-headers']) if (a.has(n)) ignore(n, `without ${nginxPrefix}auth-url it does nothing`);
    return;
  }
  const own = namespaceOf(ingress);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('InvalidAnnotation', 'auth-url', `${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== 'http:') return refuse('InvalidAnnotation', 'auth-url', `${url.protocol} is not supported; tuna asks in-cluster Services over plain http://`);
  const labels = url.hostname.split('.');
  const tail = labels.slice(2).join('.');
  if (labels.length > 2 && tail !== 'svc' && tail !== 'svc.cluster.local')
    return refuse('InvalidAnnotation', 'auth-url', `${url.hostname} is not a Service name (NAME, NAME.NAMESPACE or NAME.NAMESPACE.svc.cluster.local); tuna asks only in-cluster Services`);
  const [name = '', namespace = own] = labels;
  if (namespace !== own) return refuse('InvalidAnnotation', 'auth-url', `Service ${namespace}/${name} is in another namespace; an Ingress may use only Services of its own (${own})`);
  const port = url.port === '' ? 80 : Number(url.port);
  const r = resolveServiceBackend(index, namespace, name, port);
  if (!r.ok) return refuse(r.reason === 'ServiceNotFound' || r.reason === 'ServicePortNotFound' || r.reason === 'ExternalNameService' ? r.reason : 'InvalidAnnotation', 'auth-url', r.message);
  if (r.backend.protocol !== 'http' && r.backend.protocol !== 'h2c') return refuse('InvalidAnnotation', 'auth-url', `Service ${namespace}/${name} port ${port} speaks ${r.backend.protocol}, not HTTP`);
  const signin = a.get('auth-signin');
  if (signin !== undefined && !/^https?:\/\/\S+$/.test(signin)) return refuse('InvalidAnnotation', 'auth-signin', `${JSON.stringify(signin)} is not an http(s) URL`);
  const response = splitList(a.get('auth-response-headers') ?? '').map((h) => h.toLowerCase());
  const bad = response.find((h) => !/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(h));
  if (bad !== undefined) return refuse('InvalidAnnotation', 'auth-response-headers', `${JSON.stringify(bad)} is not a header name`);
  out.externalAuth = {
    backend: { ...r.backend, weight: 1 },
    pathPrefix: `${url.pathname}${url.search}`,
    requestHeaders: 'all',
    responseHeaders: response,
    forwardBodyBytes: 0,
    timeoutMs: NGINX_AUTH_TIMEOUT_MS,
    semantics: 'nginx',
    ...(signin !== undefined ? { signinUrl: signin } : {}),
  };
}

type Checked = <K extends keyof RoutePolicies>(name: string, kind: K, value: RoutePolicies[K], onError: (why: string) => void) => void;

function readAuth(
  a: Map<string, string>,
  ingress: V1Ingress,
  index: SnapshotIndex,
  out: NginxAnnotations,
  refuse: (reason: TunaReason, name: string, why: string) => void,
  checked: Checked,
): void {
  const type = a.get('auth-type');
  if (type === undefined) {
    for (const n of ['auth-secret', 'auth-secret-type', 'auth-realm'])
      if (a.has(n)) out.warnings.push({ reason: 'InvalidAnnotation', message: `annotation ${nginxPrefix}${n}: without ${nginxPrefix}auth-type it does nothing (as in ingress-nginx); ignored` });
    return;
  }
  if (type !== 'basic') return refuse('InvalidAnnotation', 'auth-type', `${JSON.stringify(type)} is not supported (tuna does basic only; digest needs plain-text passwords)`);
  const secretType = a.get('auth-secret-type') ?? 'auth-file';
  if (secretType !== 'auth-file') return refuse('InvalidAnnotation', 'auth-secret-type', `${JSON.stringify(secretType)} is not supported (only auth-file: htpasswd content in the key auth)`);
  const own = namespaceOf(ingress);
  const value = a.get('auth-secret') ?? '';
  if (value === '') return refuse('AuthSecretNotFound', 'auth-type', `basic needs ${nginxPrefix}auth-secret`);
  const ref = splitSecretName(value, own);
  if (ref.namespace !== own) return refuse('AuthSecretNotFound', 'auth-secret', `Secret ${value} is in another namespace; tuna reads only the Ingress's own (${own})`);
  const secret = index.secrets.get(`${ref.namespace}/${ref.name}`);
  if (!secret) return refuse('AuthSecretNotFound', 'auth-secret', `Secret ${ref.namespace}/${ref.name} not found`);
  const parsed = (secret as { authHtpasswd?: HtpasswdParse }).authHtpasswd;
  if (!parsed) return refuse('AuthSecretInvalid', 'auth-secret', `Secret ${ref.namespace}/${ref.name} has no key auth`);
  if (parsed.kind === 'invalid') return refuse('AuthSecretInvalid', 'auth-secret', `Secret ${ref.namespace}/${ref.name} key auth: ${parsed.errors.join(', ')}`);
  const realm = a.get('auth-realm') ?? defaultRealm;
  checked('auth-realm', 'basicAuth', { realm, users: parsed.users }, (why) => refuse('InvalidAnnotation', 'auth-realm', why));
}

function readRateLimit(a: Map<string, string>, ignore: (name: string, why: string) => void, checked: Checked): void {
  const rps = a.get('limit-rps');
  const rpm = a.get('limit-rpm');
  const multiplierText = a.get('limit-burst-multiplier');
  let multiplier = defaultBurstMultiplier;
  if (multiplierText !== undefined) {
    const m = parseWhole(multiplierText);
    if (m === undefined || m === 0) ignore('limit-burst-multiplier', `${JSON.stringify(multiplierText)} is not a whole number from 1; ${defaultBurstMultiplier} is used`);
    else multiplier = m;
  }
  const name = rps !== undefined ? 'limit-rps' : 'limit-rpm';
  const text = rps ?? rpm;
  if (text === undefined) return;
  if (rps !== undefined && rpm !== undefined) ignore('limit-rpm', 'tuna keeps one rate limit per route and limit-rps is set');
  const n = parseWhole(text);
  if (n === undefined) return ignore(name, `${JSON.stringify(text)} is not a whole number of requests from 0`);
  if (n === 0) return; // 0: no limit, as in ingress-nginx
  checked(name, 'rateLimit', { requests: n, periodSeconds: rps !== undefined ? 1 : 60, burst: n * multiplier }, (why) => ignore(name, why));
}

function readBodySize(a: Map<string, string>, ignore: (name: string, why: string) => void, checked: Checked): void {
  const v = a.get('proxy-body-size');
  if (v === undefined) return;
  const m = /^(\d+)([kKmMgG]?)$/.exec(v.trim());
  if (!m) return ignore('proxy-body-size', `${JSON.stringify(v)} is not an nginx size (bytes, or a number with k, m or g)`);
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m[2] ?? '').toLowerCase() as '' | 'k' | 'm' | 'g'];
  const bytes = Number(m[1]) * unit;
  if (bytes === 0) return; // 0: no limit, as in nginx
  checked('proxy-body-size', 'maxBodyBytes', bytes, (why) => ignore('proxy-body-size', why));
}

/** parseBool reads a boolean as ingress-nginx does (Go's strconv.ParseBool). */
function parseBool(v: string): boolean | undefined {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(v)) return false;
  return undefined;
}

function parseWhole(v: string): number | undefined {
  return /^\d{1,9}$/.test(v.trim()) ? Number(v.trim()) : undefined;
}

function splitList(v: string): string[] {
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
}
