import { expect } from 'chai';
import { EdgeConfigError, decodeEdgeConfig } from '../../src/edge/index.js';

/** The port pool handed to tenants must not hold the edge's own ports. */
describe('edge config: store.portPool and the edge\'s own listeners', () => {
  const config = (pool: { first: number; last: number }) => ({
    listen: { tunnel: { port: 8443 }, http: { port: 18080 }, https: { port: 443 }, metrics: { host: '127.0.0.1', port: 9100 } },
    store: { url: ':memory:', baseDomain: 'tuna.test', portPool: pool },
  });

  for (const [field, pool] of [
    ['listen.http.port 18080', { first: 18000, last: 18099 }],
    ['listen.tunnel.port 8443', { first: 8000, last: 8999 }],
    ['listen.https.port 443', { first: 1, last: 1000 }],
    ['listen.metrics.port 9100', { first: 9000, last: 9199 }],
  ] as const) {
    it(`refuses a pool that holds ${field}, naming store.portPool`, () => {
      expect(() => decodeEdgeConfig(config(pool))).to.throw(EdgeConfigError, new RegExp(`store\\.portPool: .*${field.replace(/\./g, '\\.')}`));
    });
  }

  it('accepts a pool clear of every listener', () => {
    expect(decodeEdgeConfig(config({ first: 20000, last: 20099 })).store?.portPool).to.deep.equal({ first: 20000, last: 20099 });
  });
});
