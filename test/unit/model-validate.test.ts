import { expect } from 'chai';
import { isValidHostPattern, problemSources, validate } from '../../src/model/index.js';
import type { BackendFilter, ClientValidation, RouteGraph } from '../../src/model/index.js';
import { graphWith, route, serviceBackend } from '../support/graph-builders.js';

const headerSet: BackendFilter = { type: 'RequestHeaderModifier', set: [{ name: 'x-a', value: 'b' }], add: [], remove: [] };
const ok = (): RouteGraph => graphWith('a.example.com', [route('r1', { type: 'Prefix', value: '/' })]);

const PEM = '-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n';

/** httpsWithValidation makes the graph's listener a terminating HTTPS one with the given client validation. */
function httpsWithValidation(g: RouteGraph, clientValidation: ClientValidation): void {
  g.listeners[0]!.protocol = 'https';
  g.listeners[0]!.tls = { mode: 'terminate-in-cluster', certificates: [{ namespace: 'default', name: 'cert' }], clientValidation };
}

describe('validate', () => {
  it('names the object each problem came from, and none for a node without a source (problemSources)', () => {
    const g = ok();
    g.virtualHosts[0]!.routes.push(route('r1', { type: 'Exact', value: '/x' }));
    g.virtualHosts[0]!.listenerId = 'nope';
    const problems = validate(g);
    expect(problems).to.have.length(2);
    const sources = problemSources(g, problems);
    expect(sources.map((s) => s?.name)).to.deep.equal(problems.map((p) => (p.startsWith('duplicate id r1') ? 'web' : undefined)));
    expect(sources.filter((s) => s !== undefined)).to.have.length(1);
  });

  it('accepts a well-formed graph', () => {
    expect(validate(ok())).to.deep.equal([]);
  });

  it('accepts client validation on a terminating HTTPS listener', () => {
    const g = ok();
    httpsWithValidation(g, { caPem: PEM, mode: 'AllowInsecureFallback' });
    expect(validate(g)).to.deep.equal([]);
  });

  it('accepts filters on an HTTP route backend', () => {
    const g = ok();
    g.virtualHosts[0]!.routes[0]!.backends = [{ ...serviceBackend('a'), filters: [headerSet] }];
    expect(validate(g)).to.deep.equal([]);
  });

  const breakers: [string, (g: RouteGraph) => void, RegExp][] = [
    ['a duplicate id', (g) => g.virtualHosts[0]!.routes.push(route('r1', { type: 'Exact', value: '/x' })), /duplicate id r1/],
    ['a listener of an unknown binding', (g) => (g.listeners[0]!.bindingId = 'binding/host/nope'), /unknown binding/],
    ['a virtual host of an unknown listener', (g) => (g.virtualHosts[0]!.listenerId = 'nope'), /unknown listener/],
    ['a port out of range', (g) => (g.listeners[0]!.port = 70000), /invalid port 70000/],
    ['a negative weight', (g) => (g.virtualHosts[0]!.routes[0]!.backends = [{ ...serviceBackend('a'), weight: -1 }]), /invalid weight/],
    ['a path without a leading slash', (g) => (g.virtualHosts[0]!.routes[0]!.match.path = { type: 'Prefix', value: 'x' }), /does not start with/],
    ['a route with neither backend nor redirect', (g) => (g.virtualHosts[0]!.routes[0]!.backends = []), /no backend/],
    ['an IP-literal hostname', (g) => (g.bindings[0]!.hostnames = ['10.0.0.1']), /invalid hostname 10.0.0.1/],
    ['a host binding with no hostname', (g) => (g.bindings[0]!.hostnames = []), /without hostname/],
    ['an https listener without tls', (g) => (g.listeners[0]!.protocol = 'https'), /without tls/],
    [
      'client validation on a listener that does not terminate HTTPS',
      (g) => (g.listeners[0]!.tls = { mode: 'edge', certificates: [], clientValidation: { caPem: PEM, mode: 'AllowValidOnly' } }),
      /client validation on a listener that does not terminate HTTPS/,
    ],
    ['client validation without a CA certificate', (g) => httpsWithValidation(g, { caPem: 'not pem', mode: 'AllowValidOnly' }), /without a PEM CA certificate/],
    ['an unknown client validation mode', (g) => httpsWithValidation(g, { caPem: PEM, mode: 'Sometimes' as 'AllowValidOnly' }), /invalid client validation mode Sometimes/],
    ['an empty backend filter list', (g) => (g.virtualHosts[0]!.routes[0]!.backends = [{ ...serviceBackend('a'), filters: [] }]), /empty backend filter list/],
    [
      'a mirror backend with filters',
      (g) => g.virtualHosts[0]!.routes[0]!.filters.push({ type: 'RequestMirror', percent: 100, backend: { ...serviceBackend('m'), filters: [headerSet] } }),
      /mirror backend with filters/,
    ],
    [
      'a stream route backend with filters',
      (g) => g.streamRoutes.push({ id: 's1', listenerId: g.listeners[0]!.id, source: g.listeners[0]!.source, hostnames: [], backends: [{ ...serviceBackend('t'), filters: [headerSet] }] }),
      /stream route backend with filters/,
    ],
    [
      'two listeners of one binding on one port with incompatible protocols',
      (g) => g.listeners.push({ ...g.listeners[0]!, id: `${g.listeners[0]!.id}2`, protocol: 'tcp' }),
      /already used by a http listener/,
    ],
  ];
  for (const [what, breakIt, message] of breakers) {
    it(`reports ${what}`, () => {
      const g = ok();
      breakIt(g);
      const errors = validate(g);
      expect(errors.join('\n')).to.match(message);
    });
  }
});

describe('isValidHostPattern', () => {
  const cases: [string, boolean][] = [
    ['example.com', true],
    ['a-b.example.com', true],
    ['*.example.com', true],
    ['*', false],
    ['a.*.example.com', false],
    ['Example.com', false],
    ['-a.example.com', false],
    ['192.168.0.1', false],
    ['[::1]', false],
    ['', false],
    [`${'a'.repeat(64)}.com`, false],
  ];
  for (const [host, valid] of cases) {
    it(`${valid ? 'accepts' : 'refuses'} ${JSON.stringify(host)}`, () => {
      expect(isValidHostPattern(host)).to.equal(valid);
    });
  }
});

describe('validate of nodes it has checked before', () => {
  it('still reports a duplicate id and a broken link among nodes that passed their own checks in an earlier graph', () => {
    const g = graphWith('a.example.com', [route('r1', { type: 'Exact', value: '/x' })]);
    expect(validate(g)).to.deep.equal([]);
    expect(validate({ ...g, bindings: [g.bindings[0]!, g.bindings[0]!] })).to.deep.equal([`duplicate id ${g.bindings[0]!.id}`]);
    expect(validate({ ...g, listeners: [] })).to.deep.equal([`${g.virtualHosts[0]!.id}: unknown listener ${g.listeners[0]!.id}`]);
  });

  it('checks a new node of a graph whose other nodes passed before', () => {
    const g = graphWith('a.example.com', [route('r1', { type: 'Exact', value: '/x' })]);
    expect(validate(g)).to.deep.equal([]);
    const bad = { ...g.virtualHosts[0]!, id: `${g.virtualHosts[0]!.id}-2`, hostname: 'not a host', routes: [route('r2', { type: 'Exact', value: 'no-slash' })] };
    expect(validate({ ...g, virtualHosts: [...g.virtualHosts, bad] })).to.deep.equal([`${bad.id}: invalid hostname not a host`, 'r2: path no-slash does not start with /']);
  });
});
