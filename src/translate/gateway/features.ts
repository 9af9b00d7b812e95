import { condition } from '../common/meta.js';
import type { Condition } from '../../model/index.js';

/**
 * SUPPORTED_FEATURES is the honest list of Gateway API v1.6 conformance feature names tuna's
 * GatewayClass reports in `status.supportedFeatures` (sorted, as GatewayClassStatus requires).
 * Left out on purpose: backend-level filters (HTTPRouteBackendRequestHeaderModification: the graph
 * has no per-backend filters), static addresses, infrastructure propagation, client certificate
 * validation, ListenerSet, UDPRoute, BackendTLSPolicy, mesh, retry on connection errors,
 * HTTPRouteDestinationPortMatching, and TLSRouteModeMixed (the data plane terminates every TLS
 * stream of a port that has a terminating listener, so passthrough cannot share that port).
 */
export const SUPPORTED_FEATURES: readonly string[] = [
  'GRPCRoute',
  'GRPCRouteNamedRouteRule',
  'Gateway',
  'GatewayHTTPListenerIsolation',
  'GatewayPort8080',
  'HTTPRoute',
  'HTTPRoute303RedirectStatusCode',
  'HTTPRoute307RedirectStatusCode',
  'HTTPRoute308RedirectStatusCode',
  'HTTPRouteBackendProtocolH2C',
  'HTTPRouteBackendProtocolWebSocket',
  'HTTPRouteBackendTimeout',
  'HTTPRouteCORS',
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
  'HTTPRouteSchemeRedirect',
  'ReferenceGrant',
  'TCPRoute',
  'TLSRoute',
  // The data plane forwards the decrypted bytes of a TLS Terminate listener to its TLSRoutes'
  // backends (test/e2e/dataplane-tls.test.ts).
  'TLSRouteModeTerminate',
];

/**
 * supportsFeature says whether tuna claims a feature. Listener checks follow the claims, so the list
 * above is the one switch: without TLSRouteModeTerminate a TLS listener in Terminate mode is refused,
 * and without TLSRouteModeMixed terminating and passthrough listeners may not share a port.
 */
export function supportsFeature(name: string): boolean {
  return SUPPORTED_FEATURES.includes(name);
}

/** SUPPORTED_BUNDLE_VERSIONS are the Gateway API CRD bundle versions tuna implements. */
export const SUPPORTED_BUNDLE_VERSIONS: readonly string[] = ['v1.6.0', 'v1.6.1', 'v1.6.2', 'v1.6.3'];

/**
 * supportedVersionCondition builds the GatewayClass `SupportedVersion` condition from the
 * `gateway.networking.k8s.io/bundle-version` annotations of the installed CRDs. The translator
 * cannot see CRDs, so the component that watches them (the status writer) calls this and adds the
 * condition; v1.6 requires it whenever the class is Accepted.
 */
export function supportedVersionCondition(bundleVersions: string[], generation?: number): Condition {
  const unknown = [...new Set(bundleVersions)].filter((v) => !SUPPORTED_BUNDLE_VERSIONS.includes(v)).sort();
  if (bundleVersions.length > 0 && unknown.length === 0)
    return condition('SupportedVersion', true, 'SupportedVersion', 'Gateway API CRD bundle version is supported', generation);
  const found = unknown.length > 0 ? unknown.join(', ') : 'none';
  return condition(
    'SupportedVersion',
    false,
    'UnsupportedVersion',
    `found CRD bundle version(s) ${found}; tuna supports ${SUPPORTED_BUNDLE_VERSIONS.join(', ')}`,
    generation,
  );
}
