import { expect } from 'chai';
import { canonicalize, diff, stableStringify } from '../../src/model/index.js';
import { graphWith, route, serviceBackend } from '../support/graph-builders.js';

const base = () => canonicalize(graphWith('a.example.com', [route('r1', { type: 'Prefix', value: '/' }), route('r2', { type: 'Exact', value: '/x' })]));

describe('diff', () => {
  it('reports nothing for equal graphs', () => {
    const d = diff(base(), base());
    expect(d.isEmpty).to.equal(true);
    expect(d.isTunnelChange).to.equal(false);
  });

  it('reports a changed backend as a route change only, never a tunnel change', () => {
    const after = base();
    after.virtualHosts[0]!.routes[1]!.backends = [serviceBackend('other')];
    const d = diff(base(), after);
    expect(d.routes.changed.map((c) => c.after.route.id)).to.deep.equal(['r1']);
    expect(d.isTunnelChange).to.equal(false);
    expect(d.bindings.changed).to.have.length(0);
    expect(d.virtualHosts.changed).to.have.length(0);
    expect(d.isEmpty).to.equal(false);
  });

  it('reports an added route and the virtual host whose order changed', () => {
    const after = canonicalize(
      graphWith('a.example.com', [route('r1', { type: 'Prefix', value: '/' }), route('r2', { type: 'Exact', value: '/x' }), route('r3', { type: 'Prefix', value: '/api' })]),
    );
    const d = diff(base(), after);
    expect(d.routes.added.map((p) => p.route.id)).to.deep.equal(['r3']);
    expect(d.virtualHosts.changed).to.have.length(1);
    expect(d.isTunnelChange).to.equal(false);
  });

  it('reports a removed route', () => {
    const after = canonicalize(graphWith('a.example.com', [route('r1', { type: 'Prefix', value: '/' })]));
    const d = diff(base(), after);
    expect(d.routes.removed.map((p) => p.route.id)).to.deep.equal(['r2']);
  });

  it('reports a new host as a tunnel change', () => {
    const other = graphWith('b.example.com', [route('rb', { type: 'Prefix', value: '/' })]);
    const after = base();
    after.bindings.push(...other.bindings);
    after.listeners.push(...other.listeners);
    after.virtualHosts.push(...other.virtualHosts);
    const d = diff(base(), canonicalize(after));
    expect(d.isTunnelChange).to.equal(true);
    expect(d.bindings.added.map((b) => b.id)).to.deep.equal(['binding/host/b.example.com']);
    expect(d.listeners.added).to.have.length(1);
    expect(d.virtualHosts.added).to.have.length(1);
  });

  it('reports a changed binding (a new hostname claim) as a tunnel change', () => {
    const after = base();
    after.bindings[0]!.hostnames = ['a.example.com', 'www.a.example.com'];
    const d = diff(base(), after);
    expect(d.bindings.changed).to.have.length(1);
    expect(d.isTunnelChange).to.equal(true);
  });

  it('reports a removed binding', () => {
    const d = diff(base(), { bindings: [], listeners: [], virtualHosts: [], streamRoutes: [], reservations: [] });
    expect(d.bindings.removed).to.have.length(1);
    expect(d.routes.removed).to.have.length(2);
  });
});

describe('stableStringify', () => {
  it('ignores object key order', () => {
    expect(stableStringify({ b: 1, a: { d: 2, c: [3, { f: 1, e: 2 }] } })).to.equal(stableStringify({ a: { c: [3, { e: 2, f: 1 }], d: 2 }, b: 1 }));
  });
  it('keeps array order', () => {
    expect(stableStringify([1, 2])).to.not.equal(stableStringify([2, 1]));
  });
});
