import { expect } from 'chai';
import { planForBackend, planRequest } from '../../src/dataplane/request-plan.js';
import type { ForwardPlan, IncomingFacts } from '../../src/dataplane/request-plan.js';
import { httpRoute, serviceBackend } from '../support/backend-graph.js';

const facts: IncomingFacts = {
  method: 'GET',
  scheme: 'http',
  authority: 'app.test',
  host: 'app.test',
  publicPort: 80,
  path: '/',
  search: '',
  headers: { 'x-a': 'client' },
  clientAddress: '127.0.0.1',
};

function routePlan(): ForwardPlan {
  const plan = planRequest(httpRoute('r', [serviceBackend('a')], { filters: [{ type: 'RequestHeaderModifier', set: [{ name: 'X-Rule', value: 'r' }], add: [], remove: [] }] }), facts);
  if (plan.kind !== 'forward') throw new Error('expected a forward plan');
  return plan;
}

describe('planForBackend (HTTPBackendRef filters)', () => {
  it('returns the route plan itself for a backend without filters', () => {
    const plan = routePlan();
    expect(planForBackend(plan, serviceBackend('a'))).to.equal(plan);
  });

  it("adds the backend's request and response modifiers after the route's and leaves the route plan unchanged", () => {
    const plan = routePlan();
    const before = structuredClone(plan);
    const response = { type: 'ResponseHeaderModifier' as const, set: [{ name: 'X-Served', value: 'a' }], add: [], remove: [] };
    const sent = planForBackend(plan, serviceBackend('a', { filters: [{ type: 'RequestHeaderModifier', set: [{ name: 'X-Rule', value: 'b' }], add: [{ name: 'X-A', value: 'b' }], remove: [] }, response] }));
    expect([sent.headers['x-rule'], sent.headers['x-a']]).to.deep.equal(['b', 'client,b']);
    expect(sent.responseModifiers).to.deep.equal([response]);
    expect(plan).to.deep.equal(before);
  });
});
