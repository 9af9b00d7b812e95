/**
 * The operator watches every ConfigMap for BackendTLSPolicy CA bundles (src/operator/ca-bundle-configmaps.ts):
 * the cache keeps only `ca.crt` of each, and only a ConfigMap a policy names is a change worth a sync.
 */
import { expect } from 'chai';
import type { KubernetesObject } from '@kubernetes/client-node';
import { isConfigMapKind, isNamedByPolicy, keepOnlyCaBundle } from '../../src/operator/ca-bundle-configmaps.js';

const configMap = (namespace: string, name: string, data?: Record<string, string>): KubernetesObject & { data?: Record<string, string>; binaryData?: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace, name },
  ...(data ? { data } : {}),
});
const policy = (namespace: string, refs: unknown): KubernetesObject =>
  ({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'BackendTLSPolicy', metadata: { namespace, name: 'p' }, spec: { validation: { caCertificateRefs: refs, hostname: 'x' } } }) as KubernetesObject;

describe('operator: ConfigMaps of CA bundles', () => {
  it('keeps only ca.crt of a cached ConfigMap, and no data at all when it has none', () => {
    const withCa = { ...configMap('web', 'ca', { 'ca.crt': 'PEM', 'big.json': 'x'.repeat(1000) }), binaryData: { blob: 'AAAA' } };
    keepOnlyCaBundle(withCa);
    expect(withCa).to.deep.equal(configMap('web', 'ca', { 'ca.crt': 'PEM' }));
    const without = configMap('web', 'settings', { 'app.conf': 'x=1' });
    keepOnlyCaBundle(without);
    expect(without).to.deep.equal(configMap('web', 'settings'));
  });

  it('keeps a value that looks like a JSON Web Key Set (RoutePolicy jwt), not other JSON', () => {
    const jwks = '{"keys": [{"kty": "EC"}]}';
    const cm = configMap('web', 'idp', { 'jwks.json': jwks, 'app.json': '{"a": 1}', 'huge.json': `{"keys": [${' '.repeat(300 * 1024)}]}` });
    keepOnlyCaBundle(cm);
    expect(cm).to.deep.equal(configMap('web', 'idp', { 'jwks.json': jwks }));
  });

  it('counts a ConfigMap as a change when a RoutePolicy of its namespace takes its key set', () => {
    const routePolicy = (namespace: string, name: string): KubernetesObject =>
      ({ apiVersion: 'tuna.dev/v1alpha1', kind: 'RoutePolicy', metadata: { namespace, name: 'p' }, spec: { jwt: { jwks: { configMapRef: { name } } } } }) as KubernetesObject;
    expect(isNamedByPolicy(configMap('web', 'idp'), [], [routePolicy('web', 'idp')])).to.equal(true);
    expect(isNamedByPolicy(configMap('web', 'idp'), [], [routePolicy('other', 'idp'), routePolicy('web', 'x')])).to.equal(false);
  });

  it('counts a ConfigMap as a change only when a BackendTLSPolicy of its namespace names it', () => {
    const policies = [policy('web', [{ group: '', kind: 'ConfigMap', name: 'ca' }]), policy('other', [{ kind: 'ConfigMap', name: 'elsewhere' }]), policy('web', 'malformed')];
    expect(isNamedByPolicy(configMap('web', 'ca'), policies)).to.equal(true);
    expect(isNamedByPolicy(configMap('web', 'elsewhere'), policies)).to.equal(false);
    expect(isNamedByPolicy(configMap('other', 'ca'), policies)).to.equal(false);
    expect(isNamedByPolicy(configMap('web', 'ca'), [])).to.equal(false);
  });

  it('tells the core ConfigMap kind apart', () => {
    expect(isConfigMapKind({ group: '', kind: 'ConfigMap' })).to.equal(true);
    expect(isConfigMapKind({ group: 'example.com', kind: 'ConfigMap' })).to.equal(false);
  });
});
