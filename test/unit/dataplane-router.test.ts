import { expect } from 'chai';
import { compileRouteTable, routeHttp, routeStream } from '../../src/dataplane/index.js';
import type { EntryPoint } from '../../src/dataplane/index.js';
import type { HttpMatch, Listener, StreamRoute } from '../../src/model/index.js';
import { BINDING, hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';

const entry: EntryPoint = { bindingId: BINDING, publicPort: 80, publicProtocol: 'http' };

function facts(path: string, more: { method?: string; headers?: Record<string, string>; query?: string } = {}) {
  return { method: more.method ?? 'GET', path, headers: more.headers ?? {}, query: new URLSearchParams(more.query ?? '') };
}

function route(id: string, match: Partial<HttpMatch>) {
  return httpRoute(id, [serviceBackend(id)], { match });
}

describe('dataplane router', () => {
  describe('virtual host selection', () => {
    const table = compileRouteTable(
      hostGraph([
        { hostname: 'a.example.com', routes: [route('exact', {})] },
        { hostname: '*.example.com', routes: [route('wild', {})] },
        { hostname: '*.b.example.com', routes: [route('longer-wild', {})] },
        { hostname: '*', routes: [route('any', {})] },
      ]),
    );
    const cases: [string, string][] = [
      ['a.example.com', 'test/exact'],
      ['c.example.com', 'test/wild'],
      ['x.b.example.com', 'test/longer-wild'],
      ['deep.x.example.com', 'test/wild'],
      ['example.com', 'test/any'],
      ['other.org', 'test/any'],
    ];
    for (const [host, id] of cases) {
      it(`sends host ${host} to ${id}`, () => {
        const r = routeHttp(table, entry, host, facts('/'));
        expect(r.kind === 'route' ? r.route.id : r.kind).to.equal(id);
      });
    }

    it('reports no-host when no virtual host fits and there is no catch-all', () => {
      const t = compileRouteTable(hostGraph([{ hostname: 'a.example.com', routes: [route('exact', {})] }]));
      expect(routeHttp(t, entry, 'b.example.com', facts('/')).kind).to.equal('no-host');
    });

    it('finds no host on a binding the graph does not hold', () => {
      expect(routeHttp(table, { ...entry, bindingId: 'binding/host/else' }, 'a.example.com', facts('/')).kind).to.equal('no-host');
    });
  });

  describe('route precedence (graph order, first match wins)', () => {
    const table = compileRouteTable(
      hostGraph([
        {
          hostname: 'app.test',
          routes: [
            route('root', { path: { type: 'Prefix', value: '/' } }),
            route('api', { path: { type: 'Prefix', value: '/api' } }),
            route('api-v2', { path: { type: 'Prefix', value: '/api/v2/' } }),
            route('exact-login', { path: { type: 'Exact', value: '/login' } }),
            route('regex-img', { path: { type: 'RegularExpression', value: '/img/[0-9]+\\.png' } }),
            route('api-post', { path: { type: 'Prefix', value: '/api' }, method: 'POST' }),
            route('api-canary', { path: { type: 'Prefix', value: '/api' }, headers: [{ name: 'X-Canary', type: 'Exact', value: 'yes' }] }),
            route('api-debug', { path: { type: 'Prefix', value: '/api' }, query: [{ name: 'debug', type: 'RegularExpression', value: '1|true' }] }),
          ],
        },
      ]),
    );
    const cases: [string, ReturnType<typeof facts>, string][] = [
      ['an exact path', facts('/login'), 'test/exact-login'],
      ['a path under an exact one by prefix', facts('/login/x'), 'test/root'],
      ['the longest prefix', facts('/api/v2/users'), 'test/api-v2'],
      ['a prefix with a trailing slash at its bare path', facts('/api/v2'), 'test/api-v2'],
      ['a prefix element-wise only', facts('/apix'), 'test/root'],
      ['the prefix itself', facts('/api'), 'test/api'],
      ['a method match over a plain prefix', facts('/api/x', { method: 'POST' }), 'test/api-post'],
      ['a header match (case-insensitive name)', facts('/api/x', { headers: { 'x-canary': 'yes' } }), 'test/api-canary'],
      ['a header value that differs', facts('/api/x', { headers: { 'x-canary': 'no' } }), 'test/api'],
      ['a query match by regular expression', facts('/api/x', { query: 'debug=true' }), 'test/api-debug'],
      // RegularExpression ranks between Exact and Prefix (src/model/order.ts), so it wins over `/`.
      ['a path a regular expression matches beside a / prefix', facts('/img/42.png'), 'test/regex-img'],
      ['a path the regular expression does not match', facts('/img/x.png'), 'test/root'],
    ];
    for (const [what, req, id] of cases) {
      it(`picks ${id} for ${what}`, () => {
        const r = routeHttp(table, entry, 'app.test', req);
        expect(r.kind === 'route' ? r.route.id : r.kind).to.equal(id);
      });
    }

    it('reports no-route when no match holds', () => {
      const t = compileRouteTable(hostGraph([{ hostname: 'app.test', routes: [route('only', { path: { type: 'Exact', value: '/x' } })] }]));
      expect(routeHttp(t, entry, 'app.test', facts('/y')).kind).to.equal('no-route');
    });

    it('matches a regular expression against the whole path only', () => {
      const t = compileRouteTable(hostGraph([{ hostname: 'app.test', routes: [route('img', { path: { type: 'RegularExpression', value: '/img/[0-9]+\\.png' } })] }]));
      expect(routeHttp(t, entry, 'app.test', facts('/img/42.png')).kind).to.equal('route');
      expect(routeHttp(t, entry, 'app.test', facts('/img/42.png.bak')).kind).to.equal('no-route');
      expect(routeHttp(t, entry, 'app.test', facts('/x/img/42.png')).kind).to.equal('no-route');
    });

    it('never matches an invalid regular expression', () => {
      const t = compileRouteTable(hostGraph([{ hostname: 'app.test', routes: [route('bad', { path: { type: 'RegularExpression', value: '(' } })] }]));
      expect(routeHttp(t, entry, 'app.test', facts('/(')).kind).to.equal('no-route');
    });
  });

  describe('listener selection', () => {
    it('uses the listener of the public port, else the listeners of the public protocol', () => {
      const extra: Listener = { id: `${BINDING}/listener/alt`, bindingId: BINDING, name: 'alt', port: 8080, protocol: 'http', source: { group: '', kind: 'T', name: 'x' } };
      const graph = hostGraph([{ hostname: 'app.test', routes: [route('on-80', {})] }], { listeners: [extra] });
      graph.virtualHosts.push({ id: `${extra.id}/vhost/app.test`, listenerId: extra.id, hostname: 'app.test', routes: [route('on-8080', {})] });
      const table = compileRouteTable(graph);
      const at = (publicPort: number) => {
        const r = routeHttp(table, { ...entry, publicPort }, 'app.test', facts('/'));
        return r.kind === 'route' ? r.route.id : r.kind;
      };
      expect(at(8080)).to.equal('test/on-8080');
      expect(at(80)).to.equal('test/on-80');
      // An edge on a random development port: both listeners speak http; the first vhost found wins.
      expect(['test/on-80', 'test/on-8080']).to.include(at(43123));
    });

    it('routes each entry point the same on every request, also beyond the entry points a table keeps (the port is the edge\'s)', () => {
      const extra: Listener = { id: `${BINDING}/listener/alt`, bindingId: BINDING, name: 'alt', port: 8080, protocol: 'http', source: { group: '', kind: 'T', name: 'x' } };
      const tls: Listener = { id: `${BINDING}/listener/tls`, bindingId: BINDING, name: 'tls', port: 443, protocol: 'https', source: { group: '', kind: 'T', name: 'x' } };
      const graph = hostGraph([{ hostname: 'app.test', routes: [route('on-80', {})] }], { listeners: [extra, tls] });
      graph.virtualHosts.push({ id: `${extra.id}/vhost/app.test`, listenerId: extra.id, hostname: 'app.test', routes: [route('on-8080', {})] });
      graph.virtualHosts.push({ id: `${tls.id}/vhost/app.test`, listenerId: tls.id, hostname: 'app.test', routes: [route('on-443', {})] });
      const table = compileRouteTable(graph);
      const at = (publicPort: number, publicProtocol: EntryPoint['publicProtocol'] = 'http') => {
        const r = routeHttp(table, { bindingId: BINDING, publicPort, publicProtocol }, 'app.test', facts('/'));
        return r.kind === 'route' ? r.route.id : r.kind;
      };
      const firstTime = [at(80), at(8080), at(443, 'https'), at(8443, 'https')];
      expect(firstTime).to.deep.equal(['test/on-80', 'test/on-8080', 'test/on-443', 'test/on-443']);
      // 40 more development ports (more than the table keeps), then the first four again, in both orders
      for (let port = 20000; port < 20040; port++) expect(at(port, 'https')).to.equal('test/on-443');
      expect([at(80), at(8080), at(443, 'https'), at(8443, 'https')]).to.deep.equal(firstTime);
      expect([at(8443, 'https'), at(443, 'https'), at(8080), at(80)]).to.deep.equal([...firstTime].reverse());
      expect(routeHttp(table, { bindingId: 'binding/none', publicPort: 80, publicProtocol: 'http' }, 'app.test', facts('/')).kind).to.equal('no-host');
    });
  });

  describe('stream routes', () => {
    const tcp: Listener = { id: 'binding/tcp/l', bindingId: 'binding/tcp', name: 'tcp', port: 5432, protocol: 'tcp', source: { group: '', kind: 'T', name: 'x' } };
    const tls: Listener = {
      id: 'binding/tls/l',
      bindingId: 'binding/tls',
      name: 'tls',
      port: 443,
      protocol: 'tls',
      tls: { mode: 'terminate-in-cluster', certificates: [{ namespace: 'default', name: 'cert' }] },
      source: { group: '', kind: 'T', name: 'x' },
    };
    const sr = (id: string, listenerId: string, hostnames: string[]): StreamRoute => ({
      id,
      listenerId,
      hostnames,
      backends: [serviceBackend(id, { protocol: 'tcp' })],
      source: { group: '', kind: 'T', name: id },
    });
    const graph = hostGraph([], { listeners: [tcp, tls], streamRoutes: [sr('db', tcp.id, [])] });
    const table = compileRouteTable(graph);

    it('forwards a TCP port to its stream route', () => {
      const r = routeStream(table, { bindingId: 'binding/tcp', publicPort: 31000, publicProtocol: 'tcp' }, undefined);
      expect(r.kind === 'forward' ? r.route.id : r.kind).to.equal('db');
    });

    it('terminates TLS on a terminate-in-cluster listener', () => {
      const r = routeStream(table, { bindingId: 'binding/tls', publicPort: 443, publicProtocol: 'tls' }, 'a.example.com');
      expect(r.kind).to.equal('terminate');
    });

    it('terminates and forwards the bytes of a tls listener that has TLSRoutes (Terminate mode)', () => {
      const raw: Listener = { ...tls, id: 'binding/raw/l', bindingId: 'binding/raw' };
      const t = compileRouteTable(hostGraph([], { listeners: [raw], streamRoutes: [sr('raw-route', raw.id, ['raw.example.com'])] }));
      const at = (sni: string) => routeStream(t, { bindingId: 'binding/raw', publicPort: 443, publicProtocol: 'tls' }, sni);
      const hit = at('raw.example.com');
      expect(hit.kind === 'terminate-forward' ? hit.route.id : hit.kind).to.equal('raw-route');
      // No TLSRoute for the name: terminated as HTTPS (and then answered 404 by the HTTP router).
      expect(at('other.example.com').kind).to.equal('terminate');
    });

    it('chooses a passthrough route by SNI', () => {
      const pass: Listener = { ...tls, id: 'binding/p/l', bindingId: 'binding/p', tls: { mode: 'passthrough', certificates: [] } };
      const g = hostGraph([], { listeners: [pass], streamRoutes: [sr('a', pass.id, ['a.example.com']), sr('wild', pass.id, ['*.example.com'])] });
      const t = compileRouteTable(g);
      const at = (sni: string) => {
        const r = routeStream(t, { bindingId: 'binding/p', publicPort: 443, publicProtocol: 'tls' }, sni);
        return r.kind === 'forward' ? r.route.id : r.kind;
      };
      expect(at('a.example.com')).to.equal('a');
      expect(at('b.example.com')).to.equal('wild');
      expect(at('other.org')).to.equal('none');
    });
  });
});
