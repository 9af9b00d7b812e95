import { expect } from 'chai';
import { EdgeConfigError, decodeEdgeConfig } from '../../src/edge/index.js';

/** `workers` in the edge config file (`tuna edge --workers N` beside it). */
describe('edge config: workers', () => {
  const listen = { tunnel: { port: 0 }, http: { port: 0 }, https: { port: 0 } };
  const acme = { directoryUrl: 'https://acme.test/directory', accountKeyFile: 'a.pem' };
  const store = { url: ':memory:', baseDomain: 'tuna.test' };

  for (const workers of [0, -1, 1.5, 257, '2']) {
    it(`refuses workers ${JSON.stringify(workers)}, naming the field`, () => {
      expect(() => decodeEdgeConfig({ listen, workers })).to.throw(EdgeConfigError, /workers: /);
    });
  }

  it('accepts a whole number of workers from 1 to 256', () => {
    for (const workers of [1, 2, 256]) expect(decodeEdgeConfig({ listen, workers }).workers).to.equal(workers);
  });

  it('refuses several workers beside an acme section (ACME issues in one process), and takes one', () => {
    expect(() => decodeEdgeConfig({ listen, store, acme, workers: 2 })).to.throw(EdgeConfigError, /workers: an edge with an `acme` section runs one worker/);
    expect(decodeEdgeConfig({ listen, store, acme, workers: 1 }).workers).to.equal(1);
  });
});
