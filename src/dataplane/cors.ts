import type { CorsPolicy } from '../model/index.js';
import type { HeaderMap } from './headers.js';

/**
 * CORS (Fetch standard §3.2; Gateway API HTTPCORSFilter). The data plane answers preflights
 * itself and decorates simple responses; an origin that is not allowed gets no CORS headers, which
 * is how a browser learns it is refused.
 */

/** isPreflight says whether a request is a CORS preflight (OPTIONS with Origin and a method). */
export function isPreflight(method: string, headers: Record<string, unknown>): boolean {
  return method === 'OPTIONS' && typeof headers.origin === 'string' && typeof headers['access-control-request-method'] === 'string';
}

/** isOriginAllowed matches an origin against `*`, exact origins and `scheme://*.suffix` patterns. */
export function isOriginAllowed(policy: CorsPolicy, origin: string): boolean {
  return policy.allowOrigins.some((pattern) => {
    if (pattern === '*') return true;
    const star = pattern.indexOf('://*.');
    if (star < 0) return pattern.toLowerCase() === origin.toLowerCase();
    const scheme = pattern.slice(0, star + 3);
    const suffix = pattern.slice(star + 4).toLowerCase();
    const o = origin.toLowerCase();
    return o.startsWith(scheme) && o.endsWith(suffix) && o.length > scheme.length + suffix.length;
  });
}

/**
 * allowOriginValue is the Access-Control-Allow-Origin to send: `*` only when any origin is allowed
 * and credentials are not (a credentialed response must name the origin, Fetch §3.2.5).
 */
function allowOriginValue(policy: CorsPolicy, origin: string): string {
  return policy.allowOrigins.includes('*') && !policy.allowCredentials ? '*' : origin;
}

/**
 * preflightHeaders returns the headers of a 204 preflight answer (none if the origin is refused).
 * A `*` in allowMethods answers with the method asked for: browsers take a literal `*` only for
 * requests without credentials (Fetch §3.2.5), and naming the method is right in both cases.
 */
export function preflightHeaders(policy: CorsPolicy, origin: string, requestHeaders: string | undefined, requestMethod?: string): HeaderMap {
  if (!isOriginAllowed(policy, origin)) return {};
  const methods = policy.allowMethods.includes('*') ? (requestMethod ?? '*') : policy.allowMethods.join(', ');
  const out: HeaderMap = {
    'access-control-allow-origin': allowOriginValue(policy, origin),
    'access-control-allow-methods': methods,
    vary: 'Origin',
  };
  const allowHeaders = policy.allowHeaders.includes('*') ? (requestHeaders ?? '*') : policy.allowHeaders.join(', ');
  if (allowHeaders !== '') out['access-control-allow-headers'] = allowHeaders;
  if (policy.allowCredentials) out['access-control-allow-credentials'] = 'true';
  // Fetch reads Expose-Headers only on the actual response; Gateway API's HTTPRouteCORS conformance
  // test expects it on the preflight answer as well, and it is harmless there.
  if (policy.exposeHeaders.length > 0) out['access-control-expose-headers'] = policy.exposeHeaders.join(', ');
  if (policy.maxAgeSeconds !== undefined) out['access-control-max-age'] = String(policy.maxAgeSeconds);
  return out;
}

/** decorateSimpleResponse adds the CORS headers of an actual (non-preflight) response. */
export function decorateSimpleResponse(policy: CorsPolicy, origin: string | undefined, headers: HeaderMap): void {
  if (origin === undefined || !isOriginAllowed(policy, origin)) return;
  headers['access-control-allow-origin'] = allowOriginValue(policy, origin);
  if (policy.allowCredentials) headers['access-control-allow-credentials'] = 'true';
  if (policy.exposeHeaders.length > 0) headers['access-control-expose-headers'] = policy.exposeHeaders.join(', ');
  const vary = headers.vary;
  headers.vary = vary === undefined ? 'Origin' : `${Array.isArray(vary) ? vary.join(', ') : vary}, Origin`;
}
