import type { IncomingHttpHeaders } from 'node:http2';

/**
 * Host checks made before a request is routed (RFC 9112 §3.2, RFC 9113 §8.3.1). A request with two Host fields
 * was routed by the first while a backend may read the last: the edge and the service would
 * disagree on which tenant the request is for.
 */

/** BAD_HOST is the reply to a request whose Host fields are ambiguous. */
export const BAD_HOST = [400, 'bad request: ambiguous Host header\n'] as const;

/** http1HostProblem returns BAD_HOST when the raw header list holds more than one Host field. */
export function http1HostProblem(rawHeaders: readonly string[]): typeof BAD_HOST | undefined {
  // RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
  // request message that lacks a Host header field and to any request message that contains more
  // than one Host header field line or a Host header field with an invalid field value."
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === 'host') count++;
  return count > 1 ? BAD_HOST : undefined;
}

/** http2HostProblem returns BAD_HOST when a Host field disagrees with `:authority` (or is repeated). */
export function http2HostProblem(headers: IncomingHttpHeaders): typeof BAD_HOST | undefined {
  // RFC 9113 §8.3.1: a server SHOULD treat a request as malformed if it contains a Host header field
  // that identifies an entity that differs from the entity in the :authority pseudo-header field.
  const host: unknown = headers.host;
  if (host === undefined) return undefined;
  if (typeof host !== 'string') return BAD_HOST;
  const authority = headers[':authority'];
  if (authority === undefined) return undefined;
  return authority.toLowerCase() === host.toLowerCase() ? undefined : BAD_HOST;
}
