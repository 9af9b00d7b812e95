import { hash, randomBytes } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { OIDC_CALLBACK_PATH, OIDC_LOGOUT_PATH, isHeaderValue } from '../../model/index.js';
import type { OidcPolicy } from '../../model/index.js';
import type { HeaderMap } from '../headers.js';
import { headerValue } from '../match.js';
import type { IncomingFacts } from '../request-plan.js';
import { readBounded } from './jwks.js';
import { errorText } from './refreshing.js';
import type { RemoteKeys } from './jwks.js';
import { loadJose } from './jose.js';
import type { ProviderConfig, ProviderDiscovery } from './oidc-discovery.js';
import { CookieSealer, MAX_OIDC_COOKIE_BYTES, cookieValue } from './oidc-session.js';
import type { LoginState, Session } from './oidc-session.js';

/** OidcVerdict is an oidc check's answer: pass (claim headers to send, maybe a renewed cookie to set), or the local answer. */
export type OidcVerdict = { kind: 'pass'; claimHeaders: HeaderMap; setCookie?: string } | { kind: 'answer'; status: number; body: string; headers: HeaderMap };

/** TokenPost sends a form to the token endpoint with HTTP Basic client authentication and gives the status and JSON text. */
export type TokenPost = (url: string, form: URLSearchParams, authorization: string) => Promise<{ status: number; text: string }>;

/** ID token algorithms accepted: RSA PKCS#1, ECDSA and EdDSA; never `none` nor HMAC. */
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const maxTokenAnswerBytes = 64 * 1024;
const maxClaimHeaderBytes = 1024;
const loginSeconds = 600;
const clockSkewSeconds = 60;
const maxRemembered = 1024;
const refreshMemorySeconds = 30;

/**
 * postToken is the default TokenPost: a 5 s deadline, no redirect followed, at most 64 KiB read.
 */
export async function postToken(url: string, form: URLSearchParams, authorization: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', body: form, redirect: 'error', signal: AbortSignal.timeout(5000), headers: { authorization, accept: 'application/json' } });
  return { status: res.status, text: await readBounded(res, maxTokenAnswerBytes) };
}

/** base64url of random bytes, for state, nonce and the PKCE verifier (RFC 7636 §4.1: 32 bytes give 43 characters). */
function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** pkceChallenge is the S256 code challenge of a verifier (RFC 7636 §4.2). */
export function pkceChallenge(verifier: string): string {
  return hash('sha256', verifier, 'base64url');
}

/** OidcRequest is what the check looks at. */
export interface OidcRequest {
  facts: IncomingFacts;
  publicScheme: 'http' | 'https';
}

/**
 * OidcChecker is an oidc policy on a route (docs/policies.md): the authorization code flow with
 * PKCE (S256), `state` and `nonce`; the callback and logout at reserved paths of the host; a
 * session in a cookie sealed with the policy's key (CookieSealer); the ID token verified with
 * jose against the provider's keys; a refresh with the refresh token when the ID token expired;
 * the policy's claims to request headers. A browser (a GET or HEAD accepting `text/html`) without a
 * session is sent to the provider; any other request gets 401.
 *
 * An opened session is remembered by the cookie's value until its ID token or the cookie expires
 * (at most 1,024), so a browser's next requests cost a map lookup instead of a decryption.
 */
export class OidcChecker {
  private readonly sealer: CookieSealer;
  private readonly loginCookie: string;
  private readonly remembered = new Map<string, { session: Session; until: number }>();
  private readonly refreshing = new Map<string, { until: number; result: Promise<Session | undefined> }>();
  /** strip lists the lowercase claim headers: a client's copies are removed from every request forwarded */
  readonly strip: readonly string[];
  /** cookies lists the policy's cookies: they are removed from the Cookie header the backend gets */
  readonly cookies: readonly string[];

  constructor(
    private readonly policy: OidcPolicy,
    private readonly discovery: ProviderDiscovery,
    private readonly post: TokenPost = postToken,
    private readonly nowSeconds: () => number = () => Date.now() / 1000,
  ) {
    this.sealer = new CookieSealer(policy.cookieKey, policy.issuer, policy.clientId, nowSeconds);
    this.loginCookie = `${policy.cookieName}_login`;
    this.strip = policy.claimToHeaders.map((c) => c.header.toLowerCase());
    this.cookies = [policy.cookieName, this.loginCookie];
  }

  /** check judges a request; it answers at once for a remembered session. */
  check(req: OidcRequest): OidcVerdict | Promise<OidcVerdict> {
    const { path } = req.facts;
    if (path === OIDC_CALLBACK_PATH) return this.callback(req);
    if (path === OIDC_LOGOUT_PATH) return this.logout(req);
    const value = cookieValue(req.facts.headers.cookie, this.policy.cookieName);
    if (value === undefined) return this.login(req);
    const known = this.remembered.get(value);
    if (known !== undefined && this.nowSeconds() < known.until) return this.pass(known.session);
    return this.resume(req, value);
  }

  /** resume opens a session cookie: a live session passes, an expired ID token is refreshed, anything else logs in again. */
  private async resume(req: OidcRequest, value: string): Promise<OidcVerdict> {
    const session = await this.sealer.openSession(value);
    if (session === undefined) return this.login(req);
    if (this.nowSeconds() < session.idExpires) {
      this.remember(value, session, session.expires!);
      return this.pass(session);
    }
    if (session.refreshToken === undefined) return this.login(req);
    const renewed = await this.refreshOnce(session);
    if (renewed === undefined) return this.login(req);
    const cookie = await this.sessionCookie(renewed, req);
    if (typeof cookie !== 'string') return cookie;
    return this.pass(renewed, cookie);
  }

  /** refreshOnce refreshes a session, one exchange per refresh token: a page's parallel requests share it (providers rotate refresh tokens and may revoke on reuse). */
  private refreshOnce(session: Session): Promise<Session | undefined> {
    const token = session.refreshToken!;
    const now = this.nowSeconds();
    for (const [k, v] of this.refreshing) if (v.until < now) this.refreshing.delete(k);
    const prior = this.refreshing.get(token);
    if (prior !== undefined) return prior.result;
    if (this.refreshing.size >= maxRemembered) this.refreshing.delete(this.refreshing.keys().next().value!);
    const result = this.refresh(session).catch(() => undefined);
    this.refreshing.set(token, { until: now + refreshMemorySeconds, result });
    return result;
  }

  private async refresh(session: Session): Promise<Session | undefined> {
    const provider = await this.discovery.provider();
    if (provider.kind !== 'ready') return undefined;
    const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: session.refreshToken!, scope: this.policy.scopes.join(' ') });
    const answer = await this.exchange(provider.config, form);
    if (typeof answer === 'string') return undefined;
    const verified = await this.verifyIdToken(answer.idToken, provider, undefined);
    if (typeof verified === 'string' || verified.sub !== session.sub) return undefined;
    return this.sessionOf(verified, answer.idToken, answer.refreshToken ?? session.refreshToken);
  }

  /** login sends a browser to the provider, with its login state in a sealed cookie; others get 401. */
  private async login(req: OidcRequest): Promise<OidcVerdict> {
    const { facts } = req;
    const accept = headerValue(facts.headers, 'accept') ?? '';
    const isBrowser = (facts.method === 'GET' || facts.method === 'HEAD') && /(^|[\s,])text\/html([\s;,]|$)/i.test(accept);
    if (!isBrowser) return { kind: 'answer', status: 401, body: 'authentication required: sign in with a browser\n', headers: { 'www-authenticate': 'Cookie realm="tuna"', 'cache-control': 'no-store' } };
    const provider = await this.discovery.provider();
    if (provider.kind !== 'ready') return unavailable(provider.reason);
    const target = facts.path + facts.search;
    const state: LoginState = { state: randomToken(), nonce: randomToken(), verifier: randomToken(), returnTo: isLocalPath(target) ? target : '/' };
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: this.policy.clientId,
      redirect_uri: redirectUri(req),
      scope: this.policy.scopes.join(' '),
      state: state.state,
      nonce: state.nonce,
      code_challenge: pkceChallenge(state.verifier),
      code_challenge_method: 'S256',
    });
    const endpoint = provider.config.authorizationEndpoint;
    const location = `${endpoint}${endpoint.includes('?') ? '&' : '?'}${params.toString()}`;
    const sealed = await this.sealer.sealLogin(state, loginSeconds);
    return redirect(location, [cookieLine(this.loginCookie, sealed, req, '/.tuna/oidc', loginSeconds)]);
  }

  /** callback ends a login: the state checked against the login cookie's, the code exchanged, the ID token verified, the session cookie set. */
  private async callback(req: OidcRequest): Promise<OidcVerdict> {
    const query = new URLSearchParams(req.facts.search.replace(/^\?/, ''));
    const sealed = cookieValue(req.facts.headers.cookie, this.loginCookie);
    const login = sealed === undefined ? undefined : await this.sealer.openLogin(sealed);
    if (login === undefined) return badRequest('no sign-in is in progress in this browser (or it took longer than 10 minutes): open the page again');
    const state = query.get('state');
    if (state === null || state !== login.state) return badRequest('the sign-in state does not match this browser\'s: open the page again');
    const error = query.get('error');
    if (error !== null) return { kind: 'answer', status: 403, body: `the provider refused the sign-in: ${safeText(error)}\n`, headers: { 'cache-control': 'no-store' } };
    const code = query.get('code');
    if (code === null || code === '') return badRequest('the provider sent no code');
    const provider = await this.discovery.provider();
    if (provider.kind !== 'ready') return unavailable(provider.reason);
    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri(req), code_verifier: login.verifier });
    const answer = await this.exchange(provider.config, form);
    if (typeof answer === 'string') return { kind: 'answer', status: 502, body: `the sign-in could not be completed: ${answer}\n`, headers: { 'cache-control': 'no-store' } };
    const verified = await this.verifyIdToken(answer.idToken, provider, login.nonce);
    if (typeof verified === 'string') return { kind: 'answer', status: 502, body: `the sign-in could not be completed: ${verified}\n`, headers: { 'cache-control': 'no-store' } };
    const session = this.sessionOf(verified, answer.idToken, answer.refreshToken);
    const cookie = await this.sessionCookie(session, req);
    if (typeof cookie !== 'string') return cookie;
    return redirect(login.returnTo, [cookie, cookieLine(this.loginCookie, '', req, '/.tuna/oidc', 0)]);
  }

  /** logout clears the session cookie and goes on to the provider's end_session_endpoint when it has one. */
  private async logout(req: OidcRequest): Promise<OidcVerdict> {
    const value = cookieValue(req.facts.headers.cookie, this.policy.cookieName);
    let session: Session | undefined;
    if (value !== undefined) {
      this.remembered.delete(value);
      session = await this.sealer.openSession(value);
    }
    const clear = cookieLine(this.policy.cookieName, '', req, '/', 0);
    const provider = await this.discovery.provider();
    const end = provider.kind === 'ready' ? provider.config.endSessionEndpoint : undefined;
    if (end === undefined) return { kind: 'answer', status: 200, body: 'signed out\n', headers: { 'set-cookie': [clear], 'cache-control': 'no-store', 'content-type': 'text/plain; charset=utf-8' } };
    const params = new URLSearchParams({ client_id: this.policy.clientId, post_logout_redirect_uri: `${req.publicScheme}://${req.facts.authority}/` });
    if (session?.idToken !== undefined) params.set('id_token_hint', session.idToken);
    return redirect(`${end}${end.includes('?') ? '&' : '?'}${params.toString()}`, [clear]);
  }

  /** exchange posts to the token endpoint (client_secret_basic) and gives the ID and refresh tokens, or what went wrong. */
  private async exchange(config: ProviderConfig, form: URLSearchParams): Promise<{ idToken: string; refreshToken?: string } | string> {
    const { clientId, clientSecret } = this.policy;
    // RFC 6749 §2.3.1: the client id and secret are form-urlencoded before Basic encodes them.
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
    let answer: { status: number; text: string };
    try {
      answer = await this.post(config.tokenEndpoint, form, basic);
    } catch (err) {
      return `the token endpoint could not be reached (${errorText(err)})`;
    }
    let doc: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(answer.text);
      if (typeof parsed === 'object' && parsed !== null) doc = parsed as Record<string, unknown>;
    } catch {
      // judged below by status and fields
    }
    if (answer.status !== 200) return `the token endpoint answered ${answer.status}${typeof doc.error === 'string' ? ` ${safeText(doc.error)}` : ''}`;
    if (typeof doc.id_token !== 'string') return 'the token endpoint gave no ID token';
    if (typeof doc.token_type !== 'string' || doc.token_type.toLowerCase() !== 'bearer') return 'the token endpoint gave a token type other than Bearer';
    return { idToken: doc.id_token, ...(typeof doc.refresh_token === 'string' ? { refreshToken: doc.refresh_token } : {}) };
  }

  /** verifyIdToken checks an ID token (OpenID Connect Core §3.1.3.7): signature with the provider's keys, iss, aud, azp, exp, iat, and the nonce of the login. */
  private async verifyIdToken(token: string, provider: { config: ProviderConfig; keys: RemoteKeys }, nonce: string | undefined): Promise<JWTPayload | string> {
    const { decodeProtectedHeader, jwtVerify } = await loadJose();
    let state = await provider.keys.keys();
    if (state.kind === 'unavailable') return `the provider's signing keys are not available (${state.reason})`;
    let kid: unknown;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return 'the ID token is malformed';
    }
    if (typeof kid === 'string' && !state.kids.has(kid)) {
      state = await provider.keys.refreshFor();
      if (state.kind === 'unavailable') return `the provider's signing keys are not available (${state.reason})`;
    }
    const named = provider.config.idTokenAlgorithms;
    const algorithms = named === undefined ? ID_TOKEN_ALGORITHMS : ID_TOKEN_ALGORITHMS.filter((a) => named.includes(a));
    try {
      const { payload } = await jwtVerify(token, await state.getKey(), {
        issuer: this.policy.issuer,
        audience: this.policy.clientId,
        algorithms,
        clockTolerance: clockSkewSeconds,
        currentDate: new Date(this.nowSeconds() * 1000),
        requiredClaims: ['exp', 'iat', 'sub'],
      });
      if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== this.policy.clientId) return 'the ID token is for another party (azp)';
      if (nonce !== undefined && payload.nonce !== nonce) return 'the ID token\'s nonce is not this sign-in\'s';
      return payload;
    } catch {
      return 'the ID token did not verify';
    }
  }

  private sessionOf(payload: JWTPayload, idToken: string, refreshToken: string | undefined): Session {
    const claims: Record<string, string> = {};
    for (const { claim } of this.policy.claimToHeaders) {
      const v = payload[claim];
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') continue;
      const text = String(v);
      if (isHeaderValue(text) && Buffer.byteLength(text) <= maxClaimHeaderBytes) claims[claim] = text;
    }
    return { sub: payload.sub!, claims, idExpires: payload.exp!, idToken, ...(refreshToken === undefined ? {} : { refreshToken }) };
  }

  /** sessionCookie seals a session into its Set-Cookie line; without the ID token hint if that is what makes it too large, else 502. */
  private async sessionCookie(session: Session, req: OidcRequest): Promise<string | OidcVerdict> {
    let sealed = await this.sealer.sealSession(session, this.policy.sessionSeconds);
    if (sealed.length > MAX_OIDC_COOKIE_BYTES && session.idToken !== undefined) {
      const { idToken: _hint, ...lean } = session;
      sealed = await this.sealer.sealSession(lean, this.policy.sessionSeconds);
    }
    if (sealed.length > MAX_OIDC_COOKIE_BYTES) return { kind: 'answer', status: 502, body: `the sign-in could not be completed: the session does not fit in a cookie (over ${MAX_OIDC_COOKIE_BYTES} bytes; fewer or shorter claims)\n`, headers: { 'cache-control': 'no-store' } };
    this.remember(sealed, session, Math.floor(this.nowSeconds()) + this.policy.sessionSeconds);
    return cookieLine(this.policy.cookieName, sealed, req, '/', undefined);
  }

  private pass(session: Session, setCookie?: string): OidcVerdict {
    const claimHeaders: HeaderMap = {};
    for (const { claim, header } of this.policy.claimToHeaders) {
      const v = session.claims[claim];
      if (v !== undefined) claimHeaders[header.toLowerCase()] = v;
    }
    return { kind: 'pass', claimHeaders, ...(setCookie === undefined ? {} : { setCookie }) };
  }

  /** remember keeps an opened session until its ID token or the cookie itself expires, whichever comes first. */
  private remember(value: string, session: Session, cookieExpires: number): void {
    if (this.remembered.size >= maxRemembered) this.remembered.delete(this.remembered.keys().next().value!);
    this.remembered.set(value, { session, until: Math.min(session.idExpires, cookieExpires) });
  }
}

/** redirectUri is the callback of the host the request came to, with the scheme the client used at the edge. */
function redirectUri(req: OidcRequest): string {
  return `${req.publicScheme}://${req.facts.authority}${OIDC_CALLBACK_PATH}`;
}

/** isLocalPath accepts a path of this host to go back to (never `//other` or `/\other`, which a browser reads as another host). */
function isLocalPath(target: string): boolean {
  return target.startsWith('/') && !/^\/[/\\]/.test(target) && !target.startsWith(OIDC_CALLBACK_PATH) && isHeaderValue(target);
}

/** cookieLine is a Set-Cookie value: HttpOnly, SameSite=Lax, Secure when the client used https; `maxAge` 0 clears it. */
function cookieLine(name: string, value: string, req: OidcRequest, path: string, maxAge: number | undefined): string {
  return `${name}=${value}; Path=${path}; HttpOnly; SameSite=Lax${req.publicScheme === 'https' ? '; Secure' : ''}${maxAge === undefined ? '' : `; Max-Age=${maxAge}`}`;
}

function redirect(location: string, cookies: string[]): OidcVerdict {
  return { kind: 'answer', status: 302, body: '', headers: { location, 'set-cookie': cookies, 'cache-control': 'no-store' } };
}

function badRequest(why: string): OidcVerdict {
  return { kind: 'answer', status: 400, body: `bad sign-in callback: ${why}\n`, headers: { 'cache-control': 'no-store' } };
}

function unavailable(reason: string): OidcVerdict {
  return { kind: 'answer', status: 503, body: `service unavailable: ${reason}\n`, headers: { 'retry-after': '10', 'cache-control': 'no-store' } };
}

/** safeText keeps an error code from the provider or the query printable and short. */
function safeText(text: string): string {
  return text.replace(/[^\w.\- ]/g, '?').slice(0, 64);
}
