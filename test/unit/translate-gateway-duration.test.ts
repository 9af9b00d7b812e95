/**
 * GEP-2257 durations, as HTTPRoute timeouts and retry backoff use them.
 */
import { expect } from 'chai';
import { parseDuration } from '../../src/translate/gateway/duration.js';

describe('Gateway API durations (GEP-2257)', () => {
  const valid: [string, number][] = [
    ['0s', 0],
    ['500ms', 500],
    ['1s', 1000],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['2h45m10s5ms', 9_910_005],
    ['99999ms', 99_999],
  ];
  for (const [text, ms] of valid) {
    it(`parses ${text} as ${ms} ms`, () => {
      expect(parseDuration(text)).to.equal(ms);
    });
  }

  const invalid = ['', '1', '1.5s', '-1s', '1us', '1d', '100000s', '1h1m1s1ms1h', ' 1s', '1S'];
  for (const text of invalid) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      expect(parseDuration(text)).to.equal(undefined);
    });
  }
});
