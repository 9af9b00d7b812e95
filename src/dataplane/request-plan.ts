import type { CorsPolicy, HeaderModifier, HttpFilter, HttpRoute, ServiceBackend } from '../model/index.js';
import { CLIENT_CERT_HEADER } from './client-identity.js';
import { decorateSimpleResponse, isPreflight, preflightHeaders } from './cors.js';
import { appendForwardedFor, applyHeaderModifier, stripHopByHop } from './headers.js';
import type { HeaderMap } from './headers.js';
import { headerValue } from './match.js';
import { rewritePath } from './path-rewrite.js';
import { redirectLocation } from './redirect.js';

/** ExternalAuthFilter is the ExternalAuth filter of the route graph (external-auth.ts). */
export type ExternalAuthFilter = Extract<HttpFilter, { type: 'ExternalAuth' }>;

/** Mirror is the RequestMirror filter of the route graph. */
export type MirrorFilter = Extract<HttpFilter, { type: 'RequestMirror' }>;

/** IncomingFacts is the parsed request a plan is made from. */
export interface IncomingFacts {
  method: string;
  scheme: string;
  authority: string;
  host: string;
  /** the port the client connected to at the edge */
  publicPort: number;
  path: string;
  search: string;
  headers: Record<string, string | string[] | undefined>;
  clientAddress: string;
  /** the `x-forwarded-client-cert` value of the connection's verified client certificate, if any */
  clientCertificate?: string;
}

/** ForwardPlan is what to send upstream and how to treat the response. */
export interface ForwardPlan {
  kind: 'forward';
  method: string;
  authority: string;
  /** path and query to send */
  target: string;
  headers: HeaderMap;
  responseModifiers: HeaderModifier[];
  cors: CorsPolicy | undefined;
  origin: string | undefined;
  mirrors: MirrorFilter[];
  /** the route's external authorization, asked before the request is forwarded (external-auth.ts) */
  externalAuth: ExternalAuthFilter | undefined;
}

/** LocalAnswer is a response the data plane gives itself (redirect, preflight, direct response). */
export interface LocalAnswer {
  kind: 'local';
  status: number;
  body: string;
  headers: HeaderMap;
}

/**
 * planRequest applies a route's filters in their listed order (Gateway API: filters run in order;
 * a redirect or a direct response ends the chain) and prepares the upstream request: hop-by-hop
 * headers removed (RFC 9110 §7.6.1), `te: trailers` kept for gRPC, X-Forwarded-* completed.
 */
export function planRequest(route: HttpRoute, req: IncomingFacts): ForwardPlan | LocalAnswer {
  const plan: ForwardPlan = {
    kind: 'forward',
    method: req.method,
    authority: req.authority,
    target: req.path + req.search,
    headers: stripHopByHop(req.headers, true),
    responseModifiers: [],
    cors: undefined,
    origin: headerValue(req.headers, 'origin'),
    mirrors: [],
    externalAuth: undefined,
  };
  // Only the data plane speaks for a client certificate: whatever a client sent under that name
  // is dropped before any filter runs, and the verified identity (if any) is set after them.
  delete plan.headers[CLIENT_CERT_HEADER];
  let path = req.path;
  for (const f of route.filters) {
    switch (f.type) {
      case 'RequestHeaderModifier':
        applyHeaderModifier(plan.headers, f);
        break;
      case 'ResponseHeaderModifier':
        plan.responseModifiers.push(f);
        break;
      case 'RequestRedirect':
        return { kind: 'local', status: f.statusCode, body: '', headers: { location: redirectLocation(f, req) } };
      case 'URLRewrite':
        if (f.hostname !== undefined) plan.authority = f.hostname;
        if (f.path) path = rewritePath(req.path, f.path);
        break;
      case 'RequestMirror':
        plan.mirrors.push(f);
        break;
      case 'CORS':
        plan.cors = f;
        if (plan.origin !== undefined && isPreflight(req.method, req.headers)) {
          const requested = headerValue(req.headers, 'access-control-request-headers');
          const method = headerValue(req.headers, 'access-control-request-method');
          return { kind: 'local', status: 204, body: '', headers: preflightHeaders(f, plan.origin, requested, method) };
        }
        break;
      case 'DirectResponse':
        return { kind: 'local', status: f.statusCode, body: f.body ?? '', headers: {} };
      case 'ExternalAuth':
        plan.externalAuth = f;
        break;
    }
  }
  plan.target = path + req.search;
  completeForwardedHeaders(plan.headers, req);
  if (req.clientCertificate !== undefined) plan.headers[CLIENT_CERT_HEADER] = req.clientCertificate;
  return plan;
}

function completeForwardedHeaders(headers: HeaderMap, req: IncomingFacts): void {
  appendForwardedFor(headers, req.clientAddress);
  headers['x-forwarded-proto'] ??= req.scheme;
  headers['x-forwarded-host'] ??= req.authority;
}

/**
 * planForBackend adds the filters of the backend one attempt goes to (Gateway API
 * HTTPBackendRef.filters: run "if and only if the request is being forwarded to the backend"),
 * after the route's, so on the same header the backend's wins. `plan` itself is never changed: a
 * retry that picks another backend starts again from the route's headers. Without backend filters
 * the plan is returned as it is (no copy on the common path).
 */
export function planForBackend(plan: ForwardPlan, backend: ServiceBackend): ForwardPlan {
  if (!backend.filters) return plan;
  const out: ForwardPlan = { ...plan, headers: { ...plan.headers }, responseModifiers: [...plan.responseModifiers] };
  for (const f of backend.filters) {
    if (f.type === 'RequestHeaderModifier') applyHeaderModifier(out.headers, f);
    else out.responseModifiers.push(f);
  }
  return out;
}

/** planResponseHeaders prepares a backend's response headers for the client. */
export function planResponseHeaders(plan: ForwardPlan, upstream: Record<string, string | string[] | undefined>): HeaderMap {
  const headers = stripHopByHop(upstream);
  for (const mod of plan.responseModifiers) applyHeaderModifier(headers, mod);
  if (plan.cors) decorateSimpleResponse(plan.cors, plan.origin, headers);
  return headers;
}
