/**
 * The GatewayClass feature list and the SupportedVersion helper.
 */
import { expect } from 'chai';
import type { IGatewayClass } from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GatewayClass';
import type { GatewayParameters, GatewayParametersSpec } from '../../src/crd/index.js';
import { StatusBook } from '../../src/translate/common/meta.js';
import { DEDICATED_CLASS_FEATURES } from '../../src/translate/gateway/features.js';
import { translateGatewayClasses } from '../../src/translate/gateway/gateway-classes.js';
import { SUPPORTED_BUNDLE_VERSIONS, SUPPORTED_FEATURES, supportedVersionCondition } from '../../src/translate/gateway/index.js';

describe('Gateway API supported features', () => {
  it('lists each feature once, sorted by name as GatewayClassStatus requires', () => {
    const sorted = [...SUPPORTED_FEATURES].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(SUPPORTED_FEATURES).to.deep.equal(sorted);
    expect(new Set(SUPPORTED_FEATURES).size).to.equal(SUPPORTED_FEATURES.length);
  });

  it('claims backendRef header modifiers, which the route graph carries per backend', () => {
    expect(SUPPORTED_FEATURES).to.include('HTTPRouteBackendRequestHeaderModification');
  });

  it('claims ListenerSet, whose kind the table of kinds watches', () => {
    expect(SUPPORTED_FEATURES).to.include('ListenerSet');
  });

  it('claims UDPRoute, whose datagrams the tunnels carry per flow', () => {
    expect(SUPPORTED_FEATURES).to.include('UDPRoute');
  });

  it('claims GatewayInfrastructure only for a class whose GatewayParameters say dataPlane: Dedicated (its Gateways get pods of their own to carry the labels)', () => {
    expect(SUPPORTED_FEATURES).to.not.include('GatewayInfrastructure');
    expect(DEDICATED_CLASS_FEATURES).to.deep.equal([...SUPPORTED_FEATURES, 'GatewayInfrastructure'].sort());
    const features = (parameters?: GatewayParametersSpec): string[] => {
      const book = new StatusBook();
      const gc = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'tuna' }, spec: { controllerName: 'tuna.dev/gateway-controller', ...(parameters ? { parametersRef: { group: 'tuna.dev', kind: 'GatewayParameters', name: 'p', namespace: 'n' } } : {}) } };
      const index = new Map(parameters ? [['n/p', { apiVersion: 'tuna.dev/v1alpha1', kind: 'GatewayParameters', metadata: { name: 'p', namespace: 'n' }, spec: parameters } as GatewayParameters]] : []);
      translateGatewayClasses([gc as IGatewayClass], 'tuna.dev/gateway-controller', book, index);
      return ((book.all()[0]!.status!.supportedFeatures as { name: string }[]) ?? []).map((f) => f.name);
    };
    expect(features()).to.not.include('GatewayInfrastructure');
    expect(features({ dataPlane: 'Shared' })).to.not.include('GatewayInfrastructure');
    expect(features({ dataPlane: 'Dedicated' })).to.include('GatewayInfrastructure');
  });

  it('reports SupportedVersion=True when every CRD carries a supported bundle version', () => {
    const c = supportedVersionCondition([SUPPORTED_BUNDLE_VERSIONS[0] as string, SUPPORTED_BUNDLE_VERSIONS[0] as string], 3);
    expect(c).to.include({ type: 'SupportedVersion', status: 'True', reason: 'SupportedVersion', observedGeneration: 3 });
  });

  it('reports UnsupportedVersion naming the unknown versions, and when none were found', () => {
    const c = supportedVersionCondition([SUPPORTED_BUNDLE_VERSIONS[0] as string, 'v1.2.0'], 1);
    expect(c).to.include({ status: 'False', reason: 'UnsupportedVersion' });
    expect(c.message).to.contain('v1.2.0');
    expect(supportedVersionCondition([], 1)).to.include({ status: 'False', reason: 'UnsupportedVersion' });
  });
});
