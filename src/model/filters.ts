import type { HttpFilter, ServiceBackend } from './types.js';

/** filterBackend is the Service a filter sends requests to (a mirror's, an authorization's), if any. */
export function filterBackend(f: HttpFilter): ServiceBackend | undefined {
  return f.type === 'RequestMirror' || f.type === 'ExternalAuth' ? f.backend : undefined;
}

/** withFilterBackend is the filter with its Service replaced (a BackendTLSPolicy's TLS placed on it). */
export function withFilterBackend<F extends Extract<HttpFilter, { backend: ServiceBackend }>>(f: F, backend: ServiceBackend): F {
  return { ...f, backend };
}
