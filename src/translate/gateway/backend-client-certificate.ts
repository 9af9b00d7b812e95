import type { IGateway } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway';
import type { SecretRef } from '../../model/index.js';
import type { SnapshotIndex } from '../common/index-snapshot.js';
import { generationOf, namespaceOf } from '../common/meta.js';
import { condition, warning } from '../common/status.js';
import type { GatewayReason } from '../common/reasons.js';
import type { TranslateResult } from '../types.js';
import { gatewayBackendTlsCodec, malformedField } from './codecs.js';
import { asKube } from './kube-object.js';
import { GATEWAY_GROUP } from './kinds.js';
import { ReferenceGrants } from './reference-grants.js';
import { isGroupKind, refersTo } from '../kinds.js';

/** ClientCertificateRefOf is the Gateway field naming the client certificate for TLS backends. */
interface ClientCertificateRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

/** clientCertificateRefOf reads `spec.tls.backend.clientCertificateRef` (Gateway API v1.4+, GatewayBackendTLS). */
export function clientCertificateRefOf(gw: IGateway): ClientCertificateRef | undefined {
  if (malformedField(gatewayBackendTlsCodec, gw)) return undefined;
  return (gw.spec as { tls?: { backend?: { clientCertificateRef?: ClientCertificateRef } } } | undefined)?.tls?.backend?.clientCertificateRef;
}

/**
 * backendClientCertificates resolves, for every Gateway tuna translated (it has a status), the
 * Secret of `spec.tls.backend.clientCertificateRef`: the client certificate the data plane
 * presents to the TLS backends of the Gateway's routes (GatewayBackendClientCertificate). It adds
 * the Gateway's `ResolvedRefs` condition: False with `InvalidClientCertificateRef` when the Secret
 * is missing, not `kubernetes.io/tls` or not a usable pair, `RefNotPermitted` across namespaces
 * without a ReferenceGrant (the spec's GatewayBackendTLS rules). Returns the usable refs by
 * Gateway `ns/name`.
 */
export function backendClientCertificates(index: SnapshotIndex, result: TranslateResult): Map<string, SecretRef> {
  const out = new Map<string, SecretRef>();
  const grants = new ReferenceGrants(index.snapshot.referenceGrants);
  result.statuses.forEach((given, i) => {
    if (!isGroupKind(given.ref, 'Gateway')) return;
    const gw = index.snapshot.gateways.find((g) => g.metadata?.name === given.ref.name && namespaceOf(asKube(g)) === given.ref.namespace);
    const ref = gw ? clientCertificateRefOf(gw) : undefined;
    if (!gw || !ref) return;
    // a copy in the result's list: the statuses given are not changed (an incremental translation hands them out again)
    const status = { ...given, events: [...given.events], ...(given.status ? { status: { ...given.status } } : {}) };
    result.statuses[i] = status;
    const gen = generationOf(asKube(gw));
    const namespace = ref.namespace ?? status.ref.namespace ?? '';
    const resolved = resolveClientCertificate(index, grants, status.ref.namespace ?? '', { ...ref, namespace });
    const conditions = [...((status.status?.conditions ?? []) as unknown[])];
    if (typeof resolved === 'string') {
      conditions.push(condition('ResolvedRefs', true, 'ResolvedRefs', 'all references are resolved', gen));
      out.set(`${status.ref.namespace ?? ''}/${status.ref.name}`, { namespace, name: ref.name });
    } else {
      conditions.push(condition('ResolvedRefs', false, resolved.reason, resolved.message, gen));
      status.events.push(warning(resolved.reason, resolved.message));
    }
    if (status.status) status.status.conditions = conditions;
  });
  return out;
}

/** resolveClientCertificate checks one clientCertificateRef: 'ok', or the reason and message of ResolvedRefs=False. */
function resolveClientCertificate(index: SnapshotIndex, grants: ReferenceGrants, gwNamespace: string, ref: Required<Pick<ClientCertificateRef, 'name' | 'namespace'>> & ClientCertificateRef): 'ok' | { reason: GatewayReason; message: string } {
  const what = `spec.tls.backend.clientCertificateRef ${ref.namespace}/${ref.name}`;
  if (!refersTo(ref, 'Secret'))
    return { reason: 'InvalidClientCertificateRef', message: `${what} is a ${ref.group ? `${ref.group}/` : ''}${ref.kind ?? ''}; only core Secrets are supported` };
  if (!grants.isPermitted({ group: GATEWAY_GROUP, kind: 'Gateway', namespace: gwNamespace }, { group: '', kind: 'Secret', namespace: ref.namespace, name: ref.name }))
    return { reason: 'RefNotPermitted', message: `${what} is in another namespace and no ReferenceGrant allows it` };
  const secret = index.secrets.get(`${ref.namespace}/${ref.name}`);
  if (!secret) return { reason: 'InvalidClientCertificateRef', message: `${what} does not exist` };
  if (secret.type !== 'kubernetes.io/tls') return { reason: 'InvalidClientCertificateRef', message: `${what} is of type ${secret.type ?? 'Opaque'}, not kubernetes.io/tls` };
  const { dataKeys: keys, tlsPairProblem } = secret as { dataKeys?: string[]; tlsPairProblem?: string };
  if (keys && !(keys.includes('tls.crt') && keys.includes('tls.key'))) return { reason: 'InvalidClientCertificateRef', message: `${what} lacks tls.crt or tls.key` };
  if (tlsPairProblem !== undefined) return { reason: 'InvalidClientCertificateRef', message: `${what} is not a usable certificate: ${tlsPairProblem}` };
  return 'ok';
}
