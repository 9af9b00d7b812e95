import { expect } from 'chai';
import { normalizeRequestPath, removeDotSegments } from '../../src/dataplane/request-path.js';
import type { NormalizedPath } from '../../src/dataplane/request-path.js';

describe('dataplane request path normalisation', () => {
  const ok = (path: string): NormalizedPath => ({ kind: 'ok', path });
  const redirect = (path: string): NormalizedPath => ({ kind: 'redirect', path });
  const cases: [string, NormalizedPath][] = [
    ['/', ok('/')],
    ['/public/index.html', ok('/public/index.html')],
    // RFC 3986 §5.2.4 dot segments
    ['/public/../admin', ok('/admin')],
    ['/public/./admin', ok('/public/admin')],
    ['/a/b/c/./../../g', ok('/a/g')],
    ['/..', ok('/')],
    ['/../../admin', ok('/admin')],
    ['/a/b/..', ok('/a/')],
    ['/a/b/.', ok('/a/b/')],
    ['/a/..b/c.', ok('/a/..b/c.')],
    ['/a/.../b', ok('/a/.../b')],
    // percent-encoded unreserved characters are decoded, before dot segments are looked at
    ['/public/%2e%2e/admin', ok('/admin')],
    ['/public/%2E%2E/admin', ok('/admin')],
    ['/public/.%2e/admin', ok('/admin')],
    ['/%7Euser/%41%62%63', ok('/~user/Abc')],
    ['/a%2Db_c', ok('/a-b_c')],
    // other percent-encodings stay, with uppercase hex (RFC 3986 §6.2.2.1)
    ['/a%20b', ok('/a%20b')],
    ['/caf%c3%a9', ok('/caf%C3%A9')],
    ['/%3f%23', ok('/%3F%23')],
    ['/%252e%252e/admin', ok('/%252e%252e/admin')],
    // merged slashes
    ['//public///admin//', ok('/public/admin/')],
    ['/public//../admin', ok('/public/admin')],
    ['/a//..', ok('/a/')],
    // encoded slashes and backslashes: redirect to the unescaped, normalised path
    ['/a%2Fb', redirect('/a/b')],
    ['/a%2fb', redirect('/a/b')],
    ['/public%2F..%2Fadmin', redirect('/admin')],
    ['/public%5C..%5Cadmin', redirect('/admin')],
    ['/public\\..\\admin', redirect('/admin')],
  ];
  for (const [input, want] of cases) {
    it(`normalises ${JSON.stringify(input)} to ${want.kind} ${'path' in want ? want.path : ''}`, () => {
      expect(normalizeRequestPath(input)).to.deep.equal(want);
    });
  }

  for (const bad of ['/a%', '/a%2', '/a%zz', '/a%2g/b', '/%%41']) {
    it(`refuses the invalid percent-encoding in ${JSON.stringify(bad)}, naming the offset`, () => {
      const r = normalizeRequestPath(bad);
      expect(r.kind).to.equal('invalid');
      expect(r.kind === 'invalid' ? r.reason : '').to.match(/invalid percent-encoding at offset \d+/);
    });
  }

  it('refuses a path that does not start with /', () => {
    expect(normalizeRequestPath('a/b').kind).to.equal('invalid');
  });

  it('is idempotent: a normal path normalises to itself', () => {
    for (const [input] of cases) {
      const once = normalizeRequestPath(input);
      if (once.kind === 'invalid') continue;
      expect(normalizeRequestPath(once.path)).to.deep.equal(ok(once.path));
    }
  });

  it('follows the examples of RFC 3986 §5.4.1 for dot segments', () => {
    // base http://a/b/c/d;p?q: "../g" → /b/g, "../.." → /, "./" → /b/c/, "g/./h" → /b/c/g/h
    expect(removeDotSegments('/b/c/../g')).to.equal('/b/g');
    expect(removeDotSegments('/b/c/../..')).to.equal('/');
    expect(removeDotSegments('/b/c/./')).to.equal('/b/c/');
    expect(removeDotSegments('/b/c/g/./h')).to.equal('/b/c/g/h');
    expect(removeDotSegments('/b/c/g;x=1/../y')).to.equal('/b/c/y');
  });
});
