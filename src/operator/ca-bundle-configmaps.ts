import type { KubernetesObject } from '@kubernetes/client-node';
import { looksLikeJwks } from '../model/index.js';
import { isGroupKind, isKind } from '../translate/index.js';
import type { KindLike } from '../translate/index.js';

/** CA_BUNDLE_KEY is the ConfigMap key of a BackendTLSPolicy CA bundle (GEP-1897). */
const CA_BUNDLE_KEY = 'ca.crt';

/** isConfigMapKind tells the core ConfigMap kind of the watched kinds. */
export function isConfigMapKind(kind: { group: string; kind: string }): boolean {
  return isGroupKind(kind, 'ConfigMap');
}

/**
 * keepOnlyCaBundle drops, in place, every key of a cached ConfigMap but `ca.crt` and the values
 * that look like a JSON Web Key Set (looksLikeJwks, at most 256 KiB each; RoutePolicy jwt): the
 * operator watches every ConfigMap of the cluster for BackendTLSPolicy CA bundles and RoutePolicy
 * key sets, and other ConfigMaps may be up to 1 MiB each (the apiserver's object limit) that
 * nothing of tuna reads.
 */
export function keepOnlyCaBundle(obj: KubernetesObject): void {
  const cm = obj as KubernetesObject & { data?: Record<string, string>; binaryData?: Record<string, string> };
  delete cm.binaryData;
  if (cm.data === undefined) return;
  const kept = Object.entries(cm.data).filter(([k, v]) => k === CA_BUNDLE_KEY || (typeof v === 'string' && looksLikeJwks(v)));
  if (kept.length === 0) delete cm.data;
  else cm.data = Object.fromEntries(kept);
}

/**
 * isNamedByPolicy tells whether a BackendTLSPolicy (`validation.caCertificateRefs`) or a
 * RoutePolicy (`jwt.jwks.configMapRef`) of the same namespace names the ConfigMap: only then can
 * its change alter the graph or a status, so a change of any other ConfigMap of the cluster causes
 * no sync.
 */
export function isNamedByPolicy(configMap: KubernetesObject, policies: readonly KubernetesObject[], routePolicies: readonly KubernetesObject[] = []): boolean {
  const namespace = configMap.metadata?.namespace ?? '';
  const name = configMap.metadata?.name ?? '';
  const sameNamespace = (p: KubernetesObject): boolean => (p.metadata?.namespace ?? '') === namespace;
  const byTls = policies.some((p) => {
    if (!sameNamespace(p)) return false;
    const refs = (p as { spec?: { validation?: { caCertificateRefs?: unknown } } }).spec?.validation?.caCertificateRefs;
    return Array.isArray(refs) && refs.some((r) => isKind((r ?? undefined) as KindLike | undefined, 'ConfigMap') && (r as { name?: unknown }).name === name);
  });
  return byTls || routePolicies.some((p) => sameNamespace(p) && (p as { spec?: { jwt?: { jwks?: { configMapRef?: { name?: unknown } } } } }).spec?.jwt?.jwks?.configMapRef?.name === name);
}
