/**
 * Listener/route hostname intersection and the hostname rules of the Gateway API.
 */
import { expect } from 'chai';
import { intersectHostnames, isAcceptableHostname, wildcardCovers } from '../../src/translate/gateway/hostnames.js';

describe('Gateway API hostname intersection', () => {
  const cases: [string | undefined, string[], string[]][] = [
    [undefined, [], ['*']],
    [undefined, ['a.example.com'], ['a.example.com']],
    ['a.example.com', [], ['a.example.com']],
    ['a.example.com', ['a.example.com', 'b.example.com'], ['a.example.com']],
    ['*.example.com', ['a.example.com', 'x.y.example.com', 'example.com', 'a.example.org'], ['a.example.com', 'x.y.example.com']],
    ['a.example.com', ['*.example.com'], ['a.example.com']],
    ['*.example.com', ['*.example.com'], ['*.example.com']],
    ['*.example.com', ['*.a.example.com'], ['*.a.example.com']],
    ['*.a.example.com', ['*.example.com'], ['*.a.example.com']],
    ['*.example.com', ['*.example.org'], []],
    ['example.com', ['*.example.com'], []],
  ];
  for (const [listener, route, want] of cases) {
    it(`intersects listener ${listener ?? '(none)'} with route [${route.join(', ')}] to [${want.join(', ')}]`, () => {
      expect(intersectHostnames(listener, route)).to.deep.equal(want);
    });
  }

  it('lets a wildcard stand for one or more labels but not for none', () => {
    expect(wildcardCovers('*.example.com', 'a.b.example.com')).to.equal(true);
    expect(wildcardCovers('*.example.com', 'example.com')).to.equal(false);
    expect(wildcardCovers('*.example.com', 'badexample.com')).to.equal(false);
  });

  it('refuses IP literals, upper case and bare wildcards as hostnames', () => {
    for (const bad of ['10.0.0.1', '::1', 'Example.com', '*', 'a..b', '-a.com']) expect(isAcceptableHostname(bad), bad).to.equal(false);
    for (const good of ['a.example.com', '*.example.com', 'localhost', 'x1.io']) expect(isAcceptableHostname(good), good).to.equal(true);
  });
});
