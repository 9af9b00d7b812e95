import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import * as t from 'io-ts';
import { DEFAULT_JWKS_REFRESH_SECONDS, DEFAULT_JWT_CLOCK_SKEW_SECONDS, MAX_JWKS_BYTES, isHeaderName, isHeaderValue, parseCidr, parseHtpasswd, parseJwks, validateJwt, validatePolicies } from '../model/index.js';
import type { ClaimHeader, ClaimRequirement, HeaderModifier, HtpasswdUser, JwksSource, JwtPolicy, RateLimitPolicy, RoutePolicies } from '../model/index.js';
import { UsageError } from './errors.js';
import { decodeFlags } from './flags.js';
import { readOidc } from './oidc-flags.js';

/**
 * The route policies as `tuna http` flags (docs/policies.md), named as Tuna's own agent names
 * them (`--https-redirect`, `--rate-limit`, `--basic-auth`, `--key-auth`, `--request-header`).
 * Every value is checked here, and a bad one is a usage error naming its flag.
 */

/** policyFlagOptions are the policy flags of `tuna http`. */
export const policyFlagOptions = {
  'https-redirect': { type: 'boolean' },
  'rate-limit': { type: 'string' },
  'basic-auth': { type: 'string', multiple: true },
  'key-auth': { type: 'string', multiple: true },
  'request-header': { type: 'string', multiple: true },
  'response-header': { type: 'string', multiple: true },
  'ip-allow': { type: 'string', multiple: true },
  'ip-deny': { type: 'string', multiple: true },
  'max-body': { type: 'string' },
  cors: { type: 'string', multiple: true },
  timeout: { type: 'string' },
  'jwt-issuer': { type: 'string', multiple: true },
  'jwt-audience': { type: 'string', multiple: true },
  'jwt-jwks': { type: 'string' },
  'jwt-claim-header': { type: 'string', multiple: true },
  'jwt-require': { type: 'string', multiple: true },
  'jwt-cookie': { type: 'string' },
  'jwt-header': { type: 'string' },
  'oidc-issuer': { type: 'string' },
  'oidc-client-id': { type: 'string' },
  'oidc-client-secret-file': { type: 'string' },
  'oidc-scope': { type: 'string', multiple: true },
  'oidc-cookie-secret-file': { type: 'string' },
  'oidc-claim-header': { type: 'string', multiple: true },
} as const;

/** policyFlagsHelp documents policyFlagOptions for --help. */
export const policyFlagsHelp = `Policies (applied by this agent before your server is called; see docs/policies.md):
  --https-redirect   answer plain-HTTP requests with 308 to the same URL on https
  --rate-limit N/P   at most N requests per P (s, m, h; e.g. 100/m) per client address,
                     else 429 with Retry-After
  --basic-auth A     HTTP Basic auth: USER:PASSWORD, or an htpasswd FILE (bcrypt or {SHA}
                     entries; repeatable)
  --key-auth H:KEY   require header H to carry KEY (repeatable: any of the keys; one header)
  --request-header R  change a request header: NAME:VALUE sets, +NAME:VALUE adds, NAME:
                     removes (repeatable)
  --response-header R the same for response headers
  --ip-allow CIDR    only client addresses in these ranges (IPv4 or IPv6; repeatable or
                     comma-separated); --ip-deny CIDR refuses ranges (deny wins), else 403
  --max-body SIZE    largest request body (bytes, or with k, m, g: 10m), else 413
  --cors ORIGINS     allow these origins (* or https://a.example, comma-separated): preflights
                     answered, CORS headers on responses
  --timeout T        the whole request's deadline (500ms, 30s, 2m; a number is seconds),
                     else 504
  --jwt-issuer ISS   require a bearer JWT from this issuer (repeatable: any of them);
                     with --jwt-audience AUD (repeatable) and --jwt-jwks, else 401
  --jwt-jwks SRC     the signing keys: a JWKS FILE, or an https URL (http only to
                     loopback) fetched and refreshed by this agent (503 until fetched)
  --jwt-claim-header CLAIM=HEADER  send a claim to your server in HEADER (a client's own
                     HEADER is always removed; repeatable)
  --jwt-require R    CLAIM=VALUE (equals), CLAIM[]=VALUE (an array contains it) or
                     CLAIM~=VALUE (a space-separated scope contains it), else 403 (repeatable)
  --jwt-cookie NAME, --jwt-header NAME  also take the token from this cookie or header
  --oidc-issuer URL  sign browsers in with this OpenID Connect provider (https; http only to
                     loopback), with --oidc-client-id ID and --oidc-client-secret-file FILE;
                     the provider must allow the redirect URI SCHEME://HOST/.tuna/oidc/callback
  --oidc-scope S     more scopes to ask for besides openid (repeatable or space-separated)
  --oidc-cookie-secret-file FILE  the session cookie key: 32 bytes as base64 or hex
                     (openssl rand -base64 32); none: a random key, sessions end on restart
  --oidc-claim-header CLAIM=HEADER  send an ID token claim to your server in HEADER (a
                     client's own HEADER is always removed; repeatable)`;

const periods: Record<string, number> = { s: 1, sec: 1, second: 1, m: 60, min: 60, minute: 60, h: 3600, hour: 3600 };

/** RateLimitString decodes `N/PERIOD`: `100/m`, `10/s`, `5/10s`, `1000/hour`. */
export const RateLimitString = new t.Type<RateLimitPolicy, string, unknown>(
  'rate-limit',
  (u): u is RateLimitPolicy => typeof u === 'object' && u !== null && 'requests' in u,
  (u, c) => {
    const m = typeof u === 'string' ? /^(\d{1,9})\/(\d{0,5})([a-z]+)$/i.exec(u.trim()) : null;
    const unit = m ? periods[m[3]!.toLowerCase()] : undefined;
    if (!m || unit === undefined) return t.failure(u, c, 'must be REQUESTS/PERIOD with a period of s, m or h (e.g. 100/m)');
    const requests = Number(m[1]);
    const periodSeconds = (m[2] === '' ? 1 : Number(m[2])) * unit;
    if (requests < 1) return t.failure(u, c, 'must allow at least 1 request');
    if (periodSeconds < 1 || periodSeconds > 86400) return t.failure(u, c, 'must have a period from 1 s to 24 h');
    return t.success({ requests, periodSeconds, burst: requests });
  },
  (r) => `${r.requests}/${r.periodSeconds}s`,
);

const sizeUnits: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3 };

/** SizeString decodes a byte count: `1048576`, `512k`, `10m`, `1g` (k = 1024). */
export const SizeString = new t.Type<number, string, unknown>(
  'size',
  (u): u is number => typeof u === 'number',
  (u, c) => {
    const m = typeof u === 'string' ? /^(\d{1,15})\s*([a-z]*)$/i.exec(u.trim()) : null;
    const unit = m ? sizeUnits[m[2]!.toLowerCase()] : undefined;
    if (!m || unit === undefined) return t.failure(u, c, 'must be a size in bytes, or with k, m or g (e.g. 10m)');
    const bytes = Number(m[1]) * unit;
    return bytes >= 1 && Number.isSafeInteger(bytes) ? t.success(bytes) : t.failure(u, c, 'must be at least 1 byte');
  },
  String,
);

const durationUnits: Record<string, number> = { ms: 1, '': 1000, s: 1000, m: 60_000, h: 3_600_000 };

/** DurationString decodes `500ms`, `30s`, `2m`, `1h` or a number of seconds, up to 24 h. */
export const DurationString = new t.Type<number, string, unknown>(
  'duration',
  (u): u is number => typeof u === 'number',
  (u, c) => {
    const m = typeof u === 'string' ? /^(\d{1,9})(ms|s|m|h)?$/i.exec(u.trim()) : null;
    if (!m) return t.failure(u, c, 'must be a duration such as 500ms, 30s or 2m');
    const ms = Number(m[1]) * durationUnits[(m[2] ?? '').toLowerCase()]!;
    return ms >= 1 && ms <= 86_400_000 ? t.success(ms) : t.failure(u, c, 'must be from 1ms to 24h');
  },
  String,
);

/** CidrString decodes one range or a comma-separated list of ranges (IPv4 or IPv6; a bare address is one host). */
export const CidrString = new t.Type<string[], string, unknown>(
  'cidr',
  (u): u is string[] => Array.isArray(u),
  (u, c) => {
    const list = typeof u === 'string' ? u.split(',').map((s) => s.trim()).filter((s) => s !== '') : [];
    if (list.length === 0) return t.failure(u, c, 'must be a CIDR range such as 10.0.0.0/8 or 2001:db8::/32');
    const bad = list.find((r) => parseCidr(r) === undefined);
    return bad === undefined ? t.success(list) : t.failure(u, c, `is not a CIDR range (${bad}); use ADDRESS/PREFIX, e.g. 10.0.0.0/8 or 2001:db8::/32`);
  },
  (l) => l.join(','),
);

/** HeaderEdit is one --request-header or --response-header. */
export type HeaderEdit = { op: 'set' | 'add'; name: string; value: string } | { op: 'remove'; name: string };

/** HeaderEditString decodes `NAME:VALUE` (set), `+NAME:VALUE` (add) and `NAME:` (remove, as curl -H reads it). */
export const HeaderEditString = new t.Type<HeaderEdit, string, unknown>(
  'header',
  (u): u is HeaderEdit => typeof u === 'object' && u !== null && 'op' in u,
  (u, c) => {
    if (typeof u !== 'string') return t.failure(u, c, 'must be NAME:VALUE, +NAME:VALUE or NAME:');
    const isAdd = u.startsWith('+');
    const text = isAdd ? u.slice(1) : u;
    const colon = text.indexOf(':');
    const name = colon < 0 ? '' : text.slice(0, colon).trim();
    const value = colon < 0 ? '' : text.slice(colon + 1).trim();
    if (!isHeaderName(name)) return t.failure(u, c, 'must be NAME:VALUE (set), +NAME:VALUE (add) or NAME: (remove), NAME a header name');
    if (!isHeaderValue(value)) return t.failure(u, c, 'must not contain CR, LF or NUL');
    if (value === '') return isAdd ? t.failure(u, c, 'adds no value (NAME: alone removes a header)') : t.success({ op: 'remove', name });
    return t.success({ op: isAdd ? 'add' : 'set', name, value });
  },
  (e) => (e.op === 'remove' ? `${e.name}:` : `${e.op === 'add' ? '+' : ''}${e.name}:${e.value}`),
);

/** KeyAuthString decodes `HEADER:KEY`. */
export const KeyAuthString = new t.Type<{ header: string; key: string }, string, unknown>(
  'key-auth',
  (u): u is { header: string; key: string } => typeof u === 'object' && u !== null && 'key' in u,
  (u, c) => {
    const colon = typeof u === 'string' ? u.indexOf(':') : -1;
    const header = typeof u === 'string' && colon > 0 ? u.slice(0, colon).trim() : '';
    const key = typeof u === 'string' ? u.slice(colon + 1).trim() : '';
    if (!isHeaderName(header) || key === '' || !isHeaderValue(key)) return t.failure(u, c, 'must be HEADER:KEY, e.g. X-Api-Key:s3cret');
    return t.success({ header, key });
  },
  (k) => `${k.header}:${k.key}`,
);

/** OriginsString decodes `*` or a comma-separated list of origins (`https://a.example`, `https://*.example`). */
export const OriginsString = new t.Type<string[], string, unknown>(
  'origins',
  (u): u is string[] => Array.isArray(u),
  (u, c) => {
    const list = typeof u === 'string' ? u.split(',').map((s) => s.trim()).filter((s) => s !== '') : [];
    const isOrigin = (o: string): boolean => o === '*' || /^https?:\/\/(\*\.)?[a-z0-9.-]+(:\d{1,5})?$/i.test(o);
    if (list.length === 0 || !list.every(isOrigin)) return t.failure(u, c, 'must be * or origins such as https://app.example (comma-separated)');
    return t.success(list);
  },
  (l) => l.join(','),
);

/** ClaimHeaderString decodes `CLAIM=HEADER`. */
export const ClaimHeaderString = new t.Type<ClaimHeader, string, unknown>(
  'claim-header',
  (u): u is ClaimHeader => typeof u === 'object' && u !== null && 'claim' in u && 'header' in u,
  (u, c) => {
    const m = typeof u === 'string' ? /^([^=\s]+)=(.+)$/.exec(u.trim()) : null;
    if (!m || !isHeaderName(m[2]!)) return t.failure(u, c, 'must be CLAIM=HEADER, e.g. sub=X-User');
    return t.success({ claim: m[1]!, header: m[2]! });
  },
  (h) => `${h.claim}=${h.header}`,
);

/** ClaimRequirementString decodes `CLAIM=VALUE` (equals), `CLAIM[]=VALUE` (an array claim contains it) and `CLAIM~=VALUE` (a space-separated scope contains it). */
export const ClaimRequirementString = new t.Type<ClaimRequirement, string, unknown>(
  'claim-requirement',
  (u): u is ClaimRequirement => typeof u === 'object' && u !== null && 'match' in u,
  (u, c) => {
    const m = typeof u === 'string' ? /^([^=~[\]\s]+)(\[\]|~)?=(.+)$/.exec(u.trim()) : null;
    if (!m) return t.failure(u, c, 'must be CLAIM=VALUE, CLAIM[]=VALUE or CLAIM~=VALUE, e.g. scope~=orders:write');
    return t.success({ claim: m[1]!, match: m[2] === '[]' ? 'contains' : m[2] === '~' ? 'scope' : 'equals', value: m[3]! });
  },
  (r) => `${r.claim}${r.match === 'contains' ? '[]' : r.match === 'scope' ? '~' : ''}=${r.value}`,
);

const PolicyFlags = t.partial({
  'https-redirect': t.boolean,
  'rate-limit': RateLimitString,
  'basic-auth': t.array(t.string),
  'key-auth': t.array(KeyAuthString),
  'request-header': t.array(HeaderEditString),
  'response-header': t.array(HeaderEditString),
  'ip-allow': t.array(CidrString),
  'ip-deny': t.array(CidrString),
  'max-body': SizeString,
  cors: t.array(OriginsString),
  timeout: DurationString,
  'jwt-issuer': t.array(t.string),
  'jwt-audience': t.array(t.string),
  'jwt-jwks': t.string,
  'jwt-claim-header': t.array(ClaimHeaderString),
  'jwt-require': t.array(ClaimRequirementString),
  'jwt-cookie': t.string,
  'jwt-header': t.string,
  'oidc-issuer': t.string,
  'oidc-client-id': t.string,
  'oidc-client-secret-file': t.string,
  'oidc-scope': t.array(t.string),
  'oidc-cookie-secret-file': t.string,
  'oidc-claim-header': t.array(ClaimHeaderString),
});

/** BasicAuthHasher turns a password given on the command line into an htpasswd hash (bcrypt). */
export type BasicAuthHasher = (password: string) => Promise<string>;

/**
 * resolvePolicyFlags reads the policy flags into the policies of the published route; undefined
 * when none is given. `--basic-auth` reads a file when the value names one, else takes
 * USER:PASSWORD and hashes the password (bcrypt) so that no password stays in the route graph.
 */
export async function resolvePolicyFlags(values: Record<string, unknown>, command: string, hash: BasicAuthHasher): Promise<RoutePolicies | undefined> {
  const flags = decodeFlags(PolicyFlags, values, command);
  const p: RoutePolicies = {};
  const allow = flags['ip-allow']?.flat() ?? [];
  const deny = flags['ip-deny']?.flat() ?? [];
  if (allow.length + deny.length > 0) p.ipAccess = { allow, deny };
  if (flags['https-redirect'] === true) p.httpsRedirect = { statusCode: 308 };
  if (flags['rate-limit']) p.rateLimit = flags['rate-limit'];
  if (flags.cors) {
    const origins = flags.cors.flat();
    p.cors = { allowOrigins: origins, allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], allowHeaders: ['*'], exposeHeaders: [], allowCredentials: false };
  }
  if (flags['basic-auth']) p.basicAuth = { realm: 'tuna', users: await readBasicAuth(flags['basic-auth'], command, hash) };
  if (flags['key-auth']) {
    const headers = new Set(flags['key-auth'].map((k) => k.header.toLowerCase()));
    if (headers.size > 1) throw new UsageError(`tuna ${command}: --key-auth: every key must name the same header (got ${[...headers].join(', ')})`);
    p.keyAuth = { header: flags['key-auth'][0]!.header, sha256: flags['key-auth'].map((k) => createHash('sha256').update(k.key).digest('hex')) };
  }
  if (flags['max-body'] !== undefined) p.maxBodyBytes = flags['max-body'];
  if (flags['request-header']) p.requestHeaders = toModifier(flags['request-header']);
  if (flags['response-header']) p.responseHeaders = toModifier(flags['response-header']);
  if (flags.timeout !== undefined) p.timeoutMs = flags.timeout;
  const jwt = await readJwt(flags, command);
  if (jwt) p.jwt = jwt;
  const oidc = await readOidc(flags, command);
  if (oidc) p.oidc = oidc;
  if (Object.keys(p).length === 0) return undefined;
  // The flags were checked one by one; this is the graph's own check, a backstop.
  const problems = validatePolicies('flags', p);
  if (problems.length > 0) throw new UsageError(`tuna ${command}: ${problems.join('; ')}`);
  return p;
}

const jwtFlags = ['jwt-issuer', 'jwt-audience', 'jwt-jwks', 'jwt-claim-header', 'jwt-require', 'jwt-cookie', 'jwt-header'] as const;

/** readJwt reads the --jwt-* flags: none, or all of issuer, audience and keys (a JWKS file is read and checked here). */
async function readJwt(flags: t.TypeOf<typeof PolicyFlags>, command: string): Promise<JwtPolicy | undefined> {
  if (jwtFlags.every((f) => flags[f] === undefined)) return undefined;
  const issuers = flags['jwt-issuer'] ?? [];
  const audiences = flags['jwt-audience'] ?? [];
  const source = flags['jwt-jwks'];
  const missing = [issuers.length === 0 ? '--jwt-issuer' : '', audiences.length === 0 ? '--jwt-audience' : '', source === undefined ? '--jwt-jwks' : ''].filter((f) => f !== '');
  if (missing.length > 0 || source === undefined) throw new UsageError(`tuna ${command}: a JWT policy needs ${missing.join(', ')} too`);
  const jwt: JwtPolicy = {
    realm: 'tuna',
    issuers,
    audiences,
    jwks: await readJwks(source, command),
    clockSkewSeconds: DEFAULT_JWT_CLOCK_SKEW_SECONDS,
    ...(flags['jwt-cookie'] !== undefined ? { cookie: flags['jwt-cookie'] } : {}),
    ...(flags['jwt-header'] !== undefined ? { header: flags['jwt-header'] } : {}),
    claimToHeaders: flags['jwt-claim-header'] ?? [],
    require: flags['jwt-require'] ?? [],
  };
  const problems = validateJwt(jwt, isHeaderName, () => true).map((e) => {
    const field = /^jwt\.(\w+)/.exec(e)?.[1] ?? '';
    return `${jwtFlagOf[field] ?? '--jwt-*'}: ${e.replace(/^jwt\.[\w.]+: /, '')}`;
  });
  if (problems.length > 0) throw new UsageError(`tuna ${command}: ${problems.join('; ')}`);
  return jwt;
}

/** jwtFlagOf names the flag of a field of the jwt policy, for usage errors. */
const jwtFlagOf: Record<string, string> = {
  issuers: '--jwt-issuer',
  audiences: '--jwt-audience',
  jwks: '--jwt-jwks',
  claimToHeaders: '--jwt-claim-header',
  require: '--jwt-require',
  cookie: '--jwt-cookie',
  header: '--jwt-header',
};

/** readJwks takes an http(s) URL as a key set to fetch (checked by validatePolicies), anything else as a JWKS file. */
async function readJwks(source: string, command: string): Promise<JwksSource> {
  if (/^https?:\/\//i.test(source)) return { kind: 'url', url: source, refreshSeconds: DEFAULT_JWKS_REFRESH_SECONDS };
  let size: number;
  try {
    size = (await stat(source)).size;
  } catch {
    throw new UsageError(`tuna ${command}: --jwt-jwks ${source}: neither a readable file nor an http(s) URL`);
  }
  if (size > MAX_JWKS_BYTES) throw new UsageError(`tuna ${command}: --jwt-jwks ${source}: larger than ${MAX_JWKS_BYTES} bytes`);
  const parsed = parseJwks(await readFile(source, 'utf8'));
  if (parsed.kind === 'invalid') throw new UsageError(`tuna ${command}: --jwt-jwks ${source}: ${parsed.error}`);
  return { kind: 'inline', keys: parsed.keys };
}

function toModifier(edits: HeaderEdit[]): HeaderModifier {
  const mod: HeaderModifier = { set: [], add: [], remove: [] };
  for (const e of edits) {
    if (e.op === 'remove') mod.remove.push(e.name);
    else mod[e.op].push({ name: e.name, value: e.value });
  }
  return mod;
}

async function readBasicAuth(values: string[], command: string, hash: BasicAuthHasher): Promise<HtpasswdUser[]> {
  const users: HtpasswdUser[] = [];
  for (const value of values) {
    if (await isFile(value)) {
      const parsed = parseHtpasswd(await readFile(value, 'utf8'));
      if (parsed.kind === 'invalid') throw new UsageError(`tuna ${command}: --basic-auth ${value}: ${parsed.errors.join('; ')}`);
      users.push(...parsed.users);
      continue;
    }
    const colon = value.indexOf(':');
    if (colon <= 0 || colon === value.length - 1)
      throw new UsageError(`tuna ${command}: --basic-auth ${JSON.stringify(value)} is neither USER:PASSWORD nor an htpasswd file`);
    users.push({ name: value.slice(0, colon), hash: await hash(value.slice(colon + 1)) });
  }
  const names = users.map((u) => u.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new UsageError(`tuna ${command}: --basic-auth: user ${twice} is given twice`);
  return users;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
