import type { ExternalAuth, HttpFilter, ServiceBackend } from './types.js';

/** filterBackend is the Service a filter sends requests to (a mirror's, an authorization's), if any. */
export function filterBackend(f: HttpFilter): ServiceBackend | undefined {
  return f.type === 'RequestMirror' || f.type === 'ExternalAuth' ? f.backend : undefined;
}

/** withFilterBackend is the filter with its Service replaced (a BackendTLSPolicy's TLS placed on it). */
export function withFilterBackend<F extends Extract<HttpFilter, { backend: ServiceBackend }>>(f: F, backend: ServiceBackend): F {
  return { ...f, backend };
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * validateExternalAuth checks an external authorization's own values (the filter's, a policy's);
 * the TLS of its Service, when a BackendTLSPolicy gave it one, is validate()'s to check.
 */
export function validateExternalAuth(id: string, f: ExternalAuth): string[] {
  const errors: string[] = [];
  const b = f.backend;
  if (!Number.isInteger(b.port) || b.port < 1 || b.port > 65535) errors.push(`${id}: invalid external auth port ${b.port}`);
  if (b.protocol !== 'http' && b.protocol !== 'h2c' && b.protocol !== 'h2') errors.push(`${id}: external auth over ${b.protocol}`);
  if (b.filters !== undefined) errors.push(`${id}: external auth backend with filters`);
  // ingress-nginx's auth-url is asked at its own path and query; the others prefix the request's path
  const badPath = f.semantics === 'nginx' ? /[#\s]/ : /[?#\s]/;
  if (f.pathPrefix !== '' && (!f.pathPrefix.startsWith('/') || badPath.test(f.pathPrefix))) errors.push(`${id}: invalid external auth path ${f.pathPrefix}`);
  for (const list of [f.requestHeaders, f.responseHeaders])
    if (list !== 'all') for (const h of list) if (!HEADER_NAME.test(h)) errors.push(`${id}: invalid external auth header name ${h}`);
  if (!Number.isInteger(f.forwardBodyBytes) || f.forwardBodyBytes < 0 || f.forwardBodyBytes > 65_535) errors.push(`${id}: invalid external auth body size ${f.forwardBodyBytes}`);
  if (!Number.isInteger(f.timeoutMs) || f.timeoutMs < 1 || f.timeoutMs > 300_000) errors.push(`${id}: invalid external auth timeout ${f.timeoutMs}`);
  if (f.signinUrl !== undefined && !/^https?:\/\/\S+$/.test(f.signinUrl)) errors.push(`${id}: invalid external auth sign-in URL`);
  return errors;
}
