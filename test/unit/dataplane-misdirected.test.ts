import { expect } from 'chai';
import { compileRouteTable, routeHttp } from '../../src/dataplane/index.js';
import type { EntryPoint } from '../../src/dataplane/index.js';
import { isMisdirected, listenerForName } from '../../src/dataplane/router.js';
import type { Listener, RouteGraph } from '../../src/model/index.js';
import { canonicalize, emptyGraph } from '../../src/model/index.js';
import { httpRoute, serviceBackend } from '../support/backend-graph.js';

const BINDING = 'binding/address/gateway-conformance-infra/same-namespace-with-https-listener';

function listener(name: string, hostname?: string): Listener {
  return {
    id: `${BINDING}/listener/${name}`,
    bindingId: BINDING,
    name,
    port: 443,
    protocol: 'https',
    ...(hostname === undefined ? {} : { hostname }),
    tls: { mode: 'terminate-in-cluster', certificates: [{ namespace: 'default', name: 'cert' }] },
    source: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name: 'gw' },
  };
}

/**
 * The Gateway `same-namespace-with-https-listener` of the conformance suite (four HTTPS listeners
 * on 443: a catch-all, an exact name, a wildcard and an exact name under that wildcard) and the
 * routes of HTTPRouteHTTPSListenerDetectMisdirectedRequests, one per listener.
 */
function conformanceGraph(): RouteGraph {
  const graph = emptyGraph();
  graph.bindings.push({ id: BINDING, kind: 'address', hostnames: [], source: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'default', name: 'gw' } });
  const listeners = [
    listener('https'),
    listener('https-with-hostname', 'second-example.org'),
    listener('https-with-wildcard-hostname', '*.wildcard.org'),
    listener('https-with-hostname-matching-wildcard', 'fourth-example.wildcard.org'),
  ];
  // A plain HTTP listener on another port plays no part in the choice.
  graph.listeners.push(...listeners, { id: `${BINDING}/listener/http`, bindingId: BINDING, name: 'http', port: 80, protocol: 'http', source: listeners[0]!.source });
  const vhosts: [Listener, string, string][] = [
    [listeners[0]!, 'example.org', 'v1'],
    [listeners[1]!, 'second-example.org', 'v2'],
    [listeners[2]!, '*.wildcard.org', 'v3'],
    [listeners[3]!, 'fourth-example.wildcard.org', 'v4'],
  ];
  for (const [l, hostname, id] of vhosts)
    graph.virtualHosts.push({
      id: `${l.id}/vhost/${hostname}`,
      listenerId: l.id,
      hostname,
      routes: [httpRoute(id, [serviceBackend(id)], { match: { path: { type: 'Prefix', value: '/detect-misdirected-requests' } } })],
    });
  return canonicalize(graph);
}

describe('dataplane router: misdirected requests (SNI and Host select different listeners)', () => {
  const table = compileRouteTable(conformanceGraph());
  const entry: EntryPoint = { bindingId: BINDING, publicPort: 443, publicProtocol: 'https' };
  const facts = { method: 'GET', path: '/detect-misdirected-requests', headers: {}, query: new URLSearchParams() };

  // The table of the conformance test HTTPRouteHTTPSListenerDetectMisdirectedRequests (v1.6.3):
  // a route id is a 200 from that backend, `misdirected` a 421, `no-host` a 404.
  const cases: [sni: string, host: string, outcome: string][] = [
    ['example.org', 'example.org', 'test/v1'],
    ['example.org', 'second-example.org', 'misdirected'],
    ['example.org', 'unknown-example.org', 'no-host'],
    ['second-example.org', 'second-example.org', 'test/v2'],
    ['second-example.org', 'example.org', 'misdirected'],
    ['second-example.org', 'unknown-example.org', 'misdirected'],
    ['third-example.wildcard.org', 'third-example.wildcard.org', 'test/v3'],
    ['third-example.wildcard.org', 'fith-example.wildcard.org', 'test/v3'],
    ['third-example.wildcard.org', 'fourth-example.wildcard.org', 'misdirected'],
    ['third-example.wildcard.org', 'second-example.org', 'misdirected'],
    ['third-example.wildcard.org', 'unknown-example.org', 'misdirected'],
    ['fourth-example.wildcard.org', 'fourth-example.wildcard.org', 'test/v4'],
    ['fourth-example.wildcard.org', 'fith-example.wildcard.org', 'misdirected'],
    ['unknown-example.org', 'example.org', 'test/v1'],
    ['unknown-example.org', 'unknown-example.org', 'no-host'],
  ];
  for (const [sni, host, outcome] of cases) {
    it(`SNI ${sni}, Host ${host} → ${outcome}`, () => {
      const r = routeHttp(table, { ...entry, sni }, host, facts);
      expect(r.kind === 'route' ? r.route.id : r.kind).to.equal(outcome);
    });
  }

  it('does not check a connection whose TLS was not terminated here (no SNI known)', () => {
    const r = routeHttp(table, entry, 'second-example.org', facts);
    expect(r.kind === 'route' ? r.route.id : r.kind).to.equal('test/v2');
  });

  it('reports the SNI of the connection in a misdirected result', () => {
    expect(routeHttp(table, { ...entry, sni: 'example.org' }, 'second-example.org', facts)).to.deep.equal({ kind: 'misdirected', sni: 'example.org' });
  });

  describe('listenerForName (Gateway API listener hostname precedence)', () => {
    const ls = table.graph.listeners.filter((l) => l.protocol === 'https');
    const named: [string, string | undefined][] = [
      ['second-example.org', 'https-with-hostname'],
      ['fourth-example.wildcard.org', 'https-with-hostname-matching-wildcard'],
      ['a.b.wildcard.org', 'https-with-wildcard-hostname'],
      ['wildcard.org', 'https'],
      ['anything.test', 'https'],
    ];
    for (const [name, listenerName] of named)
      it(`${name} → listener ${listenerName}`, () => {
        expect(listenerForName(ls, name)?.name).to.equal(listenerName);
      });

    it('finds no listener when none has the name and none catches all', () => {
      expect(listenerForName(ls.filter((l) => l.hostname !== undefined), 'unknown-example.org')).to.equal(undefined);
    });
  });

  describe('isMisdirected without a catch-all listener', () => {
    const ls = [listener('a', 'a.test'), listener('b', 'b.test')];
    it('is misdirected when the Host names another listener', () => expect(isMisdirected(ls, 'a.test', 'b.test')).to.equal(true));
    it('is not misdirected when no listener serves the Host (that is a 404)', () => expect(isMisdirected(ls, 'a.test', 'c.test')).to.equal(false));
    it('is misdirected when the SNI matched no listener but the Host does', () => expect(isMisdirected(ls, 'c.test', 'a.test')).to.equal(true));
    it('is not misdirected when SNI and Host name the same listener', () => expect(isMisdirected(ls, 'a.test', 'a.test')).to.equal(false));
  });
});
