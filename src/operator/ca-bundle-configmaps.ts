import type { KubernetesObject } from '@kubernetes/client-node';
import { isGroupKind, isKind } from '../translate/index.js';
import type { KindLike } from '../translate/index.js';

/** CA_BUNDLE_KEY is the ConfigMap key of a BackendTLSPolicy CA bundle (GEP-1897). */
const CA_BUNDLE_KEY = 'ca.crt';

/** isConfigMapKind tells the core ConfigMap kind of the watched kinds. */
export function isConfigMapKind(kind: { group: string; kind: string }): boolean {
  return isGroupKind(kind, 'ConfigMap');
}

/**
 * keepOnlyCaBundle drops, in place, every key of a cached ConfigMap but `ca.crt`: the operator
 * watches every ConfigMap of the cluster for BackendTLSPolicy CA bundles, and other ConfigMaps
 * may be up to 1 MiB each (the apiserver's object limit) that nothing of tuna reads.
 */
export function keepOnlyCaBundle(obj: KubernetesObject): void {
  const cm = obj as KubernetesObject & { data?: Record<string, string>; binaryData?: Record<string, string> };
  delete cm.binaryData;
  if (cm.data === undefined) return;
  const bundle = cm.data[CA_BUNDLE_KEY];
  if (bundle === undefined) delete cm.data;
  else cm.data = { [CA_BUNDLE_KEY]: bundle };
}

/**
 * isNamedByPolicy tells whether a BackendTLSPolicy (`validation.caCertificateRefs`, same
 * namespace) names the ConfigMap: only then can its change alter the graph or a status, so a
 * change of any other ConfigMap of the cluster causes no sync.
 */
export function isNamedByPolicy(configMap: KubernetesObject, policies: readonly KubernetesObject[]): boolean {
  const namespace = configMap.metadata?.namespace ?? '';
  const name = configMap.metadata?.name ?? '';
  return policies.some((p) => {
    if ((p.metadata?.namespace ?? '') !== namespace) return false;
    const refs = (p as { spec?: { validation?: { caCertificateRefs?: unknown } } }).spec?.validation?.caCertificateRefs;
    return Array.isArray(refs) && refs.some((r) => isKind((r ?? undefined) as KindLike | undefined, 'ConfigMap') && (r as { name?: unknown }).name === name);
  });
}
