/**
 * Filters on one backend of a route (Gateway API HTTPBackendRef.filters): they run if and only if
 * the request is forwarded to that backend, after the route's own filters, per attempt.
 */
import { expect } from 'chai';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { BackendFilter, HttpRoute } from '../../src/model/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { seededRandom } from '../support/backend-random.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';

const setRequest = (name: string, value: string): BackendFilter => ({ type: 'RequestHeaderModifier', set: [{ name, value }], add: [], remove: [] });
const setResponse = (name: string, value: string): BackendFilter => ({ type: 'ResponseHeaderModifier', set: [{ name, value }], add: [], remove: [] });

describe('data plane: filters of one backend', () => {
  let backends: TestBackend[] = [];
  let harness: TunnelHarness | undefined;
  let plane: DataPlane | undefined;

  async function serve(route: HttpRoute, named: Record<string, TestBackend>): Promise<TunnelHarness> {
    const endpoints = new StaticEndpointResolver();
    for (const [name, b] of Object.entries(named)) endpoints.set('default', name, 'http', [{ address: '127.0.0.1', port: b.port }]);
    plane = new DataPlane({ endpoints, random: seededRandom(11) });
    plane.update(hostGraph([{ hostname: 'app.test', routes: [route] }]));
    harness = await startTunnelHarness(plane);
    return harness;
  }

  async function echo(name: string): Promise<TestBackend> {
    const b = await startHttpBackend(name);
    backends.push(b);
    return b;
  }

  afterEach(async () => {
    await harness?.close();
    plane?.close();
    await Promise.all(backends.map((b) => b.close()));
    backends = [];
    harness = undefined;
  });

  it('sets the request headers of the backend each request went to (conformance HTTPRouteRequestHeaderModifierBackendWeights)', async () => {
    const v1 = await echo('v1');
    const v2 = await echo('v2');
    const route = httpRoute('w', [
      serviceBackend('v1', { weight: 10, filters: [setRequest('Backend', 'v1')] }),
      serviceBackend('v2', { weight: 10, filters: [setRequest('Backend', 'v2')] }),
    ]);
    const h = await serve(route, { v1, v2 });
    const seen: Record<string, number> = { v1: 0, v2: 0 };
    for (let i = 0; i < 100; i++) {
      const reply = JSON.parse((await h.request({ ':path': '/', backend: 'client' })).body) as EchoReply;
      expect(reply.headers.backend).to.equal(reply.backend);
      seen[reply.backend]!++;
    }
    expect(seen.v1).to.be.greaterThan(0);
    expect(seen.v2).to.be.greaterThan(0);
  });

  it("applies the route's request filters first, then the backend's (the backend's wins on the same header)", async () => {
    const h = await serve(
      httpRoute('o', [serviceBackend('echo', { filters: [{ type: 'RequestHeaderModifier', set: [{ name: 'X-Who', value: 'backend' }], add: [{ name: 'X-List', value: 'backend' }], remove: ['x-rule-only'] }] })], {
        filters: [{ type: 'RequestHeaderModifier', set: [{ name: 'X-Who', value: 'rule' }, { name: 'X-Rule-Only', value: 'r' }], add: [{ name: 'X-List', value: 'rule' }], remove: [] }],
      }),
      { echo: await echo('echo') },
    );
    const seen = (JSON.parse((await h.request({ ':path': '/', 'x-list': 'client' })).body) as EchoReply).headers;
    expect(seen['x-who']).to.equal('backend');
    expect(seen['x-list']).to.equal('client,rule,backend');
    expect(seen['x-rule-only']).to.equal(undefined);
  });

  it("modifies the response of that backend only, after the route's response filters", async () => {
    const a = await echo('a');
    const b = await echo('b');
    const route = httpRoute('r', [serviceBackend('a', { filters: [setResponse('X-Layer', 'backend-a'), setResponse('X-Only-A', 'yes')] }), serviceBackend('b')], {
      filters: [{ type: 'ResponseHeaderModifier', set: [{ name: 'X-Layer', value: 'rule' }], add: [], remove: [] }],
    });
    const h = await serve(route, { a, b });
    const layers = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const res = await h.request({ ':path': '/' });
      const from = (JSON.parse(res.body) as EchoReply).backend;
      expect([from, res.headers['x-layer'], res.headers['x-only-a']]).to.deep.equal(from === 'a' ? ['a', 'backend-a', 'yes'] : ['b', 'rule', undefined]);
      layers.add(from);
    }
    expect([...layers].sort()).to.deep.equal(['a', 'b']);
  });

  it('does not carry one backend’s headers into a retry that goes to another backend', async () => {
    const down = await startHttpBackend('down', (_req, res) => {
      res.statusCode = 503;
      res.end('down');
    });
    backends.push(down);
    const up = await echo('up');
    const route = httpRoute('retry', [serviceBackend('down', { filters: [setRequest('X-For-Down', 'yes')] }), serviceBackend('up')], {
      extra: { retry: { attempts: 5, codes: [503], backoffMs: 1 } },
    });
    const h = await serve(route, { down, up });
    for (let i = 0; i < 20; i++) {
      const reply = JSON.parse((await h.request({ ':path': '/' })).body) as EchoReply;
      expect([reply.backend, reply.headers['x-for-down']]).to.deep.equal(['up', undefined]);
    }
    expect(down.requests.length).to.be.greaterThan(0);
    expect(down.requests.every((r) => r.headers['x-for-down'] === 'yes')).to.equal(true);
  });

  it('sends mirrors the request without the filters of the chosen backend', async () => {
    const main = await echo('main');
    const shadow = await echo('shadow');
    const route = httpRoute('m', [serviceBackend('main', { filters: [setRequest('X-Main', 'yes')] })], {
      filters: [{ type: 'RequestMirror', backend: serviceBackend('shadow'), percent: 100 }],
    });
    const h = await serve(route, { main, shadow });
    expect((JSON.parse((await h.request({ ':path': '/' })).body) as EchoReply).headers['x-main']).to.equal('yes');
    for (let i = 0; i < 50 && shadow.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(shadow.requests.map((r) => r.headers['x-main'])).to.deep.equal([undefined]);
  });
});
