/**
 * Filters on a backendRef (Gateway API HTTPBackendRef.filters, GRPCBackendRef.filters): the two
 * header modifiers ride on that backend in the graph; every other type drops the rule with
 * UnsupportedValue naming the type.
 */
import { expect } from 'chai';
import type { Backend, RouteGraph } from '../../src/model/index.js';
import { snapshotFromObjects, translateSnapshot } from '../../src/translate/index.js';

const base: unknown[] = [
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'tuna', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'apps', generation: 1 },
    spec: { gatewayClassName: 'tuna', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  },
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'apps' }, spec: { ports: [{ name: 'http', port: 8080 }] } },
];

function translateRoute(kind: 'HTTPRoute' | 'GRPCRoute', filters: unknown[]): { graph: RouteGraph; condition: { reason: string; message: string; status: string } | undefined } {
  const route = {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind,
    metadata: { name: 'r', namespace: 'apps', generation: 1 },
    spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 8080, filters }] }] },
  };
  const { snapshot } = snapshotFromObjects([...base, route]);
  const result = translateSnapshot(snapshot);
  const status = result.statuses.find((s) => s.ref.kind === kind)?.status as { parents: { conditions: { type: string; reason: string; message: string; status: string }[] }[] };
  return { graph: result.graph, condition: status.parents[0]?.conditions.find((c) => c.type === 'Accepted') };
}

function backendsOf(graph: RouteGraph): Backend[] {
  return graph.virtualHosts.flatMap((v) => v.routes).flatMap((r) => r.backends);
}

const header = { set: [{ name: 'X-Set', value: 'a' }], add: [{ name: 'X-Add', value: 'b' }], remove: ['X-Remove'] };

describe('Gateway API backendRef filters', () => {
  for (const kind of ['HTTPRoute', 'GRPCRoute'] as const) {
    it(`carries RequestHeaderModifier and ResponseHeaderModifier of a ${kind} backendRef on that backend, in order`, () => {
      const { graph, condition } = translateRoute(kind, [
        { type: 'ResponseHeaderModifier', responseHeaderModifier: header },
        { type: 'RequestHeaderModifier', requestHeaderModifier: header },
      ]);
      expect(condition?.status).to.equal('True');
      const [backend] = backendsOf(graph);
      expect(backend?.kind === 'service' && backend.filters).to.deep.equal([
        { type: 'ResponseHeaderModifier', ...header },
        { type: 'RequestHeaderModifier', ...header },
      ]);
      expect(graph.virtualHosts[0]?.routes[0]?.filters).to.deep.equal([]);
    });
  }

  it('leaves the filters field out when a backendRef has an empty filter list', () => {
    const [backend] = backendsOf(translateRoute('HTTPRoute', []).graph);
    expect(backend).to.not.have.property('filters');
  });

  const refused: [string, unknown][] = [
    ['RequestRedirect', { type: 'RequestRedirect', requestRedirect: { statusCode: 301 } }],
    ['URLRewrite', { type: 'URLRewrite', urlRewrite: { hostname: 'x.example.com' } }],
    ['RequestMirror', { type: 'RequestMirror', requestMirror: { backendRef: { name: 'web', port: 8080 } } }],
    ['CORS', { type: 'CORS', cors: { allowOrigins: ['*'] } }],
    ['ExtensionRef', { type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Auth', name: 'a' } }],
    ['Bogus', { type: 'Bogus' }],
  ];
  for (const [type, filter] of refused) {
    it(`refuses a ${type} filter on a backendRef with UnsupportedValue naming it`, () => {
      const { graph, condition } = translateRoute('HTTPRoute', [filter]);
      expect(condition?.status).to.equal('False');
      expect(condition?.reason).to.equal('UnsupportedValue');
      expect(condition?.message).to.contain(`filter type ${type} on backendRef web is not supported`);
      expect(backendsOf(graph)).to.deep.equal([]);
    });
  }
});
