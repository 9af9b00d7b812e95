/**
 * Condition reasons, one table per API (docs/architecture.md). A translator's reason is typed by
 * its table, so a misspelt or invented reason does not compile. Gateway API objects carry the
 * Gateway API's own reasons (gateway.networking.k8s.io/v1: GatewayClass, Gateway, Listener and
 * Route condition reasons), plus the few tuna adds where the spec leaves the reason to the
 * implementation; Ingress, Service and tuna.dev objects carry tuna's own. The operator writes
 * from the same tables (what the edge holds, src/operator); the builders of ./status.ts take them.
 */

/** GATEWAY_REASONS are the reasons of conditions on Gateway API objects. */
export const GATEWAY_REASONS = [
  // shared by every Gateway API kind
  'Accepted',
  'Programmed',
  'ResolvedRefs',
  'Invalid',
  'Pending',
  // GatewayClass
  'InvalidParameters',
  'SupportedVersion',
  'UnsupportedVersion',
  // Gateway
  'ListenersNotValid',
  'UnsupportedAddress',
  'AddressNotAssigned',
  'AddressNotUsable',
  'NoResources',
  // ListenerSet (GEP-1713)
  'NotAllowed',
  'ParentNotAccepted',
  'ParentNotProgrammed',
  // Gateway (spec.tls.frontend, GEP-91)
  'ConfigurationChanged',
  // Listener
  'HostnameConflict',
  'ProtocolConflict',
  'NoConflicts',
  'PortUnavailable',
  'UnsupportedProtocol',
  'InvalidCertificateRef',
  'InvalidRouteKinds',
  'RefNotPermitted',
  'InvalidCACertificateRef',
  'InvalidCACertificateKind',
  'NoValidCACertificate',
  // Routes
  'NotAllowedByListeners',
  'NoMatchingListenerHostname',
  'NoMatchingParent',
  'UnsupportedValue',
  'BackendNotFound',
  'InvalidKind',
  'IncompatibleFilters',
  // BackendTLSPolicy (GEP-1897) and policies (GEP-713)
  'Conflicted',
  'InvalidCACertificateRef',
  'NoValidCACertificate',
  'TargetNotFound',
  // Gateway spec.tls.backend
  'InvalidClientCertificateRef',
  // tuna's own, where the spec leaves the reason to the implementation
  'ExternalNameService',
  'PartiallyInvalid',
  'DuplicateObject',
  // tuna's Published condition of a Gateway the edge serves on some of its ports only (src/operator/held-back.ts)
  'PartiallyPublished',
] as const;

/** GatewayReason is a reason of a condition on a Gateway API object. */
export type GatewayReason = (typeof GATEWAY_REASONS)[number];

/** TUNA_REASONS are the reasons of tuna's conditions on Ingress, Service and tuna.dev objects (docs/translators/*.md). */
export const TUNA_REASONS = [
  // healthy and summary states
  'Accepted',
  'ResolvedRefs',
  'NoConflicts',
  'Published',
  'PartiallyPublished',
  'NotPublished',
  'Pending',
  // the spec as written
  'InvalidSpec',
  'InvalidHost',
  'InvalidHostname',
  'HostnameIsIPAddress',
  'GeneratedHostnameInvalid',
  'CustomDomainInBaseDomain',
  'InvalidPath',
  'InvalidPort',
  'InvalidServicePort',
  'InvalidBackend',
  'UnsupportedBackendKind',
  'UnsupportedProtocol',
  'NoRules',
  'NoPorts',
  'TLSWithoutHosts',
  'TLSHostWithoutRule',
  // references
  'ServiceNotFound',
  'ServicePortNotFound',
  'ExternalNameService',
  'TLSSecretNotFound',
  'TLSSecretInvalid',
  'DomainNotFound',
  'DomainNotAccepted',
  'TCPPortNotFound',
  'TCPPortNotAccepted',
  // ingress-nginx annotations (src/translate/ingress/nginx-annotations.ts)
  'UnsupportedAnnotation',
  'InvalidAnnotation',
  'SnippetRefused',
  'AuthSecretNotFound',
  'AuthSecretInvalid',
  // RoutePolicy (src/translate/policy): GEP-713 policy status
  'Conflicted',
  'TargetNotFound',
  'Invalid',
  'JWKSNotFound',
  'JWKSInvalid',
  'OIDCSecretNotFound',
  'OIDCSecretInvalid',
  // conflicts between objects
  'HostnameConflict',
  'PathConflict',
  'DefaultBackendConflict',
  'TLSCertificateConflict',
  'DuplicateIngress',
  'DuplicateObject',
  'DuplicatePort',
  'DuplicateService',
  'HostnameAlreadyReserved',
  'PortAlreadyReserved',
  'TCPPortInUse',
  // the operator's, from what the edge holds (src/operator: held-back.ts, crd-reservations.ts, event-recorder.ts)
  'Reserved',
  'Ready',
  'DomainNotVerified',
  'AlreadyReserved',
  'PoolExhausted',
  'QuotaExceeded',
  'EdgeRefused',
  'ReservationRetained',
  'UnsupportedBinding',
  'PortNotAssigned',
  'AddressNotAssigned',
  'AddressNotUsable',
  'PortUnavailable',
  'ListenerFailed',
  'ListenerPending',
  'RouteGraphRefused',
] as const;

/** TunaReason is a reason of a condition on an Ingress, a Service or a tuna.dev object. */
export type TunaReason = (typeof TUNA_REASONS)[number];

/** ConditionReason is any reason a translator may write. */
export type ConditionReason = GatewayReason | TunaReason;
