/**
 * referencedSecrets (src/translate/referenced-secrets.ts): the Secrets the operator fetches by name
 * are exactly those tuna's translators could read: terminating listeners of tuna's Gateways (same
 * namespace, or permitted by a ReferenceGrant) and tls entries of tuna's Ingresses.
 */
import { expect } from 'chai';
import { referencedSecrets, snapshotFromObjects } from '../../src/translate/index.js';

const GW = 'gateway.networking.k8s.io/v1';

const gatewayClass = (name: string, controllerName: string) => ({ apiVersion: GW, kind: 'GatewayClass', metadata: { name }, spec: { controllerName } });
const gateway = (name: string, className: string, listeners: unknown[]) => ({
  apiVersion: GW,
  kind: 'Gateway',
  metadata: { name, namespace: 'infra' },
  spec: { gatewayClassName: className, listeners },
});
const https = (name: string, refs: unknown[], extra: Record<string, unknown> = {}) => ({ name, port: 443, protocol: 'HTTPS', tls: { certificateRefs: refs }, ...extra });

describe('referencedSecrets', () => {
  it('names the Secrets of terminating listeners of tuna Gateways, in the Gateway namespace by default, sorted and once', () => {
    const objects = [
      gatewayClass('tuna', 'tuna.dev/gateway-controller'),
      gatewayClass('other', 'example.com/other'),
      gateway('gw', 'tuna', [
        https('a', [{ name: 'b-cert' }, { name: 'a-cert' }]),
        https('again', [{ name: 'a-cert', kind: 'Secret', group: '' }]),
        { name: 'tls', port: 8443, protocol: 'TLS', tls: { mode: 'Terminate', certificateRefs: [{ name: 'tls-cert' }] } },
        { name: 'pass', port: 9443, protocol: 'TLS', tls: { mode: 'Passthrough', certificateRefs: [{ name: 'passthrough-cert' }] } },
        { name: 'http', port: 80, protocol: 'HTTP' },
        https('configmap', [{ name: 'cm', kind: 'ConfigMap' }]),
      ]),
      gateway('theirs', 'other', [https('x', [{ name: 'their-cert' }])]),
      gateway('classless', 'missing', [https('x', [{ name: 'nobody-cert' }])]),
    ];
    expect(referencedSecrets(snapshotFromObjects(objects).snapshot)).to.deep.equal([
      { namespace: 'infra', name: 'a-cert' },
      { namespace: 'infra', name: 'b-cert' },
      { namespace: 'infra', name: 'tls-cert' },
    ]);
  });

  it('names the Secrets of ListenerSets of tuna Gateways, from their own namespace and their own ReferenceGrants', () => {
    const listenerSet = (name: string, namespace: string, parentRef: Record<string, unknown>, listeners: unknown[]) => ({
      apiVersion: GW,
      kind: 'ListenerSet',
      metadata: { name, namespace },
      spec: { parentRef, listeners },
    });
    const grantFrom = (kind: string, namespace: string) => ({
      apiVersion: GW,
      kind: 'ReferenceGrant',
      metadata: { name: `from-${kind}-${namespace}`, namespace: 'certs' },
      spec: { from: [{ group: 'gateway.networking.k8s.io', kind, namespace }], to: [{ group: '', kind: 'Secret' }] },
    });
    const objects = [
      gatewayClass('tuna', 'tuna.dev/gateway-controller'),
      gatewayClass('other', 'example.com/other'),
      gateway('gw', 'tuna', []),
      gateway('theirs', 'other', []),
      // a grant to the Gateway is not inherited by a ListenerSet of its namespace (GEP-1713)
      grantFrom('Gateway', 'team-b'),
      grantFrom('ListenerSet', 'team-a'),
      listenerSet('own', 'team-a', { name: 'gw', namespace: 'infra' }, [https('s', [{ name: 'local' }, { name: 'shared', namespace: 'certs' }])]),
      listenerSet('ungranted', 'team-b', { name: 'gw', namespace: 'infra' }, [https('s', [{ name: 'shared', namespace: 'certs' }, { name: 'b-local' }])]),
      listenerSet('theirs', 'team-a', { name: 'theirs', namespace: 'infra' }, [https('s', [{ name: 'their-cert' }])]),
    ];
    expect(referencedSecrets(snapshotFromObjects(objects).snapshot)).to.deep.equal([
      { namespace: 'certs', name: 'shared' },
      { namespace: 'team-a', name: 'local' },
      { namespace: 'team-b', name: 'b-local' },
    ]);
  });

  it('names the backend client certificate of a tuna Gateway (spec.tls.backend.clientCertificateRef), across namespaces only with a ReferenceGrant', () => {
    const withClient = (name: string, className: string, ref: Record<string, unknown>) => ({ ...gateway(name, className, [{ name: 'http', port: 80, protocol: 'HTTP' }]), spec: { gatewayClassName: className, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }], tls: { backend: { clientCertificateRef: ref } } } });
    const objects = [
      gatewayClass('tuna', 'tuna.dev/gateway-controller'),
      gatewayClass('other', 'example.com/other'),
      withClient('gw', 'tuna', { group: '', kind: 'Secret', name: 'client' }),
      withClient('far', 'tuna', { name: 'client', namespace: 'elsewhere' }),
      withClient('theirs', 'other', { name: 'their-client' }),
    ];
    expect(referencedSecrets(snapshotFromObjects(objects).snapshot)).to.deep.equal([{ namespace: 'infra', name: 'client' }]);
  });

  it('names a Secret of another namespace only where a ReferenceGrant there permits the Gateway', () => {
    const grant = (namespace: string, to: Record<string, unknown>) => ({
      apiVersion: 'gateway.networking.k8s.io/v1beta1',
      kind: 'ReferenceGrant',
      metadata: { name: 'g', namespace },
      spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }], to: [to] },
    });
    const objects = [
      gatewayClass('tuna', 'tuna.dev/gateway-controller'),
      gateway('gw', 'tuna', [https('a', [{ name: 'granted', namespace: 'certs' }, { name: 'other-name', namespace: 'named' }, { name: 'named', namespace: 'named' }, { name: 'nogrant', namespace: 'secret-place' }])]),
      grant('certs', { group: '', kind: 'Secret' }),
      grant('named', { group: '', kind: 'Secret', name: 'named' }),
    ];
    expect(referencedSecrets(snapshotFromObjects(objects).snapshot)).to.deep.equal([
      { namespace: 'certs', name: 'granted' },
      { namespace: 'named', name: 'named' },
    ]);
  });

  it('names the tls Secrets of tuna Ingresses in their own namespace, not those of other classes', () => {
    const ingress = (name: string, className: string, secretName: string) => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace: 'web' },
      spec: { ingressClassName: className, tls: [{ hosts: ['a.example.com'], secretName }] },
    });
    const objects = [ingress('ours', 'tuna', 'web-cert'), ingress('theirs', 'nginx', 'nginx-cert')];
    expect(referencedSecrets(snapshotFromObjects(objects).snapshot)).to.deep.equal([{ namespace: 'web', name: 'web-cert' }]);
  });
  it('names the basic-auth auth-secret of tuna Ingresses in their own namespace only, and only with auth-type basic', () => {
    const N = 'nginx.ingress.kubernetes.io/';
    const ingress = (name: string, className: string, annotations: Record<string, string>) => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name, namespace: 'web', annotations },
      spec: { ingressClassName: className },
    });
    const objects = [
      ingress('plain', 'tuna', { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'users' }),
      ingress('qualified', 'tuna', { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'web/more-users' }),
      ingress('elsewhere', 'tuna', { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'kube-system/admins' }),
      ingress('no-type', 'tuna', { [`${N}auth-secret`]: 'unused' }),
      ingress('theirs', 'nginx', { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'nginx-users' }),
    ];
    expect(referencedSecrets(snapshotFromObjects(objects).snapshot)).to.deep.equal([
      { namespace: 'web', name: 'more-users' },
      { namespace: 'web', name: 'users' },
    ]);
  });

  it('names the basic-auth, key-auth, JWT key-set and OIDC client Secrets of RoutePolicies, in the policy namespace', () => {
    const policy = (name: string, spec: unknown) => ({ apiVersion: 'tuna.dev/v1alpha1', kind: 'RoutePolicy', metadata: { name, namespace: 'shop' }, spec });
    const objects = [
      policy('a', { basicAuth: { secretRef: { name: 'users' } }, keyAuth: { header: 'X-Key', secretRef: { name: 'keys' } } }),
      policy('b', { basicAuth: { secretRef: { name: 'users' } } }),
      policy('c', { rateLimit: { requests: 1, periodSeconds: 1 } }),
      policy('d', { jwt: { issuers: ['i'], audiences: ['a'], jwks: { secretRef: { name: 'idp', key: 'k.json' } } } }),
      policy('e', { jwt: { issuers: ['i'], audiences: ['a'], jwks: { configMapRef: { name: 'not-a-secret' } } } }),
      policy('f', { oidc: { issuer: 'https://idp.test', clientId: 'c', secretRef: { name: 'app-oidc' } } }),
    ];
    expect(referencedSecrets(snapshotFromObjects(objects).snapshot)).to.deep.equal([
      { namespace: 'shop', name: 'app-oidc' },
      { namespace: 'shop', name: 'idp' },
      { namespace: 'shop', name: 'keys' },
      { namespace: 'shop', name: 'users' },
    ]);
  });
});
