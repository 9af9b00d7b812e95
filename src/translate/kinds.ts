/**
 * The table of kinds: every Kubernetes kind tuna reads, in one place. From it come the operator's
 * informers (src/operator/kube-objects.ts), the Snapshot type and `snapshotFromObjects` (so what
 * the file provider accepts), the route kinds of Gateway listeners, and the Gateway API features
 * the GatewayClass claims. A new kind is one entry here plus its translator.
 */
import type { V1ConfigMap, V1EndpointSlice, V1Ingress, V1IngressClass, V1Namespace, V1Secret, V1Service } from '@kubernetes/client-node';
import type { IGateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import type { IBackendTLSPolicy } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/BackendTLSPolicy';
import type { IGatewayClass } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GatewayClass';
import type { IGRPCRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GRPCRoute';
import type { IHTTPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute';
import type { IListenerSet } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/ListenerSet';
import type { IReferenceGrant } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/ReferenceGrant';
import type { ITLSRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/TLSRoute';
import type { ITCPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1alpha2/TCPRoute';
import type { IUDPRoute } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1alpha2/UDPRoute';
import { createHash } from 'node:crypto';
import type * as t from 'io-ts';
import { TUNA_GROUP, domainCodec, gatewayParametersCodec, routePolicyCodec, tcpPortCodec, tunnelCodec } from '../crd/index.js';
import type { Domain, GatewayParameters, RoutePolicy, TCPPort, Tunnel } from '../crd/index.js';
import { checkTlsPair } from './common/tls-pair.js';
import { jwksOfData, parseHtpasswd, parseOidcCookieSecret } from '../model/index.js';
import { backendTlsPolicyCodec, gatewayClassCodec, gatewayCodec, grpcRouteCodec, httpRouteCodec, listenerSetCodec, referenceGrantCodec, streamRouteCodec } from './gateway/codecs.js';

/** GATEWAY_GROUP is the Gateway API group. */
export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

/** Reader names a part of tuna that reads a kind from the snapshot. */
export type Reader = 'ingress' | 'service' | 'gateway' | 'crd' | 'endpoints';

/** GatewayRouteRole says which Gateway listeners a route kind attaches to, and how it is served. */
export interface GatewayRouteRole {
  /** listener protocols that serve the kind, in the order tuna reports supportedKinds */
  listenerProtocols: readonly string[];
  /** `http`: rules matched per request (with cross-kind hostname rules); `stream`: raw bytes to weighted backends */
  serving: 'http' | 'stream';
}

/** KindEntry is one row of the table of kinds. */
export interface KindEntry {
  kind: string;
  /** API group ('' for the core group) */
  group: string;
  /** versions the API serves it at, most preferred first; the operator watches the first one served */
  versions: readonly [string, ...string[]];
  /** the resource name in URLs (`/apis/<group>/<version>/<plural>`) */
  plural: string;
  /** the Snapshot list that holds its objects */
  key: string;
  /** from a CRD a cluster may lack (Gateway API, tuna.dev): absent is no error, and it is looked for again */
  optional: boolean;
  /** whether the operator lists and watches it (false: read from manifest files only) */
  watched: boolean;
  /** the parts that read it */
  readBy: readonly Reader[];
  /**
   * the codec its translator decodes it with (the fields it reads, each failure naming the field);
   * absent for core kinds, which the API server has validated and their translators read defensively
   */
  codec?: t.Decoder<unknown, unknown>;
  /** Gateway API conformance features that come with serving this kind (GatewayClass supportedFeatures) */
  features?: readonly string[];
  /** set for Gateway API route kinds */
  route?: GatewayRouteRole;
  /** redact makes the object safe for translators (drops key material) */
  redact?: (obj: Record<string, unknown>) => unknown;
  /** carries the operator's `tuna.dev/reservation` finalizer until the edge lets go of its reservation (docs/crds.md) */
  finalized?: boolean;
}

/** Typed carries, at the type level only, the TypeScript type of a kind's objects in the Snapshot. */
interface Typed<Obj> {
  readonly objectType?: Obj;
}

/** entry types a table row: `entry<V1Service>()({...})` keeps every field's literal type. */
function entry<Obj>() {
  return <const E extends KindEntry>(row: E): E & Typed<Obj> => row;
}

/**
 * KINDS is the table of kinds, in the order the operator starts its informers. Secrets are not
 * watched: watching every Secret of a cluster needs RBAC tuna should not ask for; the operator
 * reads by name the Secrets that listeners name (src/operator/referenced-secrets.ts).
 */
export const KINDS = [
  entry<V1Namespace>()({ kind: 'Namespace', group: '', versions: ['v1'], plural: 'namespaces', key: 'namespaces', optional: false, watched: true, readBy: ['gateway'] }),
  entry<V1Service>()({ kind: 'Service', group: '', versions: ['v1'], plural: 'services', key: 'services', optional: false, watched: true, readBy: ['service', 'ingress', 'gateway', 'crd'] }),
  entry<V1Secret>()({
    kind: 'Secret', group: '', versions: ['v1'], plural: 'secrets', key: 'secrets', optional: false, watched: false, readBy: ['ingress', 'gateway'],
    // metadata and type only reach a translator, plus the names of the data keys
    redact: withoutSecretData,
  }),
  entry<V1ConfigMap>()({
    // CA bundles (`ca.crt`) of BackendTLSPolicy `validation.caCertificateRefs` (Gateway API GEP-1897).
    // Watched, unlike Secrets: a CA certificate is public, and a watch sees a rotated bundle at once.
    kind: 'ConfigMap', group: '', versions: ['v1'], plural: 'configmaps', key: 'configMaps', optional: false, watched: true, readBy: ['gateway'],
    // only `ca.crt` reaches a translator: other keys of a ConfigMap are none of tuna's business
    redact: onlyCaBundle,
  }),
  entry<V1EndpointSlice>()({ kind: 'EndpointSlice', group: 'discovery.k8s.io', versions: ['v1'], plural: 'endpointslices', key: 'endpointSlices', optional: false, watched: true, readBy: ['endpoints'] }),
  entry<V1IngressClass>()({ kind: 'IngressClass', group: 'networking.k8s.io', versions: ['v1'], plural: 'ingressclasses', key: 'ingressClasses', optional: false, watched: true, readBy: ['ingress'] }),
  entry<V1Ingress>()({ kind: 'Ingress', group: 'networking.k8s.io', versions: ['v1'], plural: 'ingresses', key: 'ingresses', optional: false, watched: true, readBy: ['ingress'] }),
  entry<IGatewayClass>()({
    kind: 'GatewayClass', group: GATEWAY_GROUP, versions: ['v1'], plural: 'gatewayclasses', key: 'gatewayClasses', optional: true, watched: true, readBy: ['gateway'],
    codec: gatewayClassCodec,
  }),
  entry<IGateway>()({
    kind: 'Gateway', group: GATEWAY_GROUP, versions: ['v1'], plural: 'gateways', key: 'gateways', optional: true, watched: true, readBy: ['gateway'],
    codec: gatewayCodec,
    // Client certificate validation (spec.tls.frontend): the data plane terminates HTTPS and checks the
    // chain against the listener's ConfigMap CA bundle (test/e2e/dataplane-client-certs.test.ts).
    features: [
      'Gateway',
      'GatewayAddressEmpty',
      'GatewayFrontendClientCertificateValidation',
      'GatewayFrontendClientCertificateValidationInsecureFallback',
      'GatewayHTTPListenerIsolation',
      'GatewayHTTPSListenerDetectMisdirectedRequests',
      'GatewayPort8080',
      'GatewayStaticAddresses',
    ],
  }),
  entry<IListenerSet>()({
    // GEP-1713: more listeners for a Gateway that allows them (spec.allowedListeners), served on that
    // Gateway's address after its own listeners (src/translate/gateway/listener-sets.ts).
    kind: 'ListenerSet', group: GATEWAY_GROUP, versions: ['v1'], plural: 'listenersets', key: 'listenerSets', optional: true, watched: true, readBy: ['gateway'],
    codec: listenerSetCodec,
    // The 13 ListenerSet tests of the v1.6.3 suite pass (docs/conformance.md).
    features: ['ListenerSet'],
  }),
  entry<IHTTPRoute>()({
    kind: 'HTTPRoute', group: GATEWAY_GROUP, versions: ['v1'], plural: 'httproutes', key: 'httpRoutes', optional: true, watched: true, readBy: ['gateway'],
    codec: httpRouteCodec,
    route: { listenerProtocols: ['HTTP', 'HTTPS'], serving: 'http' },
    // Each name here passed its conformance tests (docs/conformance.md); backendRef header modifiers
    // (HTTPRouteBackendRequestHeaderModification) ride on the graph's ServiceBackend.
    features: [
      'HTTPRoute',
      'HTTPRoute303RedirectStatusCode',
      'HTTPRoute307RedirectStatusCode',
      'HTTPRoute308RedirectStatusCode',
      'HTTPRouteBackendProtocolH2C',
      'HTTPRouteBackendProtocolWebSocket',
      'HTTPRouteBackendRequestHeaderModification',
      'HTTPRouteBackendTimeout',
      'HTTPRouteCORS',
      'HTTPRouteDestinationPortMatching',
      'HTTPRouteHostRewrite',
      'HTTPRouteMethodMatching',
      'HTTPRouteNamedRouteRule',
      'HTTPRouteParentRefPort',
      'HTTPRoutePathRedirect',
      'HTTPRoutePathRewrite',
      'HTTPRoutePortRedirect',
      'HTTPRouteQueryParamMatching',
      'HTTPRouteRequestMirror',
      'HTTPRouteRequestMultipleMirrors',
      'HTTPRouteRequestPercentageMirror',
      'HTTPRouteRequestTimeout',
      'HTTPRouteResponseHeaderModification',
      'HTTPRouteRetry',
      'HTTPRouteRetryBackendTimeout',
      'HTTPRouteRetryConnectionError',
      'HTTPRouteSchemeRedirect',
    ],
  }),
  entry<IGRPCRoute>()({
    kind: 'GRPCRoute', group: GATEWAY_GROUP, versions: ['v1'], plural: 'grpcroutes', key: 'grpcRoutes', optional: true, watched: true, readBy: ['gateway'],
    codec: grpcRouteCodec,
    route: { listenerProtocols: ['HTTP', 'HTTPS'], serving: 'http' },
    features: ['GRPCRoute', 'GRPCRouteNamedRouteRule'],
  }),
  // Gateway API v1.6's standard channel serves TLSRoute and TCPRoute at v1 only, the experimental
  // channel (and older bundles) at v1alpha2 too; the spec fields tuna reads are the same.
  entry<ITLSRoute>()({
    kind: 'TLSRoute', group: GATEWAY_GROUP, versions: ['v1', 'v1alpha2'], plural: 'tlsroutes', key: 'tlsRoutes', optional: true, watched: true, readBy: ['gateway'],
    codec: streamRouteCodec,
    route: { listenerProtocols: ['TLS'], serving: 'stream' },
    // The data plane forwards the decrypted bytes of a TLS Terminate listener to its TLSRoutes'
    // backends (test/e2e/dataplane-tls.test.ts). TLSRouteModeMixed: the data plane picks a raw TLS
    // stream's listener by SNI before it applies that listener's mode (routeStream), so Terminate
    // and Passthrough listeners with different hostnames share a port.
    features: ['TLSRoute', 'TLSRouteModeMixed', 'TLSRouteModeTerminate'],
  }),
  entry<ITCPRoute>()({
    kind: 'TCPRoute', group: GATEWAY_GROUP, versions: ['v1', 'v1alpha2'], plural: 'tcproutes', key: 'tcpRoutes', optional: true, watched: true, readBy: ['gateway'],
    codec: streamRouteCodec,
    route: { listenerProtocols: ['TCP'], serving: 'stream' },
    // A Gateway's TCP listeners are served on its dedicated address: the operator names their ports in
    // the address reservation (src/operator/address-ports.ts) and the edge opens exactly those, within
    // its addressPortRange (the conformance tests use 9300-9321; docs/conformance.md).
    features: ['TCPRoute'],
  }),
  entry<IUDPRoute>()({
    // Gateway API v1.6 serves UDPRoute at v1 (standard channel) and v1alpha2 (experimental) alike. Its
    // rules are TCPRoute's (weighted backendRefs, no matches); the data plane forwards each UDP flow the
    // edge opens (docs/protocol.md §4.6) to one backend, chosen by weight when the flow starts.
    kind: 'UDPRoute', group: GATEWAY_GROUP, versions: ['v1', 'v1alpha2'], plural: 'udproutes', key: 'udpRoutes', optional: true, watched: true, readBy: ['gateway'],
    codec: streamRouteCodec,
    route: { listenerProtocols: ['UDP'], serving: 'stream' },
    // advertised once the suite's nine UDPRoute tests (GATEWAY-UDP) passed (docs/conformance.md)
    features: ['UDPRoute'],
  }),
  entry<IReferenceGrant>()({
    // v1beta1 first, as tuna always watched it (it is the stored version of v1.6's CRD); v1 where a
    // bundle serves v1 only
    kind: 'ReferenceGrant', group: GATEWAY_GROUP, versions: ['v1beta1', 'v1'], plural: 'referencegrants', key: 'referenceGrants', optional: true, watched: true, readBy: ['gateway'],
    codec: referenceGrantCodec,
    features: ['ReferenceGrant'],
  }),
  entry<IBackendTLSPolicy>()({
    // v1 in Gateway API v1.4 and later (v1.6's standard channel), v1alpha3 in older bundles; the fields tuna reads are the same
    kind: 'BackendTLSPolicy', group: GATEWAY_GROUP, versions: ['v1', 'v1alpha3'], plural: 'backendtlspolicies', key: 'backendTlsPolicies', optional: true, watched: true, readBy: ['gateway'],
    codec: backendTlsPolicyCodec,
    // The data plane verifies TLS backends with the policy's CA, hostname (SNI) and subjectAltNames
    // (test/e2e/dataplane-backend-tls.test.ts), and presents the Gateway's spec.tls.backend client
    // certificate: a Gateway field whose only use is TLS to backends, so its feature rides here.
    features: ['BackendTLSPolicy', 'BackendTLSPolicySANValidation', 'GatewayBackendClientCertificate'],
  }),
  entry<Domain>()({ kind: 'Domain', group: TUNA_GROUP, versions: ['v1alpha1'], plural: 'domains', key: 'domains', optional: true, watched: true, readBy: ['crd'], codec: domainCodec, finalized: true }),
  entry<TCPPort>()({ kind: 'TCPPort', group: TUNA_GROUP, versions: ['v1alpha1'], plural: 'tcpports', key: 'tcpPorts', optional: true, watched: true, readBy: ['crd'], codec: tcpPortCodec, finalized: true }),
  entry<Tunnel>()({ kind: 'Tunnel', group: TUNA_GROUP, versions: ['v1alpha1'], plural: 'tunnels', key: 'tunnels', optional: true, watched: true, readBy: ['crd'], codec: tunnelCodec, finalized: true }),
  entry<RoutePolicy>()({ kind: 'RoutePolicy', group: TUNA_GROUP, versions: ['v1alpha1'], plural: 'routepolicies', key: 'routePolicies', optional: true, watched: true, readBy: ['crd'], codec: routePolicyCodec }),
  entry<GatewayParameters>()({
    // named by a GatewayClass's parametersRef or a Gateway's infrastructure.parametersRef (src/translate/gateway/parameters.ts)
    kind: 'GatewayParameters', group: TUNA_GROUP, versions: ['v1alpha1'], plural: 'gatewayparameters', key: 'gatewayParameters', optional: true, watched: true, readBy: ['gateway'],
    codec: gatewayParametersCodec,
  }),
] as const;

/** KindRow is the type of one row of KINDS. */
export type KindRow = (typeof KINDS)[number];

/** KindName is a kind tuna reads. */
export type KindName = KindRow['kind'];

/** SnapshotKey names a Snapshot list. */
export type SnapshotKey = KindRow['key'];

/** ObjectOf is the TypeScript type of a row's objects. */
export type ObjectOf<R> = R extends Typed<infer Obj> ? Obj : never;

/**
 * Snapshot is everything the translators read, as plain Kubernetes objects: one list per kind of
 * the table (any served version of it). Lists are in no particular order; translators must not
 * depend on it. Secrets carry metadata and type only (no key material reaches the translators).
 */
export type Snapshot = { [R in KindRow as R['key']]: ObjectOf<R>[] };

/** RouteKindRow is a row of a Gateway API route kind. */
export type RouteKindRow = Extract<KindRow, { route: GatewayRouteRole }>;

/** RouteKind is a route kind tuna attaches to Gateway listeners. */
export type RouteKind = RouteKindRow['kind'];

/** StreamRouteKindRow is a row of a route kind served as raw streams or flows (TLSRoute, TCPRoute, UDPRoute). */
export type StreamRouteKindRow = Extract<RouteKindRow, { route: { serving: 'stream' } }>;

/** HttpRouteKind is a route kind matched per request (HTTPRoute, GRPCRoute). */
export type HttpRouteKind = Extract<RouteKindRow, { route: { serving: 'http' } }>['kind'];

/** StreamRouteKind is a route kind served as raw streams or flows. */
export type StreamRouteKind = StreamRouteKindRow['kind'];

/** CrdKind is one of tuna's own kinds (group tuna.dev). */
export type CrdKind = Extract<KindRow, { group: typeof TUNA_GROUP }>['kind'];

/** FinalizedKindRow is a row of a kind that carries the reservation finalizer. */
export type FinalizedKindRow = Extract<KindRow, { finalized: true }>;

/** FinalizedKind is a kind that carries the reservation finalizer (Domain, TCPPort, Tunnel). */
export type FinalizedKind = FinalizedKindRow['kind'];

/** ROUTE_KINDS are the rows of the route kinds, in table order. */
export const ROUTE_KINDS: readonly RouteKindRow[] = KINDS.filter((k): k is RouteKindRow => 'route' in k);

/** STREAM_ROUTE_KINDS are the rows of the route kinds served as raw streams, in table order. */
export const STREAM_ROUTE_KINDS: readonly StreamRouteKindRow[] = ROUTE_KINDS.filter((k): k is StreamRouteKindRow => k.route.serving === 'stream');

/** FINALIZED_KINDS are the rows of the kinds that carry the reservation finalizer, in table order. */
export const FINALIZED_KINDS: readonly FinalizedKindRow[] = KINDS.filter((k): k is FinalizedKindRow => 'finalized' in k && k.finalized);

const byGroupKind = new Map<string, KindRow>(KINDS.map((k) => [`${k.group}/${k.kind}`, k]));
const byKind = new Map<string, KindRow>(KINDS.map((k) => [k.kind, k]));

/** KindLike is what names a kind: an ObjectRef, an object, a Gateway API reference (absent fields take the reference's defaults). */
export interface KindLike {
  group?: string | null;
  kind?: string | null;
}

/**
 * isKind tells whether `ref` names `kind`, by kind alone (the group is the caller's to check, or
 * known). `kind` is a kind of the table, so a misspelt kind does not compile.
 */
export function isKind<R extends KindLike, K extends KindName>(ref: R | undefined, kind: K): ref is R & { kind: K } {
  return ref?.kind === kind;
}

/** isGroupKind tells whether `ref` names `kind` in the row's API group (an absent group is the core group ''). */
export function isGroupKind<R extends KindLike, K extends KindName>(ref: R | undefined, kind: K): ref is R & { kind: K } {
  return ref !== undefined && (ref.group ?? '') === rowOf(kind).group && ref.kind === kind;
}

/**
 * refersTo tells whether a Gateway API reference names `kind`, an absent group or kind taking the
 * row's (a parentRef defaults to Gateway, a backendRef to Service, a certificateRef to Secret:
 * Gateway API v1 ParentReference, BackendObjectReference, SecretObjectReference).
 */
export function refersTo(ref: KindLike | undefined, kind: KindName): boolean {
  const row = rowOf(kind);
  return (ref?.group ?? row.group) === row.group && (ref?.kind ?? kind) === kind;
}

/** isFinalizedKind tells a kind that carries the reservation finalizer. */
export function isFinalizedKind(kind: string | undefined): kind is FinalizedKind {
  return FINALIZED_KINDS.some((k) => k.kind === kind);
}

/** rowOf is the row of a kind of the table. */
function rowOf(kind: KindName): KindRow {
  return byKind.get(kind)!;
}

/** kindOf finds the row of an API group and kind. */
export function kindOf(group: string, kind: string): KindRow | undefined {
  return byGroupKind.get(`${group}/${kind}`);
}

/** emptySnapshot returns a snapshot with every list empty. */
export function emptySnapshot(): Snapshot {
  const lists: Partial<Record<SnapshotKey, unknown[]>> = {};
  for (const k of KINDS) lists[k.key] = [];
  return lists as Snapshot;
}

/** OidcClientSecret is what the snapshot keeps of a `tuna.dev/oidc` Secret: the client secret and the cookie key (base64url), or what is wrong, never quoting a value. */
export type OidcClientSecret = { kind: 'ok'; clientSecret: string; cookieKey: string } | { kind: 'invalid'; error: string };

function oidcClientOf(clientSecret: string | undefined, cookieSecret: string | undefined): OidcClientSecret {
  const secret = clientSecret?.trim() ?? '';
  if (secret === '') return { kind: 'invalid', error: 'key client-secret is missing or empty' };
  if (secret.length > 4096 || /[\r\n\0]/.test(secret)) return { kind: 'invalid', error: 'key client-secret is over 4096 bytes or has a line break' };
  if (cookieSecret === undefined) return { kind: 'invalid', error: 'key cookie-secret is missing' };
  const cookieKey = parseOidcCookieSecret(cookieSecret);
  if (cookieKey === undefined) return { kind: 'invalid', error: 'key cookie-secret is not 32 bytes as base64, base64url or hex' };
  return { kind: 'ok', clientSecret: secret, cookieKey };
}

/**
 * withoutSecretData keeps a Secret's metadata and type, the names of its data keys, and for a
 * `kubernetes.io/tls` Secret holding both keys what is wrong with its pair (`tlsPairProblem`,
 * checkTlsPair): translators see whether a certificate is usable, never the certificate.
 */
function withoutSecretData(secret: Record<string, unknown>): unknown {
  const { data, stringData, ...rest } = secret;
  const keys = Object.keys({ ...(data as object | undefined), ...(stringData as object | undefined) });
  const out: Record<string, unknown> = { ...rest, dataKeys: keys.sort() };
  // An htpasswd `auth` key (ingress-nginx's auth-secret) is kept only as its parsed hashes or line problems, never its text.
  const auth = secretValue(data, stringData, 'auth');
  if (auth !== undefined) out.authHtpasswd = parseHtpasswd(auth);
  // Key-auth Secrets (RoutePolicy keyAuth) reach a translator as SHA-256 digests of each value, never the values.
  if (rest.type === KEY_AUTH_SECRET_TYPE) out.keyDigests = Object.fromEntries(keys.map((k) => [k, createHash('sha256').update(secretValue(data, stringData, k) ?? '').digest('hex')]));
  // An OIDC client Secret (RoutePolicy oidc) is the one whose values reach a translator: the agent itself must send the client secret and seal cookies with the key.
  if (rest.type === OIDC_SECRET_TYPE) out.oidcClient = oidcClientOf(secretValue(data, stringData, 'client-secret'), secretValue(data, stringData, 'cookie-secret'));
  // JSON Web Key Sets (RoutePolicy jwt) reach a translator as their public signing keys, or what is wrong with them.
  const jwks = jwksOfData(Object.fromEntries(keys.map((k) => [k, secretValue(data, stringData, k)])));
  if (jwks) out.jwks = jwks;
  if (rest.type === 'kubernetes.io/tls') {
    const cert = secretValue(data, stringData, 'tls.crt');
    const key = secretValue(data, stringData, 'tls.key');
    if (cert !== undefined && key !== undefined) {
      const problem = checkTlsPair(cert, key);
      if (problem !== undefined) out.tlsPairProblem = problem;
    }
  }
  return out;
}

/** CA_BUNDLE_KEY is the ConfigMap key holding a PEM CA bundle (BackendTLSPolicy caCertificateRefs, GEP-1897). */
export const CA_BUNDLE_KEY = 'ca.crt';

/**
 * onlyCaBundle keeps a ConfigMap's metadata and its `ca.crt` key, dropping every other key; a
 * value that is a JSON Web Key Set (RoutePolicy jwt) is kept as its parse, in `jwks`.
 */
function onlyCaBundle(configMap: Record<string, unknown>): unknown {
  const { data, binaryData: _binary, ...rest } = configMap;
  const values = (data ?? {}) as Record<string, unknown>;
  const bundle = values[CA_BUNDLE_KEY];
  const jwks = jwksOfData(Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === 'string' ? v : undefined])));
  return { ...rest, ...(typeof bundle === 'string' ? { data: { [CA_BUNDLE_KEY]: bundle } } : {}), ...(jwks ? { jwks } : {}) };
}

/** KEY_AUTH_SECRET_TYPE is the Secret type of a RoutePolicy's key-auth keys (every data value is one accepted key). */
export const KEY_AUTH_SECRET_TYPE = 'tuna.dev/key-auth';

/** OIDC_SECRET_TYPE is the Secret type of a RoutePolicy's OpenID Connect client: keys `client-secret` and `cookie-secret` (32 bytes, base64 or hex). */
export const OIDC_SECRET_TYPE = 'tuna.dev/oidc';

/** secretValue is one key of a Secret as text: `stringData` (written as is) wins over `data` (base64), as the API server merges them. */
function secretValue(data: unknown, stringData: unknown, name: string): string | undefined {
  const plain = (stringData as Record<string, unknown> | undefined)?.[name];
  if (typeof plain === 'string') return plain;
  const encoded = (data as Record<string, unknown> | undefined)?.[name];
  return typeof encoded === 'string' ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
}
