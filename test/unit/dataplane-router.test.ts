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

    it('terminates TLS on a terminate-in-cluster HTTPS listener, to route the HTTP inside', () => {
      const https: Listener = { ...tls, id: 'binding/https/l', bindingId: 'binding/https', protocol: 'https' };
      const t = compileRouteTable(hostGraph([], { listeners: [https] }));
      const r = routeStream(t, { bindingId: 'binding/https', publicPort: 443, publicProtocol: 'tls' }, 'a.example.com');
      expect(r.kind === 'terminate' ? r.listeners.map((l) => l.id) : r.kind).to.deep.equal([https.id]);
    });

    it('rejects a stream for a TLS Terminate listener that has no TLSRoute instead of terminating it', () => {
      const r = routeStream(table, { bindingId: 'binding/tls', publicPort: 443, publicProtocol: 'tls' }, 'a.example.com');
      expect(r.kind).to.equal('none');
    });

    it('terminates and forwards the bytes of a tls listener that has TLSRoutes (Terminate mode)', () => {
      const raw: Listener = { ...tls, id: 'binding/raw/l', bindingId: 'binding/raw' };
      const t = compileRouteTable(hostGraph([], { listeners: [raw], streamRoutes: [sr('raw-route', raw.id, ['raw.example.com'])] }));
      const at = (sni: string) => routeStream(t, { bindingId: 'binding/raw', publicPort: 443, publicProtocol: 'tls' }, sni);
      const hit = at('raw.example.com');
      expect(hit.kind === 'terminate-forward' ? hit.route.id : hit.kind).to.equal('raw-route');
      // No TLSRoute for the name: rejected ("the request MUST be rejected"), not decrypted.
      expect(at('other.example.com').kind).to.equal('none');
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

    describe('Terminate and Passthrough listeners on one port (TLSRouteModeMixed)', () => {
      const listener = (name: string, protocol: 'tls' | 'https', hostname: string, mode: 'terminate-in-cluster' | 'passthrough'): Listener => ({
        id: `binding/mixed/${name}`,
        bindingId: 'binding/mixed',
        name,
        port: 8883,
        protocol,
        hostname,
        tls: { mode, certificates: mode === 'passthrough' ? [] : [{ namespace: 'default', name: `${name}-cert` }] },
        source: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' },
      });
      const terminate = listener('terminate', 'tls', 'tls.example.com', 'terminate-in-cluster');
      const passthrough = listener('passthrough', 'tls', 'abc.example.com', 'passthrough');
      const web = listener('web', 'https', 'www.example.com', 'terminate-in-cluster');
      const wildPass = listener('wild-pass', 'tls', '*.example.com', 'passthrough');
      const t = compileRouteTable(
        hostGraph([], {
          listeners: [terminate, passthrough, web, wildPass],
          streamRoutes: [
            sr('terminated', terminate.id, ['tls.example.com']),
            sr('passed', passthrough.id, ['abc.example.com']),
            sr('wild-passed', wildPass.id, ['*.example.com']),
          ],
        }),
      );
      const at = (sni: string | undefined): string => {
        const r = routeStream(t, { bindingId: 'binding/mixed', publicPort: 8883, publicProtocol: 'tls' }, sni);
        if (r.kind === 'none') return 'none';
        if (r.kind === 'terminate') return `terminate as HTTPS by ${r.listeners.map((l) => l.name).join(',')}`;
        if (r.kind === 'terminate-forward') return `terminate by ${r.listeners.map((l) => l.name).join(',')}, forward to ${r.route.id}`;
        return `forward raw to ${r.route.id}`;
      };
      const cases: [string | undefined, string][] = [
        ['tls.example.com', 'terminate by terminate, forward to terminated'],
        ['abc.example.com', 'forward raw to passed'],
        ['www.example.com', 'terminate as HTTPS by web'],
        // The wildcard passthrough listener owns every other name under it: never terminated.
        ['x.example.com', 'forward raw to wild-passed'],
        // No listener's hostname fits: rejected in HTTP by the port's HTTPS listener (404 or 421).
        ['other.org', 'terminate as HTTPS by web'],
        [undefined, 'terminate as HTTPS by web'],
      ];
      for (const [sni, outcome] of cases) {
        it(`routes SNI ${sni ?? '(none)'}: ${outcome}`, () => {
          expect(at(sni)).to.equal(outcome);
        });
      }

      it('rejects a name no listener serves on a port without HTTPS listeners, whatever the other modes', () => {
        const t2 = compileRouteTable(hostGraph([], { listeners: [terminate, passthrough], streamRoutes: [sr('terminated', terminate.id, ['tls.example.com']), sr('passed', passthrough.id, ['abc.example.com'])] }));
        const r = (sni: string | undefined) => routeStream(t2, { bindingId: 'binding/mixed', publicPort: 8883, publicProtocol: 'tls' }, sni).kind;
        expect([r('other.org'), r(undefined), r('tls.example.com'), r('abc.example.com')]).to.deep.equal(['none', 'none', 'terminate-forward', 'forward']);
      });
    });
  });
});

describe('dataplane router: a virtual host compiled before', () => {
  const noPolicies = (): undefined => undefined;

  it('is taken as it was for the same virtual host, listener and binding, and compiled again under a new listener', () => {
    const graph = hostGraph([{ hostname: 'a.example.com', routes: [route('r', {})] }]);
    const compiledIn = (g: typeof graph) => [...compileRouteTable(g, noPolicies).vhostsByListener.values()][0]![0]!;
    const first = compiledIn(graph);
    expect(compiledIn({ ...graph })).to.equal(first);
    const listener = { ...graph.listeners[0]! };
    const moved = compiledIn({ ...graph, listeners: [listener] });
    expect(moved).to.not.equal(first);
    expect(moved.listener).to.equal(listener);
  });

  it('is compiled each time when one of its routes has policies (their state belongs to the data plane)', () => {
    const graph = hostGraph([{ hostname: 'a.example.com', routes: [route('r', {})] }]);
    const withPolicies = () => ({ route: graph.virtualHosts[0]!.routes[0]! });
    const a = [...compileRouteTable(graph, withPolicies).vhostsByListener.values()][0]![0]!;
    const b = [...compileRouteTable(graph, withPolicies).vhostsByListener.values()][0]![0]!;
    expect(b).to.not.equal(a);
    expect(b.routes[0]!.policies).to.not.equal(undefined);
  });
});
