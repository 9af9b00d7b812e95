/**
 * DataPlanes' edges (src/operator/data-planes.ts): without --data-plane-image nothing is asked of
 * the apiserver and every dedicated Gateway says why; a failed call fails no sync; a Gateway name
 * that cannot be a label value is refused; correctDataPlanes keeps an address's own reason; the
 * fragment a Gateway's pods serve; the shared tunnels skip dedicated bindings.
 */
import { expect } from 'chai';
import type { Binding, ObjectStatus, RouteGraph } from '../../src/model/index.js';
import { emptyGraph } from '../../src/model/index.js';
import { DataPlanes, availability, correctDataPlanes, gatewayFragment } from '../../src/operator/data-planes.js';
import type { DataPlaneApi } from '../../src/operator/data-planes.js';
import { OperatorTunnels } from '../../src/operator/index.js';
import type { TunnelManager, TunnelSpec } from '../../src/tunnel/index.js';

const source = (name: string) => ({ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'shop', name });
const binding = (name: string, dedicated = true): Binding => ({ id: `binding/address/shop/${name}`, kind: 'address', hostnames: [], ...(dedicated ? { dedicated: {} } : {}), source: source(name) });
const graphOf = (...bindings: Binding[]): RouteGraph => ({ ...emptyGraph(), bindings });
const settings = { image: 'i', clusterRole: 'r', edge: 'tcp://127.0.0.1:1', clusterId: 'c', baseDomain: 'b.test', connections: 2 };
const gateways = new Map([['shop/gw', { metadata: { name: 'gw', namespace: 'shop', uid: 'u' } }]]);
const key = () => ({ keyId: 'k', token: 't', edgeBindingId: 'binding/address/127.77.0.1' });

/** throwingApi fails every call, and counts them. */
function throwingApi(): DataPlaneApi & { calls: number } {
  const api = { calls: 0 } as DataPlaneApi & { calls: number };
  const fail = () => {
    api.calls++;
    return Promise.reject(Object.assign(new Error('deployments.apps is forbidden'), { code: 403 }));
  };
  Object.assign(api, { listDeployments: fail, listClusterRoleBindings: fail, appliedOf: fail, apply: fail, delete: fail });
  return api;
}

describe('DataPlanes', () => {
  it('asks the apiserver nothing without --data-plane-image, and says so on each dedicated Gateway', async () => {
    const api = throwingApi();
    const report = await new DataPlanes(api, undefined).reconcile(graphOf(binding('gw'), binding('plain', false)), gateways, key);
    expect(api.calls).to.equal(0);
    expect(report.pending.map((p) => [p.bindingId, p.message])).to.deep.equal([['binding/address/shop/gw', 'its GatewayParameters ask for a dedicated data plane, and this operator was started without --data-plane-image']]);
  });

  it('fails no sync when the apiserver refuses: the Gateway is pending with the refusal, and the report carries it', async () => {
    const report = await new DataPlanes(throwingApi(), settings).reconcile(graphOf(binding('gw')), gateways, key);
    expect(report.error).to.be.instanceOf(Error);
    expect(report.pending.map((p) => p.message)).to.deep.equal(['its data plane could not be applied: deployments.apps is forbidden']);
  });

  it('refuses a Gateway name longer than a label value, and waits for the key of the address', async () => {
    const api = { listDeployments: () => Promise.resolve([]), listClusterRoleBindings: () => Promise.resolve([]) } as unknown as DataPlaneApi;
    const long = binding('g'.repeat(64));
    const report = await new DataPlanes(api, settings).reconcile(graphOf(long, binding('gw')), gateways, () => undefined);
    expect(report.pending.map((p) => p.message)).to.deep.equal([
      'a dedicated data plane needs the Gateway\'s name as the value of the gateway.networking.k8s.io/gateway-name label, at most 63 characters; 64 is too long',
      'its data plane waits for the tunnel key of its address',
    ]);
  });

  it('reads availability from the Deployment: available pods of its current generation', () => {
    expect(availability({ metadata: { name: 'd', generation: 2 }, status: { observedGeneration: 2, availableReplicas: 1 } }, 2).isAvailable).to.equal(true);
    expect(availability({ metadata: { name: 'd', generation: 3 }, status: { observedGeneration: 2, availableReplicas: 1 } }, 2)).to.deep.equal({ isAvailable: false, message: 'its data plane Deployment d is not available: 1 of 2 pod(s) available' });
  });
});

describe('correctDataPlanes', () => {
  const status = (programmed: 'True' | 'False', reason: string): ObjectStatus => ({
    ref: source('gw'),
    observedGeneration: 4,
    conditions: [],
    events: [],
    status: { conditions: [{ type: 'Programmed', status: programmed, reason, message: 'm', observedGeneration: 4 }] },
  });
  const pending = [{ bindingId: 'binding/address/shop/gw', source: source('gw'), message: 'its data plane Deployment is being created' }];

  it('turns Programmed=True into False Pending with the message, leaving the input alone', () => {
    const input = [status('True', 'Programmed')];
    const [out] = correctDataPlanes(input, pending);
    expect((out!.status!.conditions as { status: string; reason: string; message: string }[])[0]).to.include({ status: 'False', reason: 'Pending', message: 'its data plane Deployment is being created' });
    expect((input[0]!.status!.conditions as { status: string }[])[0]!.status).to.equal('True');
  });

  it('keeps a Programmed=False of the address (AddressNotAssigned says more)', () => {
    const [out] = correctDataPlanes([status('False', 'AddressNotAssigned')], pending);
    expect((out!.status!.conditions as { reason: string }[])[0]!.reason).to.equal('AddressNotAssigned');
  });
});

describe('gatewayFragment', () => {
  it('keeps the binding, its listeners, their virtual hosts and stream routes, and no reservation', () => {
    const graph: RouteGraph = {
      bindings: [binding('gw'), binding('other', false)],
      listeners: [
        { id: 'l1', bindingId: 'binding/address/shop/gw', name: 'web', port: 80, protocol: 'http', source: source('gw') },
        { id: 'l2', bindingId: 'binding/address/shop/other', name: 'web', port: 80, protocol: 'http', source: source('other') },
      ],
      virtualHosts: [{ id: 'v1', listenerId: 'l1', hostname: 'a.example', routes: [] }, { id: 'v2', listenerId: 'l2', hostname: 'b.example', routes: [] }],
      streamRoutes: [],
      reservations: [{ id: 'r', kind: 'host', hostname: 'c.example', source: source('other') } as unknown as RouteGraph['reservations'][number]],
    };
    const fragment = gatewayFragment(graph, 'binding/address/shop/gw');
    expect(fragment.bindings.map((b) => b.id)).to.deep.equal(['binding/address/shop/gw']);
    expect(fragment.listeners.map((l) => l.id)).to.deep.equal(['l1']);
    expect(fragment.virtualHosts.map((v) => v.id)).to.deep.equal(['v1']);
    expect(fragment.reservations).to.deep.equal([]);
  });
});

describe('OperatorTunnels and dedicated bindings', () => {
  const applied: TunnelSpec[][] = [];
  const manager = { apply: (specs: TunnelSpec[]) => applied.push(specs) } as unknown as TunnelManager;
  const edge = [{ host: '127.0.0.1', port: 1, tls: false }];

  it('leaves a dedicated binding to its Gateway’s pods; theirs holds it', async () => {
    await new OperatorTunnels(manager, edge, 2).apply([binding('gw'), binding('plain', false)]);
    expect(applied.pop()!.map((s) => s.bindingId)).to.deep.equal(['binding/address/shop/plain']);
    await new OperatorTunnels(manager, edge, 2, (id) => id, true).apply([binding('gw')]);
    expect(applied.pop()!.map((s) => s.bindingId)).to.deep.equal(['binding/address/shop/gw']);
  });
});
