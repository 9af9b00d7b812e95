import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { DEFAULT_OIDC_COOKIE, DEFAULT_OIDC_DISCOVERY_REFRESH_SECONDS, DEFAULT_OIDC_SESSION_SECONDS, isHeaderName, parseOidcCookieSecret, validateOidc } from '../model/index.js';
import type { ClaimHeader, OidcPolicy } from '../model/index.js';
import { UsageError } from './errors.js';

/** OidcFlagValues are the decoded --oidc-* flags. */
export interface OidcFlagValues {
  'oidc-issuer'?: string;
  'oidc-client-id'?: string;
  'oidc-client-secret-file'?: string;
  'oidc-scope'?: string[];
  'oidc-cookie-secret-file'?: string;
  'oidc-claim-header'?: ClaimHeader[];
}

const oidcFlags = ['oidc-issuer', 'oidc-client-id', 'oidc-client-secret-file', 'oidc-scope', 'oidc-cookie-secret-file', 'oidc-claim-header'] as const;

/** The largest secret file read (a client secret or a cookie key is far smaller). */
const maxSecretFileBytes = 4096;

/**
 * readOidc reads the --oidc-* flags: none, or the issuer, client id and client secret file (the
 * secrets are read from files so that they never show in a process list). Without
 * --oidc-cookie-secret-file the cookie key is made at random at start: sessions then end when the
 * agent restarts.
 */
export async function readOidc(flags: OidcFlagValues, command: string): Promise<OidcPolicy | undefined> {
  if (oidcFlags.every((f) => flags[f] === undefined)) return undefined;
  const issuer = flags['oidc-issuer'];
  const clientId = flags['oidc-client-id'];
  const secretFile = flags['oidc-client-secret-file'];
  const missing = [issuer === undefined ? '--oidc-issuer' : '', clientId === undefined ? '--oidc-client-id' : '', secretFile === undefined ? '--oidc-client-secret-file' : ''].filter((f) => f !== '');
  if (missing.length > 0 || issuer === undefined || clientId === undefined || secretFile === undefined) throw new UsageError(`tuna ${command}: an OIDC policy needs ${missing.join(', ')} too`);
  const clientSecret = (await readSecretFile(secretFile, '--oidc-client-secret-file', command)).trim();
  if (clientSecret === '') throw new UsageError(`tuna ${command}: --oidc-client-secret-file ${secretFile}: empty`);
  const cookieFile = flags['oidc-cookie-secret-file'];
  let cookieKey = randomBytes(32).toString('base64url');
  if (cookieFile !== undefined) {
    const parsed = parseOidcCookieSecret(await readSecretFile(cookieFile, '--oidc-cookie-secret-file', command));
    if (parsed === undefined) throw new UsageError(`tuna ${command}: --oidc-cookie-secret-file ${cookieFile}: not 32 bytes as base64, base64url or hex (make one with: openssl rand -base64 32)`);
    cookieKey = parsed;
  }
  const scopes = ['openid', ...(flags['oidc-scope'] ?? []).flatMap((s) => s.split(/[\s,]+/)).filter((s) => s !== '' && s !== 'openid')];
  const oidc: OidcPolicy = {
    issuer,
    clientId,
    clientSecret,
    scopes: [...new Set(scopes)],
    cookieKey,
    cookieName: DEFAULT_OIDC_COOKIE,
    sessionSeconds: DEFAULT_OIDC_SESSION_SECONDS,
    discoveryRefreshSeconds: DEFAULT_OIDC_DISCOVERY_REFRESH_SECONDS,
    claimToHeaders: flags['oidc-claim-header'] ?? [],
  };
  const problems = validateOidc(oidc, isHeaderName).map((e) => {
    const field = /^oidc\.(\w+)/.exec(e)?.[1] ?? '';
    return `${oidcFlagOf[field] ?? '--oidc-*'}: ${e.replace(/^oidc\.[\w.]+: /, '')}`;
  });
  if (problems.length > 0) throw new UsageError(`tuna ${command}: ${problems.join('; ')}`);
  return oidc;
}

/** oidcFlagOf names the flag of a field of the oidc policy, for usage errors. */
const oidcFlagOf: Record<string, string> = {
  issuer: '--oidc-issuer',
  clientId: '--oidc-client-id',
  clientSecret: '--oidc-client-secret-file',
  scopes: '--oidc-scope',
  cookieKey: '--oidc-cookie-secret-file',
  claimToHeaders: '--oidc-claim-header',
};

async function readSecretFile(path: string, flag: string, command: string): Promise<string> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    throw new UsageError(`tuna ${command}: ${flag} ${path}: not a readable file`);
  }
  if (size > maxSecretFileBytes) throw new UsageError(`tuna ${command}: ${flag} ${path}: larger than ${maxSecretFileBytes} bytes`);
  return readFile(path, 'utf8');
}
