/**
 * The regular expression gate for Gateway API matches: RE2-compatible, no catastrophic backtracking.
 */
import { expect } from 'chai';
import { MAX_PATTERN_LENGTH, checkRegex } from '../../src/translate/gateway/regex-safety.js';

describe('Gateway API regular expression safety', () => {
  const accepted = ['/items/[0-9]+', '^/api/v[12]/.*$', '/(foo|bar)/baz', '/a{1,3}b', '(?:ab)+c', '[(+*]+', '/x\\d{2,}', '(?<id>[a-z]+)/x', '/(a+b)'];
  for (const pattern of accepted) {
    it(`accepts ${pattern}`, () => {
      expect(checkRegex(pattern)).to.deep.equal({ ok: true });
    });
  }

  const refused: [string, RegExp][] = [
    ['(a+)+', /nests unbounded quantifiers/],
    ['/(x|y*)*z', /nests unbounded quantifiers/],
    ['((ab)*c)+', /nests unbounded quantifiers/],
    ['(a*){2,}', /nests unbounded quantifiers/],
    ['(\\w+)\\1', /backreference/],
    ['(?<n>a)\\k<n>', /backreference/],
    ['(?=admin).*', /lookaround/],
    ['(?!x)y', /lookaround/],
    ['(?<=a)b', /lookaround/],
    ['(?<!a)b', /lookaround/],
    ['/[unclosed', /not a valid regular expression/],
    ['(?i)abc', /not a valid regular expression|group syntax/],
    ['a'.repeat(MAX_PATTERN_LENGTH + 1), /longer than/],
  ];
  for (const [pattern, why] of refused) {
    it(`refuses ${pattern.length > 40 ? `a ${pattern.length}-character pattern` : pattern}`, () => {
      const verdict = checkRegex(pattern);
      expect(verdict.ok).to.equal(false);
      if (!verdict.ok) expect(verdict.message).to.match(why);
    });
  }

  it('does not mistake a quantifier inside a character class for a nested one', () => {
    expect(checkRegex('([+*]x)+')).to.deep.equal({ ok: true });
  });

  it('allows a bounded group repetition around an unbounded-free group', () => {
    expect(checkRegex('(ab?){3}')).to.deep.equal({ ok: true });
  });
});
