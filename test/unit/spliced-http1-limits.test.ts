import { expect } from 'chai';
import { DEFAULT_SPLICED_HTTP1_LIMITS, splicedLimits } from '../../src/dataplane/spliced-http1.js';
import type { SplicedHttp1Limits } from '../../src/dataplane/spliced-http1.js';
import { formatHttp1Limits, HEADER_HTTP1_LIMITS, parseHttp1Limits } from '../../src/wire/index.js';

describe('wire: the tuna-http1-limits field of a spliced stream (docs/protocol.md §4.5)', () => {
  const cases: [string, string | string[] | undefined, ReturnType<typeof parseHttp1Limits>][] = [
    ['three decimals', '4096,300,5000', { maxHeaderBytes: 4096, headersTimeoutMs: 300, idleTimeoutMs: 5000 }],
    ['spaces around fields', ' 4096 , 300 ,5000', { maxHeaderBytes: 4096, headersTimeoutMs: 300, idleTimeoutMs: 5000 }],
    ['fields past the third (later versions)', '4096,300,5000,7,x', { maxHeaderBytes: 4096, headersTimeoutMs: 300, idleTimeoutMs: 5000 }],
    ['absent', undefined, undefined],
    ['two fields', '4096,300', undefined],
    ['a sign', '+4096,300,5000', undefined],
    ['a fraction', '4096.5,300,5000', undefined],
    ['an exponent', '4e3,300,5000', undefined],
    ['an empty field', '4096,,5000', undefined],
    ['a repeated field (an array)', ['4096,300,5000', '1,2,3'], undefined],
  ];
  for (const [title, value, expected] of cases) {
    it(`reads ${title}`, () => {
      expect(parseHttp1Limits(value)).to.deep.equal(expected);
    });
  }

  it('writes what it reads, truncating to integers', () => {
    const value = formatHttp1Limits({ maxHeaderBytes: 16384, headersTimeoutMs: 60_000.7, idleTimeoutMs: 75_000 });
    expect(value).to.equal('16384,60000,75000');
    expect(parseHttp1Limits(value)).to.deep.equal({ maxHeaderBytes: 16384, headersTimeoutMs: 60_000, idleTimeoutMs: 75_000 });
  });
});

describe('dataplane: the limits a spliced connection is parsed with', () => {
  const field = (value: string): Record<string, string> => ({ [HEADER_HTTP1_LIMITS]: value });

  it('takes the edge values within the bounds', () => {
    expect(splicedLimits(field('4096,300,5000'))).to.deep.equal({ maxHeaderBytes: 4096, headersTimeoutMs: 300, requestTimeoutMs: 0, keepAliveTimeoutMs: 5000 });
  });

  it('clamps values past the bounds: heads 1 KiB to 64 KiB, deadlines 100 ms to 300 s (0 would disable them)', () => {
    expect(splicedLimits(field(`${10 << 20},999999999,999999999`))).to.deep.equal({ maxHeaderBytes: 64 << 10, headersTimeoutMs: 300_000, requestTimeoutMs: 0, keepAliveTimeoutMs: 300_000 });
    expect(splicedLimits(field('0,0,0'))).to.deep.equal({ maxHeaderBytes: 1 << 10, headersTimeoutMs: 100, requestTimeoutMs: 0, keepAliveTimeoutMs: 100 });
  });

  it('keeps the defaults it is given when the field is absent or malformed', () => {
    const own: SplicedHttp1Limits = { maxHeaderBytes: 8192, headersTimeoutMs: 10_000, requestTimeoutMs: 20_000, keepAliveTimeoutMs: 5000 };
    expect(splicedLimits({})).to.equal(DEFAULT_SPLICED_HTTP1_LIMITS);
    expect(splicedLimits(field('x'), own)).to.equal(own);
  });

  it("keeps the head deadline within the agent's own whole-request deadline (Node refuses a longer one)", () => {
    const own: SplicedHttp1Limits = { ...DEFAULT_SPLICED_HTTP1_LIMITS, requestTimeoutMs: 20_000 };
    expect(splicedLimits(field('4096,60000,5000'), own).headersTimeoutMs).to.equal(20_000);
  });
});
