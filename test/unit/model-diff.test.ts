import { expect } from 'chai';
import { canonicalize, diff, stableStringify, tunnelsDiffer } from '../../src/model/index.js';
import type { RouteGraph } from '../../src/model/index.js';
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

/** the replacer-based serialiser stableStringify replaced (it made sorted copies of every object) */
function replacerStringify(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

describe('stableStringify writes what the replacer-based version wrote', () => {
  const samples: unknown[] = [
    null, 0, -1.5, 'text "quoted" \\ \u2028', true, [], {}, [null, undefined, 1, 'a', [2, [3]]],
    { z: 1, a: undefined, m: null, f: () => 1, n: { y: [1, { b: 2, a: 1 }], x: new Date(0) } },
    { 'key with "quotes"': 1, '': 2, '10': 3, '9': 4 },
    base(),
  ];
  for (const [i, sample] of samples.entries()) {
    it(`sample ${i}`, () => expect(stableStringify(sample)).to.equal(replacerStringify(sample)));
  }
});

describe('tunnelsDiffer', () => {
  const other = (): RouteGraph => {
    const g = base();
    const b = graphWith('b.example.com', [route('rb', { type: 'Prefix', value: '/' })]);
    g.bindings.push(...b.bindings);
    g.listeners.push(...b.listeners);
    g.virtualHosts.push(...b.virtualHosts);
    return canonicalize(g);
  };
  const changedClaim = (): RouteGraph => {
    const g = base();
    g.bindings[0]!.hostnames = ['a.example.com', 'www.a.example.com'];
    return g;
  };
  const changedBackend = (): RouteGraph => {
    const g = base();
    g.virtualHosts[0]!.routes[0]!.backends = [serviceBackend('other', 8080)];
    return g;
  };
  const empty = (): RouteGraph => ({ bindings: [], listeners: [], virtualHosts: [], streamRoutes: [], reservations: [] });
  const cases: [string, () => RouteGraph, () => RouteGraph][] = [
    ['equal graphs', base, base],
    ['a changed backend', base, changedBackend],
    ['a new host', base, other],
    ['a host gone', other, base],
    ['a changed claim', base, changedClaim],
    ['every binding gone', base, empty],
  ];
  for (const [what, before, after] of cases) {
    it(`agrees with diff().isTunnelChange: ${what}`, () => {
      const [b, a] = [before(), after()];
      expect(tunnelsDiffer(b, a)).to.equal(diff(b, a).isTunnelChange);
    });
  }
  it('says a changed claim and a new host are tunnel changes, a changed backend is not', () => {
    expect(tunnelsDiffer(base(), changedClaim())).to.equal(true);
    expect(tunnelsDiffer(base(), other())).to.equal(true);
    expect(tunnelsDiffer(base(), changedBackend())).to.equal(false);
  });
});
