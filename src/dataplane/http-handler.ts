import { normalizeHost } from './host.js';
import { headerValue } from './match.js';
import type { RequestFacts } from './match.js';
import { splitPathAndQuery } from './path-rewrite.js';
import { normalizeRequestPath } from './request-path.js';
import type { IncomingFacts } from './request-plan.js';
import { routeHttp } from './router.js';
import type { CompiledVirtualHost, EntryPoint, RouteTable } from './router.js';
import type { Downstream } from './exchange.js';
import type { HttpRoute } from '../model/index.js';
import type { CompiledPolicies } from './policies/compile.js';

// Most requests carry no query: one shared empty set (matchers only read it).
const noQuery = new URLSearchParams();

/** RoutedRequest is a parsed request and the route it takes. */
export interface RoutedRequest {
  facts: IncomingFacts;
  route: HttpRoute;
  vhost: CompiledVirtualHost;
  /** the route's compiled policies; undefined (the common case) when it has none */
  policies: CompiledPolicies | undefined;
}

/** RoutingFailure is why a request gets a local error instead of a route. */
export interface RoutingFailure {
  status: number;
  body: string;
  /** a redirect's `location` */
  headers?: Record<string, string>;
}

/** ConnectionFacts are what the carrier knows about the client. */
export interface ConnectionFacts {
  clientAddress: string;
  /** the scheme the client used at the edge (`https` when TLS was terminated anywhere) */
  scheme: 'http' | 'https';
  entry: EntryPoint;
  /**
   * set on a spliced HTTP/1.1 connection (spliced-http1.ts): the host the edge chose its binding
   * by. A request for another host that the binding has no virtual host for gets 421, not 404:
   * the client should send it on a connection of its own (RFC 9110 §15.5.20).
   */
  splicedHost?: string;
  /** the `x-forwarded-client-cert` value of a verified client certificate (TLS terminated here, client-identity.ts) */
  clientCertificate?: string;
}

/**
 * resolveRequest parses the request line and Host and routes it. A malformed target or Host is a
 * 400 for this request only (RFC 9110 §15.5.1); an unknown host or path is a 404. The path is
 * matched and forwarded in its normal form (request-path.ts); a path with an encoded slash is
 * redirected to its unescaped form (307), one with a bad percent-encoding is a 400.
 * `methodForMatch` lets an extended CONNECT WebSocket match routes as the GET it stands for
 * (RFC 8441 §5).
 */
export function resolveRequest(
  table: RouteTable,
  ds: Pick<Downstream, 'method' | 'target' | 'authority' | 'headers'>,
  conn: ConnectionFacts,
  methodForMatch: string = ds.method,
): RoutedRequest | RoutingFailure {
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(ds.method)) return { status: 400, body: 'malformed request method\n' };
  if (!ds.target.startsWith('/')) return { status: 400, body: 'malformed request target: it must start with /\n' };
  if (hasForbiddenTargetChar(ds.target)) return { status: 400, body: 'malformed request target\n' };
  const host = normalizeHost(ds.authority);
  if (host === undefined) return { status: 400, body: 'missing or malformed Host\n' };
  const { path: rawPath, search } = splitPathAndQuery(ds.target);
  const normal = normalizeRequestPath(rawPath);
  if (normal.kind === 'invalid') return { status: 400, body: `malformed request path: ${normal.reason}\n` };
  if (normal.kind === 'redirect') return { status: 307, body: '', headers: { location: normal.path + search } };
  const path = normal.path;
  const headers = ds.headers as Record<string, string | string[] | undefined>;
  const matchFacts: RequestFacts = { method: methodForMatch, path, headers, query: search === '' ? noQuery : new URLSearchParams(search) };
  const result = routeHttp(table, conn.entry, host, matchFacts);
  if (result.kind === 'misdirected') return { status: 421, body: `misdirected request: ${host} is not served on a connection for ${result.sni}\n` };
  if (result.kind === 'no-host' && conn.splicedHost !== undefined && host !== conn.splicedHost) {
    return { status: 421, body: `misdirected request: ${host} is not served on this connection\n` };
  }
  if (result.kind === 'no-host') return { status: 404, body: `no route for host ${host}\n` };
  if (result.kind === 'no-route') return { status: 404, body: `no route for ${path} on ${host}\n` };
  const proto = headerValue(headers, 'x-forwarded-proto');
  const facts: IncomingFacts = {
    method: ds.method,
    scheme: proto === 'https' || proto === 'http' ? proto : conn.scheme,
    authority: ds.authority,
    host,
    publicPort: conn.entry.publicPort,
    path,
    search,
    headers,
    clientAddress: conn.clientAddress,
    ...(conn.clientCertificate === undefined ? {} : { clientCertificate: conn.clientCertificate }),
  };
  return { facts, route: result.route, vhost: result.vhost, policies: result.policies };
}

/** hasForbiddenTargetChar finds whitespace, control characters or a fragment (RFC 9112 §3.2). */
function hasForbiddenTargetChar(target: string): boolean {
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f || c === 0x23) return true;
  }
  return false;
}
