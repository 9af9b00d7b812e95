/**
 * io-ts codecs of the Gateway API fields tuna reads. The snapshot is typed, but its objects come
 * from manifest files or the API server as plain data; a field of the wrong type (a number where a
 * hostname goes, `null` in a list of rules) must become a status condition naming the field
 * (`spec.rules[0].matches[1].path.type: expected a string`), not a crash and not a silently wider
 * match. Objects are loose (src/codec): fields tuna does not read are left alone.
 */
import { anyMapping, firstProblem, looseBoolean, looseList, looseNumber, looseObject, looseString, required } from '../../codec/index.js';
import type * as t from 'io-ts';

const str = looseString;
const num = looseNumber;
const bool = looseBoolean;
const list = looseList;

const backendRefFields = { group: str, kind: str, name: required(str), namespace: str, port: num, weight: num };
const backendRef = looseObject('BackendRef', backendRefFields);
const headerValue = looseObject('HTTPHeader', { name: required(str), value: required(str) });
const headerFilter = looseObject('HTTPHeaderFilter', { set: list(headerValue), add: list(headerValue), remove: list(str) });
const pathModifier = looseObject('HTTPPathModifier', { type: required(str), replaceFullPath: str, replacePrefixMatch: str });
const filter = looseObject('HTTPRouteFilter', {
  type: required(str),
  requestHeaderModifier: headerFilter,
  responseHeaderModifier: headerFilter,
  requestRedirect: looseObject('HTTPRequestRedirectFilter', { scheme: str, hostname: str, path: pathModifier, port: num, statusCode: num }),
  urlRewrite: looseObject('HTTPURLRewriteFilter', { hostname: str, path: pathModifier }),
  requestMirror: looseObject('HTTPRequestMirrorFilter', {
    backendRef: required(backendRef),
    percent: num,
    fraction: looseObject('Fraction', { numerator: required(num), denominator: num }),
  }),
  cors: looseObject('HTTPCORSFilter', {
    allowOrigins: list(str),
    allowMethods: list(str),
    allowHeaders: list(str),
    exposeHeaders: list(str),
    allowCredentials: bool,
    maxAge: num,
  }),
  extensionRef: looseObject('LocalObjectReference', { group: str, kind: str, name: str }),
  externalAuth: looseObject('HTTPExternalAuthFilter', {
    protocol: required(str),
    backendRef: required(looseObject('BackendObjectReference', { group: str, kind: str, name: required(str), namespace: str, port: num })),
    http: looseObject('HTTPAuthConfig', { path: str, allowedHeaders: list(str), allowedResponseHeaders: list(str) }),
    grpc: looseObject('GRPCAuthConfig', { allowedHeaders: list(str) }),
    forwardBody: looseObject('ForwardBodyConfig', { maxSize: num }),
  }),
});
const parentRefs = list(looseObject('ParentReference', { group: str, kind: str, namespace: str, name: required(str), sectionName: str, port: num }));
const namedMatch = looseObject('NamedMatch', { name: required(str), type: str, value: required(str) });
const ruleBackendRefs = list(looseObject('RuleBackendRef', { ...backendRefFields, filters: list(filter) }));
const parametersRef = looseObject('ParametersReference', { group: str, kind: str, name: str });

const httpRouteSpec = looseObject('HTTPRouteSpec', {
  parentRefs,
  hostnames: list(str),
  rules: list(
    looseObject('HTTPRouteRule', {
      matches: list(looseObject('HTTPRouteMatch', { path: looseObject('HTTPPathMatch', { type: str, value: str }), headers: list(namedMatch), queryParams: list(namedMatch), method: str })),
      filters: list(filter),
      backendRefs: ruleBackendRefs,
      timeouts: looseObject('HTTPRouteTimeouts', { request: str, backendRequest: str }),
      retry: looseObject('HTTPRouteRetry', { attempts: num, codes: list(num), backoff: str }),
    }),
  ),
});

const grpcRouteSpec = looseObject('GRPCRouteSpec', {
  parentRefs,
  hostnames: list(str),
  rules: list(
    looseObject('GRPCRouteRule', {
      matches: list(looseObject('GRPCRouteMatch', { method: looseObject('GRPCMethodMatch', { type: str, service: str, method: str }), headers: list(namedMatch) })),
      filters: list(filter),
      backendRefs: ruleBackendRefs,
    }),
  ),
});

const streamRouteSpec = looseObject('StreamRouteSpec', { parentRefs, hostnames: list(str), rules: list(looseObject('StreamRouteRule', { backendRefs: list(backendRef) })) });

const labelSelector = looseObject('LabelSelector', {
  matchLabels: anyMapping,
  matchExpressions: list(looseObject('LabelSelectorRequirement', { key: required(str), operator: required(str), values: list(str) })),
});

const listener = looseObject('Listener', {
  name: required(str),
  port: required(num),
  protocol: required(str),
  hostname: str,
  tls: looseObject('ListenerTLSConfig', {
    mode: str,
    certificateRefs: list(looseObject('SecretObjectReference', { group: str, kind: str, name: required(str), namespace: str })),
  }),
  allowedRoutes: looseObject('AllowedRoutes', {
    namespaces: looseObject('RouteNamespaces', { from: str, selector: labelSelector }),
    kinds: list(looseObject('RouteGroupKind', { group: str, kind: required(str) })),
  }),
});

const frontendValidation = looseObject('TLSConfig', {
  validation: looseObject('FrontendTLSValidation', {
    caCertificateRefs: list(looseObject('ObjectReference', { group: str, kind: str, name: required(str), namespace: str })),
    mode: str,
  }),
});

const gatewaySpec = looseObject('GatewaySpec', {
  gatewayClassName: required(str),
  addresses: list(anyMapping),
  infrastructure: looseObject('GatewayInfrastructure', { parametersRef }),
  tls: looseObject('GatewayTLSConfig', {
    backend: anyMapping,
    frontend: looseObject('FrontendTLSConfig', {
      default: frontendValidation,
      perPort: list(looseObject('TLSPortConfig', { port: required(num), tls: frontendValidation })),
    }),
  }),
  allowedListeners: looseObject('AllowedListeners', { namespaces: looseObject('ListenerNamespaces', { from: str, selector: labelSelector }) }),
  listeners: list(listener),
});

// A ListenerSet's entries are Listeners in all but name (ListenerEntry, GEP-1713).
const listenerSetSpec = looseObject('ListenerSetSpec', {
  parentRef: required(looseObject('ParentGatewayReference', { group: str, kind: str, name: required(str), namespace: str })),
  listeners: list(listener),
});

const gatewayClassSpec = looseObject('GatewayClassSpec', { controllerName: required(str), parametersRef });

const referenceGrantSpec = looseObject('ReferenceGrantSpec', {
  from: list(looseObject('ReferenceGrantFrom', { group: str, kind: required(str), namespace: required(str) })),
  to: list(looseObject('ReferenceGrantTo', { group: str, kind: required(str), name: str })),
});

const backendTlsPolicySpec = looseObject('BackendTLSPolicySpec', {
  targetRefs: list(looseObject('LocalPolicyTargetReferenceWithSectionName', { group: required(str), kind: required(str), name: required(str), sectionName: str })),
  validation: required(
    looseObject('BackendTLSPolicyValidation', {
      caCertificateRefs: list(looseObject('LocalObjectReference', { group: str, kind: required(str), name: required(str) })),
      wellKnownCACertificates: str,
      hostname: required(str),
      subjectAltNames: list(looseObject('SubjectAltName', { type: required(str), hostname: str, uri: str })),
    }),
  ),
});

const gatewayBackendTls = looseObject('GatewaySpec', {
  tls: looseObject('GatewayTLSConfig', {
    backend: looseObject('GatewayBackendTLS', { clientCertificateRef: looseObject('SecretObjectReference', { group: str, kind: str, name: required(str), namespace: str }) }),
  }),
});

/** objectWithSpec is the codec of a Gateway API object whose `spec` (when present) decodes with `spec`. */
function objectWithSpec(kind: string, spec: t.Mixed): t.Mixed {
  return looseObject(kind, { spec });
}

/** httpRouteCodec is the HTTPRoute tuna reads. */
export const httpRouteCodec = objectWithSpec('HTTPRoute', httpRouteSpec);

/** grpcRouteCodec is the GRPCRoute tuna reads. */
export const grpcRouteCodec = objectWithSpec('GRPCRoute', grpcRouteSpec);

/** streamRouteCodec is the TLSRoute / TCPRoute tuna reads (v1 and v1alpha2 alike). */
export const streamRouteCodec = objectWithSpec('StreamRoute', streamRouteSpec);

/** routeParentsCodec is the part of any route needed to find its parents. */
export const routeParentsCodec = objectWithSpec('Route', looseObject('RouteSpec', { parentRefs }));

/** gatewayCodec is the Gateway tuna reads. */
export const gatewayCodec = objectWithSpec('Gateway', gatewaySpec);

/** listenerSetCodec is the ListenerSet tuna reads (gateway.networking.k8s.io/v1, GEP-1713). */
export const listenerSetCodec = objectWithSpec('ListenerSet', listenerSetSpec);

/** gatewayClassCodec is the GatewayClass tuna reads. */
export const gatewayClassCodec = objectWithSpec('GatewayClass', gatewayClassSpec);

/** referenceGrantCodec is the ReferenceGrant tuna reads (v1 and v1beta1 alike). */
export const referenceGrantCodec = objectWithSpec('ReferenceGrant', referenceGrantSpec);

/** backendTlsPolicyCodec is the BackendTLSPolicy tuna reads (v1 and v1alpha3 alike). */
export const backendTlsPolicyCodec = objectWithSpec('BackendTLSPolicy', backendTlsPolicySpec);

/** gatewayBackendTlsCodec is the part of a Gateway naming the client certificate it presents to TLS backends. */
export const gatewayBackendTlsCodec = objectWithSpec('Gateway', gatewayBackendTls);

/**
 * malformedField returns the first field of `obj` that does not fit `codec`, as
 * `spec.<path>: <problem>` (absent and `null` fields count as absent), or undefined when it fits.
 */
export function malformedField(codec: t.Decoder<unknown, unknown>, obj: unknown): string | undefined {
  return firstProblem(codec, obj);
}
