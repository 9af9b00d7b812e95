import { expect } from 'chai';
import { translateObjects } from '../../src/agent/state.js';
import { compileRouteTable, routeHttp } from '../../src/dataplane/index.js';
import { normalizeHost } from '../../src/wire/index.js';
import { StaticBindingDirectory } from '../../src/edge/tunnels/directory.js';
import type { EdgeBinding } from '../../src/edge/tunnels/directory.js';

const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), creationTimestamp: '2026-01-01T00:00:00Z' });
const objects = [
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: meta('ing', 'default'),
    spec: { ingressClassName: 'tuna', rules: [{ host: '*.ing.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: meta('tuna'), spec: { controllerName: 'tuna.dev/gateway-controller' } },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: meta('gw', 'default'), spec: { gatewayClassName: 'tuna', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', hostname: '*.gw.test' }] } },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: meta('r', 'default'), spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] } },
  { apiVersion: 'v1', kind: 'Service', metadata: meta('web', 'default'), spec: { ports: [{ name: 'http', port: 80 }] } },
];

/**
 * The edge and the data plane agree on a Host's normal form and on how deep a
 * wildcard reaches, per the API the binding came from (Ingress: exactly one label; Gateway API:
 * one or more). The graph comes from the real translators; the edge's directory holds the graph's
 * bindings as config mode would.
 */
describe('host names at the edge and in the data plane', () => {
  const { graph } = translateObjects(objects);
  const table = compileRouteTable(graph);
  const edgeBindings: EdgeBinding[] = graph.bindings.map((b) => ({ id: b.id, kind: b.kind, hostnames: b.hostnames, tls: 'edge', ...(b.kind === 'address' ? { address: '127.77.0.1' } : {}) }));
  const directory = new StaticBindingDirectory(edgeBindings);

  /** served follows one request: the edge's binding (by Host, or the Gateway's own address), then the data plane's route. */
  function served(authority: string, viaAddress: boolean): string {
    const binding = viaAddress ? directory.byAddress('127.77.0.1') : directory.byHost(authority);
    if (binding === undefined) return 'edge 404';
    const host = normalizeHost(authority);
    if (host === undefined) return 'agent 400';
    const r = routeHttp(table, { bindingId: binding.id, publicPort: 80, publicProtocol: 'http' }, host, { method: 'GET', path: '/', headers: {}, query: new URLSearchParams() });
    return r.kind === 'route' ? `route of ${binding.id}` : `agent ${r.kind}`;
  }

  const ingress = 'route of binding/host/*.ing.test';
  const gateway = 'route of binding/address/default/gw';
  const cases: [string, boolean, string][] = [
    ['a.ing.test', false, ingress],
    ['A.Ing.Test.', false, ingress],
    ['a.ing.test.:8080', false, ingress],
    // Ingress: `*.ing.test` covers exactly one label; the edge relays, the agent refuses the deeper name
    ['b.a.ing.test', false, 'agent no-host'],
    ['ing.test', false, 'edge 404'],
    // Gateway API: `*.gw.test` covers one or more labels
    ['a.gw.test', true, gateway],
    ['c.b.a.gw.test', true, gateway],
    ['C.B.A.GW.test.', true, gateway],
    ['gw.test', true, 'agent no-host'],
  ];
  for (const [authority, viaAddress, want] of cases) {
    it(`serves Host ${authority} with: ${want}`, () => expect(served(authority, viaAddress)).to.equal(want));
  }

  it('takes the Ingress wildcard from the Ingress and the Gateway wildcard from the Gateway', () => {
    expect(graph.listeners.map((l) => [l.id, l.source.kind])).to.deep.equal([
      ['binding/address/default/gw/listener/http', 'Gateway'],
      ['binding/host/*.ing.test/listener/http', 'Ingress'],
    ]);
  });
});
