/**
 * Malformed Gateway API objects (as manifest files can hold them; the API server would refuse most)
 * must never make the translator throw or emit an invalid graph.
 */
import { expect } from 'chai';
import { validate } from '../../src/model/index.js';
import { snapshotFromObjects, translateSnapshot } from '../../src/translate/index.js';

const gwApi = 'gateway.networking.k8s.io/v1';
const gatewayClass = { apiVersion: gwApi, kind: 'GatewayClass', metadata: { name: 'tuna' }, spec: { controllerName: 'tuna.dev/gateway-controller' } };
const gateway = (listeners: unknown): unknown => ({
  apiVersion: gwApi,
  kind: 'Gateway',
  metadata: { name: 'gw', namespace: 'infra' },
  spec: { gatewayClassName: 'tuna', listeners },
});
const route = (kind: string, spec: unknown): unknown => ({ apiVersion: gwApi, kind, metadata: { name: 'r', namespace: 'infra' }, spec });
const okListener = { name: 'http', port: 80, protocol: 'HTTP' };

const cases: [string, unknown[]][] = [
  ['a Gateway without spec', [{ apiVersion: gwApi, kind: 'Gateway', metadata: { name: 'gw', namespace: 'infra' } }]],
  ['a Gateway whose listeners is not a list of objects', [gateway([null, 7, 'x'])]],
  ['listeners without name, port or protocol', [gateway([{}, { name: 'a' }, { name: 'b', port: 'eighty', protocol: 'HTTP' }])]],
  ['a hostname that is a number', [gateway([{ name: 'h', port: 80, protocol: 'HTTP', hostname: 12345 }])]],
  ['a TLS listener with certificateRefs that are not objects', [gateway([{ name: 't', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [null, 3] } }])]],
  ['a selector that is not an object', [gateway([{ ...okListener, allowedRoutes: { namespaces: { from: 'Selector', selector: 'team=a' } } }])]],
  ['kinds that are not objects', [gateway([{ ...okListener, allowedRoutes: { kinds: ['HTTPRoute', null] } }])]],
  ['an HTTPRoute without spec', [gateway([okListener]), route('HTTPRoute', undefined)]],
  ['parentRefs that are not objects', [gateway([okListener]), route('HTTPRoute', { parentRefs: [null, 'gw', { name: 5 }] })]],
  [
    'rules, matches, filters and backendRefs of the wrong shape',
    [
      gateway([okListener]),
      route('HTTPRoute', {
        parentRefs: [{ name: 'gw' }],
        hostnames: [42, null],
        rules: [null, { matches: [null, { path: { type: 'Exact', value: 7 } }, { headers: [null, { name: 1, value: 2 }] }] }, { filters: [null, { type: 'RequestMirror' }, { type: 'URLRewrite', urlRewrite: { path: {} } }], backendRefs: [null, { name: 'x', port: 'http', weight: -1 }] }],
      }),
    ],
  ],
  ['a GRPCRoute with method matches of the wrong shape', [gateway([okListener]), route('GRPCRoute', { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ method: { type: 'RegularExpression', service: 3 } }] }] })]],
  ['a TLSRoute and a TCPRoute with odd rules', [gateway([{ name: 'tcp', port: 9000, protocol: 'TCP' }]), route('TCPRoute', { parentRefs: [{ name: 'gw' }], rules: 'none' }), route('TLSRoute', { parentRefs: [{ name: 'gw' }], hostnames: 'a.example.com' })]],
  ['a ListenerSet without spec, and one whose parentRef is not an object', [gateway([okListener]), { apiVersion: gwApi, kind: 'ListenerSet', metadata: { name: 'a', namespace: 'infra' } }, { apiVersion: gwApi, kind: 'ListenerSet', metadata: { name: 'b', namespace: 'infra' }, spec: { parentRef: 'gw', listeners: [okListener] } }]],
  ['a ListenerSet whose listeners are not objects', [gateway([okListener]), { apiVersion: gwApi, kind: 'ListenerSet', metadata: { name: 'a', namespace: 'infra' }, spec: { parentRef: { name: 'gw' }, listeners: [null, 3, { name: 'x', port: 'eighty' }] } }]],
  ['a ReferenceGrant without from or to', [gateway([okListener]), { apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: 'g', namespace: 'x' } }]],
];

describe('Gateway API translation of malformed input', () => {
  for (const [what, objects] of cases) {
    it(`survives ${what} with a valid graph`, () => {
      const { snapshot } = snapshotFromObjects([gatewayClass, ...objects]);
      const result = translateSnapshot(snapshot);
      expect(validate(result.graph)).to.deep.equal([]);
    });
  }
});

describe('Gateway API malformed input statuses', () => {
  it('refuses a route with a non-string hostname with UnsupportedValue naming the field', () => {
    const { snapshot } = snapshotFromObjects([gatewayClass, gateway([okListener]), route('HTTPRoute', { parentRefs: [{ name: 'gw' }], hostnames: [42] })]);
    const status = translateSnapshot(snapshot).statuses.find((s) => s.ref.kind === 'HTTPRoute');
    const parents = (status?.status as { parents: { conditions: { type: string; status: string; reason: string; message: string }[] }[] }).parents;
    expect(parents[0]?.conditions[0]).to.include({ type: 'Accepted', status: 'False', reason: 'UnsupportedValue' });
    expect(parents[0]?.conditions[0]?.message).to.contain('spec.hostnames[0]');
  });

  it('refuses a Gateway whose listener port is not a number and publishes nothing for it', () => {
    const { snapshot } = snapshotFromObjects([gatewayClass, gateway([{ name: 'http', port: '80', protocol: 'HTTP' }])]);
    const result = translateSnapshot(snapshot);
    const status = result.statuses.find((s) => s.ref.kind === 'Gateway');
    const conditions = (status?.status as { conditions: { type: string; status: string; message: string }[] }).conditions;
    expect(conditions[0]).to.include({ type: 'Accepted', status: 'False' });
    expect(conditions[0]?.message).to.contain('spec.listeners[0].port');
    expect(result.graph.bindings).to.deep.equal([]);
  });
});
