import type { RoutePolicies } from './policies.js';

/**
 * The route graph: one plain-data, serialisable structure that every source (Ingress, Service,
 * Gateway API, tuna.dev CRDs, manifest files) translates into and every consumer (tunnel manager,
 * data plane, reconciler) reads. Nodes are flat lists linked by path-like ids so that a consumer can
 * diff them cheaply; see docs/route-graph.md.
 */

/** SourceRef names the Kubernetes object (and optionally the part of it) a graph node came from. */
export interface SourceRef {
  group: string;
  kind: string;
  namespace?: string;
  name: string;
  /** section inside the object: a Gateway listener name, `rule/0/match/1`, a port name … */
  section?: string;
}

/** BindingKind says how the edge addresses a binding: by Host/SNI, by TCP port, or by an IP of its own. */
export type BindingKind = 'host' | 'tcp-port' | 'address';

/**
 * Binding is one public address at the edge, served by one set of tunnels with one scoped key.
 * Changing a binding reconnects its tunnels; nothing else does.
 */
export interface Binding {
  /** `binding/host/app.example.com`, `binding/tcp-port/<ns>/<name>/<port>`, `binding/address/<ns>/<name>` */
  id: string;
  kind: BindingKind;
  /** hostnames this binding claims on the edge's shared HTTP(S) listeners (exact or `*.suffix`) */
  hostnames: string[];
  /** tcp-port: the edge port asked for; 0 means any port from the edge's pool */
  port?: number;
  /** tcp-port: `udp` when the port carries UDP datagrams (its key is a `udp` key); absent means TCP */
  transport?: 'udp';
  /** address: the IPs the source asks for (a Gateway's `spec.addresses`); absent: any from the edge's pool */
  addresses?: string[];
  /** tunnel connections per edge node each replica holds for this binding (GatewayParameters); absent: the operator's default */
  connections?: number;
  /**
   * address: present when the Gateway has a data plane of its own (GatewayParameters `dataPlane:
   * Dedicated`): pods run for it alone hold its tunnels, and the shared operator's do not
   */
  dedicated?: DedicatedDataPlane;
  /** policies every HTTP route of this binding gets unless the route has its own of that kind (policies.ts) */
  policies?: RoutePolicies;
  source: SourceRef;
}

/** DedicatedDataPlane is how a Gateway's own pods run (GatewayParameters `spec.deployment`); every field is optional. */
export interface DedicatedDataPlane {
  replicas?: number;
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
  nodeSelector?: Record<string, string>;
  tolerations?: { key?: string; operator?: 'Exists' | 'Equal'; value?: string; effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute'; tolerationSeconds?: number }[];
}

/** ListenerProtocol is what a listener speaks to the public client. */
export type ListenerProtocol = 'http' | 'https' | 'tls' | 'tcp' | 'udp';

/**
 * TlsMode says who terminates TLS: the edge with its own certificate, the operator in the cluster
 * with a Secret (the edge routes raw TLS by SNI), or the backend itself (passthrough).
 */
export type TlsMode = 'edge' | 'terminate-in-cluster' | 'passthrough';

/** SecretRef names a `kubernetes.io/tls` Secret. */
export interface SecretRef {
  namespace: string;
  name: string;
}

/**
 * ClientValidationMode is Gateway API FrontendValidationModeType: `AllowValidOnly` refuses a client
 * without a certificate that chains to the CA bundle; `AllowInsecureFallback` accepts it anyway
 * (the backend is then told no identity).
 */
export type ClientValidationMode = 'AllowValidOnly' | 'AllowInsecureFallback';

/**
 * ClientValidation is the client certificate validation of a terminating HTTPS listener (Gateway
 * `spec.tls.frontend`, GEP-91). The CA bundle is public data (a ConfigMap's `ca.crt`), so it rides
 * in the graph, unlike the listener's own key material.
 */
export interface ClientValidation {
  /** PEM CA certificates the client's chain must lead to (the referenced bundles, concatenated) */
  caPem: string;
  mode: ClientValidationMode;
}

/** ListenerTls is how one listener handles TLS. */
export interface ListenerTls {
  mode: TlsMode;
  /** certificates for `terminate-in-cluster`, in the order the source listed them */
  certificates: SecretRef[];
  /** client certificate validation (`terminate-in-cluster` HTTPS listeners only); absent: none asked */
  clientValidation?: ClientValidation;
}

/** Listener is one port and protocol of a binding, optionally limited to a hostname. */
export interface Listener {
  /** `<binding id>/listener/<name>` (a Gateway API ListenerSet's: `<binding id>/listener/listenerset/<ns>/<set>/<name>`) */
  id: string;
  bindingId: string;
  name: string;
  port: number;
  protocol: ListenerProtocol;
  /** hostname restriction (Gateway listener hostname); absent means any */
  hostname?: string;
  tls?: ListenerTls;
  source: SourceRef;
}

/** VirtualHost is a hostname on a listener with its HTTP routes in precedence order. */
export interface VirtualHost {
  /** `<listener id>/vhost/<hostname>` */
  id: string;
  listenerId: string;
  /** exact (`a.example.com`), wildcard (`*.example.com`) or `*` for any host */
  hostname: string;
  routes: HttpRoute[];
}

/** PathMatch matches the request path; Prefix is element-wise (`/a` matches `/a/b`, not `/ab`). */
export interface PathMatch {
  type: 'Exact' | 'Prefix' | 'RegularExpression';
  value: string;
}

/** StringMatch matches one header or query parameter by name. */
export interface StringMatch {
  name: string;
  type: 'Exact' | 'RegularExpression';
  value: string;
}

/** HttpMatch is one conjunction of conditions; a request must satisfy all of them. */
export interface HttpMatch {
  path: PathMatch;
  method?: string;
  headers: StringMatch[];
  query: StringMatch[];
}

/** HeaderValue is one header name and value. */
export interface HeaderValue {
  name: string;
  value: string;
}

/** HeaderModifier sets, adds and removes headers (Gateway API HTTPHeaderFilter semantics). */
export interface HeaderModifier {
  set: HeaderValue[];
  add: HeaderValue[];
  remove: string[];
}

/**
 * PathModifier rewrites a path: the whole path, or the prefix the route matched (the matched
 * prefix is carried so the data plane needs no back-reference to the match).
 */
export type PathModifier =
  | { type: 'ReplaceFullPath'; value: string }
  | { type: 'ReplacePrefixMatch'; value: string; matchedPrefix: string };

/** CorsPolicy is the Gateway API CORS filter, normalised. */
export interface CorsPolicy {
  allowOrigins: string[];
  allowMethods: string[];
  allowHeaders: string[];
  exposeHeaders: string[];
  allowCredentials: boolean;
  maxAgeSeconds?: number;
}

/**
 * ExternalAuth asks an authorization Service about each request before it is forwarded: Gateway
 * API's HTTPRoute `ExternalAuth` filter in HTTP mode (GEP-1494) and ingress-nginx's `auth-url`
 * (docs/dataplane.md "External authorization").
 */
export interface ExternalAuth {
  /** the authorization Service port (HTTP, h2c or h2; TLS from a BackendTLSPolicy) */
  backend: ServiceBackend;
  /**
   * 'gateway': prepended to the request's path (its query kept) in the authorization request, ''
   * for none; 'nginx': the auth-url's own path and query, asked as they are
   */
  pathPrefix: string;
  /**
   * the client's headers sent to it besides `Host`, `Authorization` and `Content-Length` (which
   * always go), lowercase; 'all': every end-to-end header the client sent
   */
  requestHeaders: string[] | 'all';
  /** the headers of an allowing answer copied into the request to the backend, lowercase; 'all': every end-to-end one but Host */
  responseHeaders: string[] | 'all';
  /** bytes of the request body sent along (0: none); a longer body is refused with 413 */
  forwardBodyBytes: number;
  /** how long the answer may take, ms; past it the request gets 503 */
  timeoutMs: number;
  /**
   * how the answer is read. 'gateway' (HTTPExternalAuthFilter): 200 allows, any other status is
   * the client's answer. 'nginx' (ingress-nginx auth-url): 2xx allows, 401 and 403 are the client's
   * answer, others become 500; with `signinUrl` a 401 becomes a 302 there.
   */
  semantics: 'gateway' | 'nginx';
  /** ingress-nginx auth-signin: where a 401 sends a browser, with `rd` set to the URL it asked for */
  signinUrl?: string;
}

/** HttpFilter is one request or response transformation, applied in the listed order. */
export type HttpFilter =
  | ({ type: 'RequestHeaderModifier' } & HeaderModifier)
  | ({ type: 'ResponseHeaderModifier' } & HeaderModifier)
  | {
      type: 'RequestRedirect';
      scheme?: string;
      hostname?: string;
      path?: PathModifier;
      port?: number;
      statusCode: number;
    }
  | { type: 'URLRewrite'; hostname?: string; path?: PathModifier }
  | { type: 'RequestMirror'; backend: ServiceBackend; percent: number }
  | ({ type: 'CORS' } & CorsPolicy)
  | { type: 'DirectResponse'; statusCode: number; body?: string }
  | ({ type: 'ExternalAuth' } & ExternalAuth);

/**
 * BackendFilter is a filter of one backend reference (Gateway API HTTPBackendRef.filters): it runs
 * if and only if the request is forwarded to that backend, after the route's own filters.
 */
export type BackendFilter = Extract<HttpFilter, { type: 'RequestHeaderModifier' | 'ResponseHeaderModifier' }>;

/** BackendProtocol is how the data plane talks to a backend. */
export type BackendProtocol = 'http' | 'h2c' | 'h2' | 'ws' | 'tcp' | 'tls' | 'udp';

/** ServiceBackend is a Service port, resolved to ready endpoints at request time. */
export interface ServiceBackend {
  kind: 'service';
  namespace: string;
  service: string;
  /** the Service port number */
  port: number;
  /** the Service port name ('' when unnamed): EndpointSlice ports are matched by it */
  portName: string;
  protocol: BackendProtocol;
  weight: number;
  /** filters applied only to requests sent to this backend (HTTP routes only); absent means none */
  filters?: BackendFilter[];
  /** TLS to the backend (Gateway API BackendTLSPolicy, GEP-1897); absent means plain text */
  tls?: BackendTls;
}

/** BackendTlsCa is what the backend's certificate must chain to: PEM CA certificates, or the system's well-known CAs. */
export type BackendTlsCa = { kind: 'pem'; pem: string } | { kind: 'system' };

/** BackendSubjectAltName is one name the backend's certificate may carry (BackendTLSPolicy subjectAltNames). */
export interface BackendSubjectAltName {
  type: 'Hostname' | 'URI';
  value: string;
}

/**
 * BackendTls is how the data plane speaks TLS to a backend: `serverName` is sent as SNI and, when
 * `subjectAltNames` is absent, is the name the certificate must be valid for; with
 * `subjectAltNames`, the certificate must carry one of them instead (GEP-1897). The client
 * certificate (Gateway `spec.tls.backend.clientCertificateRef`) is named, never held: its key
 * stays in the data plane's CertificateSource.
 */
export interface BackendTls {
  serverName: string;
  ca: BackendTlsCa;
  subjectAltNames?: BackendSubjectAltName[];
  clientCertificate?: SecretRef;
}

/**
 * UnavailableBackend keeps the traffic share of a backend reference that could not be resolved;
 * requests sent to it get `statusCode` (Gateway API: 500). It never names the bad target.
 */
export interface UnavailableBackend {
  kind: 'unavailable';
  weight: number;
  statusCode: number;
  reason: string;
}

/** Backend is one weighted destination of a route. */
export type Backend = ServiceBackend | UnavailableBackend;

/** Timeouts in milliseconds; absent means the data plane default, 0 means no timeout at all. */
export interface RouteTimeouts {
  requestMs?: number;
  backendRequestMs?: number;
}

/** RetryPolicy retries idempotent failures on the listed status codes. */
export interface RetryPolicy {
  attempts: number;
  codes: number[];
  backoffMs?: number;
}

/**
 * RouteOrigin is what breaks precedence ties between equally specific matches (Gateway API
 * HTTPRoute "Matching precedence": oldest route, then namespace/name, then rule and match order).
 */
export interface RouteOrigin {
  /** creation timestamp of the source object (RFC 3339), '' if unknown */
  created: string;
  /** `<namespace>/<name>` of the source object */
  key: string;
  rule: number;
  match: number;
}

/** HttpRoute is one match of one rule, with its filters and weighted backends. */
export interface HttpRoute {
  /** `<source path>/rule/<n>/match/<m>` — unique within the graph */
  id: string;
  source: SourceRef;
  origin: RouteOrigin;
  match: HttpMatch;
  filters: HttpFilter[];
  backends: Backend[];
  timeouts?: RouteTimeouts;
  retry?: RetryPolicy;
  /** policies applied by the data plane before a backend is called (policies.ts); absent means none */
  policies?: RoutePolicies;
}

/** StreamRoute forwards raw TCP, or TLS chosen by SNI, from a listener to backends. */
export interface StreamRoute {
  id: string;
  listenerId: string;
  source: SourceRef;
  /** SNI names for TLS listeners (exact or `*.suffix`); empty means any */
  hostnames: string[];
  backends: Backend[];
}

/** ReclaimPolicy says what happens to an edge reservation when its resource is deleted. */
export type ReclaimPolicy = 'Delete' | 'Retain';

/** Reservation is an address held at the edge for the account, declared by a resource in git. */
export interface Reservation {
  /** `reservation/domain/<hostname>` or `reservation/tcp-port/<ns>/<name>` */
  id: string;
  kind: 'domain' | 'tcp-port';
  hostname?: string;
  /** tcp-port: the port asked for; 0 means any */
  port?: number;
  reclaimPolicy: ReclaimPolicy;
  source: SourceRef;
}

/** RouteGraph is the whole desired state; every list is sorted by id (see canonicalize). */
export interface RouteGraph {
  bindings: Binding[];
  listeners: Listener[];
  virtualHosts: VirtualHost[];
  streamRoutes: StreamRoute[];
  reservations: Reservation[];
}

/** emptyGraph returns a graph with no nodes. */
export function emptyGraph(): RouteGraph {
  return { bindings: [], listeners: [], virtualHosts: [], streamRoutes: [], reservations: [] };
}
