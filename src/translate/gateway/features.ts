import { condition } from '../common/status.js';
import { KINDS } from '../kinds.js';
import type { Condition } from '../../model/index.js';

/**
 * SUPPORTED_FEATURES is the honest list of Gateway API v1.6 conformance feature names tuna's
 * GatewayClass reports in `status.supportedFeatures` (sorted, as GatewayClassStatus requires): the
 * features of every kind in the table of kinds (kinds.ts says why each is claimed or left out).
 * Left out: mesh, which tuna does not serve, and GatewayInfrastructure, which only a class whose
 * Gateways get pods of their own can claim (DEDICATED_CLASS_FEATURES).
 */
export const SUPPORTED_FEATURES: readonly string[] = [...new Set(KINDS.flatMap((k) => ('features' in k ? k.features : [])))].sort();

/**
 * DEDICATED_CLASS_FEATURES are a class's whose GatewayParameters say `dataPlane: Dedicated`: its
 * Gateways get a Deployment, ServiceAccount and Secret of their own (docs/dedicated-data-plane.md),
 * which carry `spec.infrastructure.labels` and `annotations`, so the class also claims
 * GatewayInfrastructure (GEP-1867). A Shared class creates nothing per Gateway to put them on.
 */
export const DEDICATED_CLASS_FEATURES: readonly string[] = [...SUPPORTED_FEATURES, 'GatewayInfrastructure'].sort();

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
