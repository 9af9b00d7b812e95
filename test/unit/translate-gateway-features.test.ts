/**
 * The GatewayClass feature list and the SupportedVersion helper.
 */
import { expect } from 'chai';
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

  it('does not claim GatewayInfrastructure: tuna creates no per-Gateway ServiceAccount, Pod or Service to carry its labels', () => {
    expect(SUPPORTED_FEATURES).to.not.include('GatewayInfrastructure');
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
