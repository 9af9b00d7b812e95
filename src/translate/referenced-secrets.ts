import type { IListener } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Listener';
import type { SecretRef } from '../model/index.js';
import { compareStrings } from '../model/index.js';
import { namespaceOf } from './common/meta.js';
import { ReferenceGrants } from './gateway/reference-grants.js';
import { asKube } from './gateway/kube-object.js';
import { clientCertificateRefOf } from './gateway/backend-client-certificate.js';
import { ingressClassMatcher } from './ingress/ingress-class.js';
import { authSecretRef } from './ingress/nginx-annotations.js';
import { GATEWAY_GROUP } from './kinds.js';
import type { Snapshot } from './kinds.js';
import type { TranslateOptions } from './types.js';
import { defaultTranslateOptions } from './types.js';
import { refersTo } from './kinds.js';

/**
 * referencedSecrets names the Secrets tuna's translators would read key material from, so that the
 * operator can fetch exactly those by name (it may not list Secrets; docs/operator.md): the core
 * Secrets of the `tls.certificateRefs` of terminating (HTTPS, TLS Terminate) listeners of Gateways
 * of tuna's GatewayClasses and of the ListenerSets naming them, where the reference is in the
 * listener owner's namespace or a ReferenceGrant from the owner's kind permits it, the `spec.tls.backend.clientCertificateRef` of tuna's Gateways (the same rule), the `spec.tls[].secretName` and basic-auth `nginx.ingress.kubernetes.io/auth-secret` of tuna's Ingresses (their own namespace),
 * and the basic-auth, key-auth, JWT key-set and OIDC client `secretRef`s of RoutePolicies (their own namespace). Sorted and
 * without repeats. The translator still checks each one (existence, type, PEM).
 */
export function referencedSecrets(snapshot: Snapshot, options: Partial<TranslateOptions> = {}): SecretRef[] {
  const opts = { ...defaultTranslateOptions, ...options };
  const found = new Map<string, SecretRef>();
  const add = (namespace: string, name: string): void => {
    if (name !== '') found.set(`${namespace}/${name}`, { namespace, name });
  };
  const ourClasses = new Set(snapshot.gatewayClasses.filter((c) => c.spec?.controllerName === opts.gatewayControllerName).map((c) => c.metadata?.name ?? ''));
  const grants = new ReferenceGrants(snapshot.referenceGrants);
  const addCertificates = (kind: 'Gateway' | 'ListenerSet', ownNamespace: string, listeners: readonly IListener[]): void => {
    for (const listener of listeners) {
      if ((listener.protocol !== 'HTTPS' && listener.protocol !== 'TLS') || (listener.tls?.mode ?? 'Terminate') !== 'Terminate') continue;
      for (const ref of listener.tls?.certificateRefs ?? []) {
        if (!refersTo(ref, 'Secret')) continue;
        const namespace = ref.namespace ?? ownNamespace;
        const from = { group: GATEWAY_GROUP, kind, namespace: ownNamespace };
        if (grants.isPermitted(from, { group: '', kind: 'Secret', namespace, name: ref.name })) add(namespace, ref.name);
      }
    }
  };
  const ourGateways = new Set<string>();
  for (const gw of snapshot.gateways) {
    if (!ourClasses.has(gw.spec?.gatewayClassName ?? '')) continue;
    const gwNamespace = namespaceOf(asKube(gw));
    ourGateways.add(`${gwNamespace}/${gw.metadata?.name ?? ''}`);
    addCertificates('Gateway', gwNamespace, gw.spec?.listeners ?? []);
    // the client certificate the Gateway presents to its TLS backends (spec.tls.backend.clientCertificateRef)
    const client = clientCertificateRefOf(gw);
    const clientNamespace = client?.namespace ?? gwNamespace;
    if (client && refersTo(client, 'Secret') && grants.isPermitted({ group: GATEWAY_GROUP, kind: 'Gateway', namespace: gwNamespace }, { group: '', kind: 'Secret', namespace: clientNamespace, name: client.name }))
      add(clientNamespace, client.name);
  }
  // ListenerSets of those Gateways (GEP-1713): their own namespace, their own ReferenceGrants.
  for (const set of snapshot.listenerSets) {
    const parent = set.spec?.parentRef;
    const setNamespace = namespaceOf(asKube(set));
    if (!refersTo(parent, 'Gateway')) continue;
    if (!ourGateways.has(`${parent?.namespace ?? setNamespace}/${parent?.name ?? ''}`)) continue;
    addCertificates('ListenerSet', setNamespace, (set.spec?.listeners ?? []) as IListener[]);
  }
  const matcher = ingressClassMatcher(snapshot.ingressClasses, opts);
  for (const ingress of snapshot.ingresses) {
    if (matcher.claim(ingress) === undefined) continue;
    for (const tls of ingress.spec?.tls ?? []) add(namespaceOf(ingress), tls.secretName ?? '');
    const auth = authSecretRef(ingress);
    if (auth) add(auth.namespace, auth.name);
  }
  // RoutePolicy basic-auth, key-auth, JWT key-set and OIDC client Secrets, in the policy's own namespace
  for (const policy of snapshot.routePolicies) {
    type Ref = { secretRef?: { name?: unknown } };
    const spec = (policy as { spec?: { basicAuth?: Ref; keyAuth?: Ref; jwt?: { jwks?: Ref }; oidc?: Ref } }).spec;
    for (const name of [spec?.basicAuth?.secretRef?.name, spec?.keyAuth?.secretRef?.name, spec?.jwt?.jwks?.secretRef?.name, spec?.oidc?.secretRef?.name]) if (typeof name === 'string') add(namespaceOf(policy), name);
  }
  return [...found.values()].sort((a, b) => compareStrings(`${a.namespace}/${a.name}`, `${b.namespace}/${b.name}`));
}
