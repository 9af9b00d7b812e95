import { decorateSimpleResponse, isPreflight, preflightHeaders } from '../cors.js';
import { applyHeaderModifier } from '../headers.js';
import type { HeaderMap } from '../headers.js';
import { headerValue } from '../match.js';
import { redirectLocation } from '../redirect.js';
import type { ForwardPlan, IncomingFacts, LocalAnswer } from '../request-plan.js';
import { tooLargeBody } from './body-limit.js';
import type { CompiledPolicies } from './compile.js';
import type { JwtVerdict } from './jwt.js';
import type { OidcVerdict } from './oidc.js';
import { withoutCookies } from './oidc-session.js';

/** PolicyRequest is what the policies look at: the parsed request and what the tunnel metadata says. */
export interface PolicyRequest {
  facts: IncomingFacts;
  /** the scheme the client used at the edge, from the stream's metadata (never X-Forwarded-Proto) */
  publicScheme: 'http' | 'https';
  /** true for a WebSocket handshake: no CORS preflight, no body */
  isUpgrade: boolean;
  /** set by the jwt check that passed: the claim headers to send to the backend */
  claimHeaders?: HeaderMap;
  /** set by the oidc check that passed: its claim headers, and a renewed session cookie to set on the response */
  oidc?: { claimHeaders: HeaderMap; setCookie?: string };
}

/**
 * checkPolicies runs the access policies of a route, in this order: IP allow/deny (403), HTTPS
 * redirect, rate limit (429), CORS preflight (204, before authentication: a browser sends a
 * preflight without credentials, Fetch §4.8), basic auth and key auth (401; with both, both
 * must pass), a JWT, an OpenID Connect session (oidc: the login redirect, its callback and
 * logout, or 401), and a declared body length over the maximum (413). It returns the local answer
 * that ends the request, or undefined to go on. Only a bcrypt or JWT verification (a credential
 * or token not remembered yet) makes it asynchronous.
 */
export function checkPolicies(p: CompiledPolicies, req: PolicyRequest): LocalAnswer | undefined | Promise<LocalAnswer | undefined> {
  const { facts } = req;
  if (p.ipFilter && !p.ipFilter.isAllowed(facts.clientAddress)) return answer(p, facts, 403, 'forbidden: the client address is not allowed\n');
  if (p.httpsRedirect && req.publicScheme === 'http') {
    const { statusCode, port } = p.httpsRedirect;
    // facts.host is normalised (normalizeHost): no port, an IPv6 literal keeps its brackets.
    const location = redirectLocation({ type: 'RequestRedirect', scheme: 'https', statusCode, ...(port === undefined ? {} : { port }) }, facts);
    return answer(p, facts, statusCode, '', { location });
  }
  if (p.limiter) {
    const decision = p.limiter.take(facts.clientAddress);
    if (decision.kind === 'limited') return answer(p, facts, 429, 'too many requests\n', { 'retry-after': String(decision.retryAfterSeconds) });
  }
  if (p.cors && !req.isUpgrade) {
    const origin = headerValue(facts.headers, 'origin');
    if (origin !== undefined && isPreflight(facts.method, facts.headers)) {
      const requested = headerValue(facts.headers, 'access-control-request-headers');
      const method = headerValue(facts.headers, 'access-control-request-method');
      return withResponseHeaders(p, { kind: 'local', status: 204, body: '', headers: preflightHeaders(p.cors, origin, requested, method) });
    }
  }
  if (p.basicAuth) {
    const checker = p.basicAuth;
    const after = (isGood: boolean): LocalAnswer | undefined | Promise<LocalAnswer | undefined> => (isGood ? checkAfterBasic(p, req) : answer(p, facts, 401, 'authentication required\n', { 'www-authenticate': checker.challenge }));
    const verdict = checker.check(facts.headers.authorization);
    return typeof verdict === 'boolean' ? after(verdict) : verdict.then(after);
  }
  return checkAfterBasic(p, req);
}

function checkAfterBasic(p: CompiledPolicies, req: PolicyRequest): LocalAnswer | undefined | Promise<LocalAnswer | undefined> {
  const { facts } = req;
  if (p.keyAuth && !p.keyAuth.isAccepted(facts.headers[p.keyAuth.header])) return answer(p, facts, 401, `missing or wrong key in header ${p.keyAuth.header}\n`);
  if (p.jwt) {
    const after = (v: JwtVerdict): LocalAnswer | undefined | Promise<LocalAnswer | undefined> => {
      if (v.kind === 'refuse') return answer(p, facts, v.status, v.body, { ...v.headers });
      req.claimHeaders = v.claimHeaders;
      return checkOidc(p, req);
    };
    const verdict = p.jwt.check(facts.headers);
    return verdict instanceof Promise ? verdict.then(after) : after(verdict);
  }
  return checkOidc(p, req);
}

function checkOidc(p: CompiledPolicies, req: PolicyRequest): LocalAnswer | undefined | Promise<LocalAnswer | undefined> {
  const { facts } = req;
  if (p.oidc) {
    const after = (v: OidcVerdict): LocalAnswer | undefined => {
      if (v.kind === 'answer') return answer(p, facts, v.status, v.body, { ...v.headers });
      req.oidc = v.setCookie === undefined ? { claimHeaders: v.claimHeaders } : { claimHeaders: v.claimHeaders, setCookie: v.setCookie };
      return checkBody(p, facts);
    };
    const verdict = p.oidc.check(req);
    return verdict instanceof Promise ? verdict.then(after) : after(verdict);
  }
  return checkBody(p, facts);
}

function checkBody(p: CompiledPolicies, facts: IncomingFacts): LocalAnswer | undefined {
  if (p.maxBodyBytes !== undefined) {
    const length = headerValue(facts.headers, 'content-length');
    if (length !== undefined && /^\d+$/.test(length) && Number(length) > p.maxBodyBytes) return answer(p, facts, 413, tooLargeBody(p.maxBodyBytes));
  }
  return undefined;
}

/** answer is a local answer carrying the policies' response headers and, for an allowed origin, CORS headers (else a browser hides the status). */
function answer(p: CompiledPolicies, facts: IncomingFacts, status: number, body: string, headers: HeaderMap = {}): LocalAnswer {
  if (p.cors) decorateSimpleResponse(p.cors, headerValue(facts.headers, 'origin'), headers);
  return withResponseHeaders(p, { kind: 'local', status, body, headers });
}

/** withResponseHeaders applies the response-header policy to a local answer. */
export function withResponseHeaders(p: CompiledPolicies, local: LocalAnswer): LocalAnswer {
  if (p.responseHeaders) applyHeaderModifier(local.headers, p.responseHeaders);
  return local;
}

/**
 * decoratePlan adds the shaping policies to a forward plan: request headers (after the route's
 * own filters, so the policy has the last word), the JWT's claim headers (every client-sent copy
 * of a claim header removed first, whether or not the token has the claim), response headers
 * (after the route's), and CORS on responses (the policy's replaces a route CORS filter's).
 */
export function decoratePlan(p: CompiledPolicies, plan: ForwardPlan, req: PolicyRequest): ForwardPlan {
  if (p.requestHeaders) applyHeaderModifier(plan.headers, p.requestHeaders);
  if (p.jwt) {
    for (const name of p.jwt.strip) delete plan.headers[name];
    Object.assign(plan.headers, req.claimHeaders);
  }
  if (p.oidc) {
    for (const name of p.oidc.strip) delete plan.headers[name];
    Object.assign(plan.headers, req.oidc?.claimHeaders);
    const cookie = withoutCookies(plan.headers.cookie, p.oidc.cookies);
    if (cookie === undefined) delete plan.headers.cookie;
    else plan.headers.cookie = cookie;
    if (req.oidc?.setCookie !== undefined) plan.responseModifiers.push({ set: [], add: [{ name: 'set-cookie', value: req.oidc.setCookie }], remove: [] });
  }
  if (p.responseHeaders) plan.responseModifiers.push(p.responseHeaders);
  if (p.cors) plan.cors = p.cors;
  return plan;
}

/**
 * gatePolicies runs checkPolicies and calls `then` with its verdict: at once when it was decided
 * synchronously (no promise on the path of a route without basic auth), else when it settles.
 */
export function gatePolicies(p: CompiledPolicies, req: PolicyRequest, then: (local: LocalAnswer | undefined) => void, onError: (err: unknown) => void): void {
  const verdict = checkPolicies(p, req);
  if (verdict instanceof Promise) verdict.then(then, onError);
  else then(verdict);
}
