import { expect } from 'chai';
import { emptyGraph } from '../../src/model/index.js';
import type { ObjectRef } from '../../src/model/index.js';
import { mergeFragments } from '../../src/translate/merge.js';
import { snapshotFromObjects } from '../../src/translate/index.js';
import type { Fragment } from '../../src/translate/index.js';
import { graphWith, route } from '../support/graph-builders.js';

const owner = (kind: string, name: string): ObjectRef => ({ group: kind === 'Tunnel' ? 'tuna.dev' : 'networking.k8s.io', kind, namespace: 'default', name });

function hostFragment(group: string, host: string, who: ObjectRef, created: string, routeId: string): Fragment {
  const graph = graphWith(host, [route(routeId, { type: 'Prefix', value: '/' })]);
  return { group, graph, claims: [{ hostname: host, bindingId: graph.bindings[0]!.id, owner: who, created }] };
}

describe('mergeFragments', () => {
  it('gives a contested hostname to the oldest claim and reports the loser', () => {
    const ingress = hostFragment('ingress', 'a.example.com', owner('Ingress', 'web'), '2026-02-01T00:00:00Z', 'ingress-route');
    const tunnel = hostFragment('tunnel/default/t', 'a.example.com', owner('Tunnel', 't'), '2026-01-01T00:00:00Z', 'tunnel-route');
    for (const order of [[ingress, tunnel], [tunnel, ingress]]) {
      const { graph, statuses } = mergeFragments(order, []);
      expect(graph.virtualHosts.flatMap((v) => v.routes.map((r) => r.id))).to.deep.equal(['tunnel-route']);
      expect(statuses).to.have.length(1);
      expect(statuses[0]!.ref.kind).to.equal('Ingress');
      expect(statuses[0]!.conditions[0]).to.include({ type: 'Published', status: 'False', reason: 'HostnameConflict' });
      expect(statuses[0]!.events[0]!.message).to.contain('Tunnel default/t');
    }
  });

  it('replaces the loser\'s Published condition and drops the lost hostname from status.loadBalancer', () => {
    const ingress = hostFragment('ingress', 'a.example.com', owner('Ingress', 'web'), '2026-02-01T00:00:00Z', 'ingress-route');
    const tunnel = hostFragment('tunnel/default/t', 'a.example.com', owner('Tunnel', 't'), '2026-01-01T00:00:00Z', 'tunnel-route');
    const prior = {
      ref: owner('Ingress', 'web'),
      conditions: [{ type: 'Published', status: 'True' as const, reason: 'Published', message: 'ok' }],
      status: { loadBalancer: { ingress: [{ hostname: 'a.example.com' }, { hostname: 'b.example.com' }] } },
      events: [],
    };
    const { statuses } = mergeFragments([ingress, tunnel], [prior]);
    expect(statuses[0]!.conditions.filter((c) => c.type === 'Published')).to.have.length(1);
    expect(statuses[0]!.conditions[0]).to.include({ status: 'False', reason: 'HostnameConflict' });
    expect(statuses[0]!.status).to.deep.equal({ loadBalancer: { ingress: [{ hostname: 'b.example.com' }] } });
  });

  it('marks a losing Tunnel not Ready in its status body and drops its url on the lost host', () => {
    const ingress = hostFragment('ingress', 'a.example.com', owner('Ingress', 'web'), '2025-01-01T00:00:00Z', 'ingress-route');
    const tunnel = hostFragment('tunnel/default/t', 'a.example.com', owner('Tunnel', 't'), '2026-01-01T00:00:00Z', 'tunnel-route');
    const pending = { type: 'Ready', status: 'Unknown' as const, reason: 'Pending', message: 'waiting' };
    const prior = {
      ref: owner('Tunnel', 't'),
      conditions: [pending],
      status: { conditions: [pending], hostname: 'a.example.com', url: 'https://a.example.com' },
      events: [],
    };
    const { statuses } = mergeFragments([tunnel, ingress], [prior]);
    const body = statuses[0]!.status as { conditions: { type: string; status: string; reason: string }[]; url?: string; hostname: string };
    for (const list of [statuses[0]!.conditions, body.conditions])
      expect(list.map((c) => `${c.type}=${c.status}/${c.reason}`)).to.deep.equal(['Ready=False/HostnameConflict', 'Published=False/HostnameConflict']);
    expect(body.url).to.equal(undefined);
    expect(body.hostname).to.equal('a.example.com');
  });

  it('breaks a timestamp tie by the claiming object, not by fragment order', () => {
    const a = hostFragment('g1', 'a.example.com', owner('Ingress', 'b-web'), '2026-01-01T00:00:00Z', 'b-route');
    const b = hostFragment('g2', 'a.example.com', owner('Ingress', 'a-web'), '2026-01-01T00:00:00Z', 'a-route');
    const one = mergeFragments([a, b], []);
    const two = mergeFragments([b, a], []);
    expect(JSON.stringify(one)).to.equal(JSON.stringify(two));
    expect(one.graph.virtualHosts[0]!.routes[0]!.id).to.equal('a-route');
  });

  it('lets claims of one group share a hostname', () => {
    const a = hostFragment('ingress', 'a.example.com', owner('Ingress', 'one'), '2026-01-01T00:00:00Z', 'r');
    a.claims.push({ ...a.claims[0]!, owner: owner('Ingress', 'two'), created: '2025-01-01T00:00:00Z' });
    const { graph, statuses } = mergeFragments([a], []);
    expect(graph.bindings).to.have.length(1);
    expect(statuses).to.deep.equal([]);
  });

  it('keeps an address binding that loses a hostname, without that hostname', () => {
    const ingress = hostFragment('ingress', 'a.example.com', owner('Ingress', 'web'), '2025-01-01T00:00:00Z', 'ingress-route');
    const gw = emptyGraph();
    const src = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name: 'gw' };
    gw.bindings.push({ id: 'binding/address/default/gw', kind: 'address', hostnames: ['a.example.com', 'b.example.com'], source: src });
    const route_ = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default', name: 'r' };
    const gateway: Fragment = {
      group: 'gateway/default/gw',
      graph: gw,
      claims: ['a.example.com', 'b.example.com'].map((hostname) => ({ hostname, bindingId: 'binding/address/default/gw', owner: route_, created: '2026-01-01T00:00:00Z' })),
    };
    const { graph, statuses } = mergeFragments([gateway, ingress], []);
    expect(graph.bindings.find((b) => b.kind === 'address')!.hostnames).to.deep.equal(['b.example.com']);
    expect(statuses.map((s) => s.ref.kind)).to.deep.equal(['HTTPRoute']);
  });
});

describe('snapshotFromObjects', () => {
  it('drops Secret data so that no key material reaches a translator', () => {
    const { snapshot } = snapshotFromObjects([
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, type: 'kubernetes.io/tls', data: { 'tls.key': 'c2VjcmV0' } },
    ]);
    expect(JSON.stringify(snapshot)).to.not.contain('c2VjcmV0');
    expect(snapshot.secrets[0]).to.deep.include({ type: 'kubernetes.io/tls', dataKeys: ['tls.key'] });
  });

  it('sorts objects into lists by group and kind, any version, and returns the rest as ignored', () => {
    const { snapshot, ignored } = snapshotFromObjects([
      { apiVersion: 'gateway.networking.k8s.io/v1alpha2', kind: 'TLSRoute', metadata: { name: 't' } },
      { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'TLSRoute', metadata: { name: 'u' } },
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } },
      null,
    ]);
    expect(snapshot.tlsRoutes).to.have.length(2);
    expect(ignored).to.have.length(2);
  });
});
