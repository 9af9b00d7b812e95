import { expect } from 'chai';
import { canonicalize, compareRoutes } from '../../src/model/index.js';
import type { HttpRoute } from '../../src/model/index.js';
import { graphWith, route } from '../support/graph-builders.js';

const ids = (routes: HttpRoute[]): string[] => [...routes].sort(compareRoutes).map((r) => r.id);

describe('compareRoutes (Gateway API matching precedence)', () => {
  it('puts an Exact path before a longer Prefix', () => {
    expect(ids([route('prefix', { type: 'Prefix', value: '/a/very/long' }), route('exact', { type: 'Exact', value: '/a' })])).to.deep.equal([
      'exact',
      'prefix',
    ]);
  });

  it('puts the longest Prefix first', () => {
    expect(ids([route('short', { type: 'Prefix', value: '/' }), route('long', { type: 'Prefix', value: '/api' })])).to.deep.equal(['long', 'short']);
  });

  it('puts RegularExpression paths after Exact and before every Prefix, so a regex is reachable beside /', () => {
    const order = ids([
      route('p', { type: 'Prefix', value: '/a/very/long/prefix' }),
      route('re', { type: 'RegularExpression', value: '/x.*' }),
      route('exact', { type: 'Exact', value: '/' }),
    ]);
    expect(order).to.deep.equal(['exact', 're', 'p']);
  });

  const tieBreakers: [string, Partial<HttpRoute>, Partial<HttpRoute>][] = [
    ['a method match', { match: { path: { type: 'Prefix', value: '/' }, method: 'GET', headers: [], query: [] } }, {}],
    [
      'more header matches',
      { match: { path: { type: 'Prefix', value: '/' }, headers: [{ name: 'a', type: 'Exact', value: '1' }], query: [] } },
      {},
    ],
    [
      'more query matches',
      { match: { path: { type: 'Prefix', value: '/' }, headers: [], query: [{ name: 'q', type: 'Exact', value: '1' }] } },
      {},
    ],
    ['the older route', { origin: { created: '2025-01-01T00:00:00Z', key: 'z/z', rule: 0, match: 0 } }, {}],
    ['the route first by namespace/name', { origin: { created: '2026-01-01T00:00:00Z', key: 'a/a', rule: 0, match: 0 } }, {}],
    ['the earlier rule', { origin: { created: '2026-01-01T00:00:00Z', key: 'default/web', rule: 0, match: 0 } }, { origin: { created: '2026-01-01T00:00:00Z', key: 'default/web', rule: 1, match: 0 } }],
  ];
  for (const [what, winner, loser] of tieBreakers) {
    it(`on equal paths prefers ${what}`, () => {
      const a = route('winner', { type: 'Prefix', value: '/' }, winner);
      const b = route('loser', { type: 'Prefix', value: '/' }, loser);
      expect(ids([b, a])).to.deep.equal(['winner', 'loser']);
      expect(ids([a, b])).to.deep.equal(['winner', 'loser']);
    });
  }

  it('sorts routes with an unknown creation time after known ones', () => {
    const known = route('known', { type: 'Prefix', value: '/' });
    const unknown = route('unknown', { type: 'Prefix', value: '/' }, { origin: { created: '', key: 'a/a', rule: 0, match: 0 } });
    expect(ids([unknown, known])).to.deep.equal(['known', 'unknown']);
  });
});

describe('canonicalize', () => {
  it('gives the same text for the same nodes in any order', () => {
    const r1 = route('r1', { type: 'Prefix', value: '/a' });
    const r2 = route('r2', { type: 'Exact', value: '/b' });
    const a = graphWith('a.example.com', [r1, r2]);
    const b = graphWith('a.example.com', [r2, r1]);
    b.bindings[0]!.hostnames = ['a.example.com', 'a.example.com'];
    expect(JSON.stringify(canonicalize(a))).to.equal(JSON.stringify(canonicalize(b)));
  });

  it('does not modify its input', () => {
    const g = graphWith('a.example.com', [route('r1', { type: 'Prefix', value: '/a' }), route('r2', { type: 'Exact', value: '/b' })]);
    canonicalize(g);
    expect(g.virtualHosts[0]!.routes.map((r) => r.id)).to.deep.equal(['r1', 'r2']);
  });
});

describe('canonicalize of nodes it has seen', () => {
  it('hands the same binding and virtual host again for the same input nodes, and a fresh one for a new node of equal content', () => {
    const g = graphWith('a.example.com', [route('r2', { type: 'Prefix', value: '/' }), route('r1', { type: 'Exact', value: '/x' })]);
    const first = canonicalize(g);
    const again = canonicalize({ ...g, bindings: [...g.bindings], virtualHosts: [...g.virtualHosts] });
    expect(again.bindings[0]).to.equal(first.bindings[0]);
    expect(again.virtualHosts[0]).to.equal(first.virtualHosts[0]);
    expect(canonicalize(first).virtualHosts[0], 'a canonical node is its own canonical form').to.equal(first.virtualHosts[0]);
    const copy = canonicalize(structuredClone(g));
    expect(copy.virtualHosts[0]).to.not.equal(first.virtualHosts[0]);
    expect(copy).to.deep.equal(first);
    expect(first.virtualHosts[0]!.routes.map((r) => r.id)).to.deep.equal(['r1', 'r2']);
  });
});
