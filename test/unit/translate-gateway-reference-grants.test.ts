/**
 * ReferenceGrant semantics: what a grant in the target namespace permits, and what it does not.
 */
import { expect } from 'chai';
import type { IReferenceGrant } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/ReferenceGrant';
import { ReferenceGrants } from '../../src/translate/gateway/reference-grants.js';
import type { ReferenceSource, ReferenceTarget } from '../../src/translate/gateway/reference-grants.js';

type Spec = NonNullable<IReferenceGrant['spec']>;

function grant(namespace: string, from: Spec['from'], to: Spec['to']): IReferenceGrant {
  return { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'ReferenceGrant', metadata: { name: 'g', namespace }, spec: { from, to } };
}

const route: ReferenceSource = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' };
const svc = (namespace: string, name: string): ReferenceTarget => ({ group: '', kind: 'Service', namespace, name });

describe('ReferenceGrant', () => {
  it('needs no grant within one namespace', () => {
    expect(new ReferenceGrants([]).isPermitted(route, svc('apps', 'web'))).to.equal(true);
  });

  it('refuses a cross-namespace reference without a grant', () => {
    expect(new ReferenceGrants([]).isPermitted(route, svc('backend', 'web'))).to.equal(false);
  });

  it('permits a reference matched by from and to, with or without a name', () => {
    const all = grant('backend', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }], [{ group: '', kind: 'Service' }]);
    expect(new ReferenceGrants([all]).isPermitted(route, svc('backend', 'any'))).to.equal(true);
    const named = grant('backend', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }], [{ group: '', kind: 'Service', name: 'web' }]);
    expect(new ReferenceGrants([named]).isPermitted(route, svc('backend', 'web'))).to.equal(true);
    expect(new ReferenceGrants([named]).isPermitted(route, svc('backend', 'db'))).to.equal(false);
  });

  it('ignores grants for another source kind, source namespace, or in another namespace', () => {
    const grants = new ReferenceGrants([
      grant('backend', [{ group: 'gateway.networking.k8s.io', kind: 'GRPCRoute', namespace: 'apps' }], [{ group: '', kind: 'Service' }]),
      grant('backend', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'other' }], [{ group: '', kind: 'Service' }]),
      grant('elsewhere', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }], [{ group: '', kind: 'Service' }]),
      grant('backend', [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'apps' }], [{ group: '', kind: 'Secret' }]),
    ]);
    expect(grants.isPermitted(route, svc('backend', 'web'))).to.equal(false);
  });
});
