import { expect } from 'chai';
import { spliceableAuthority } from '../../src/edge/fronts/http1-splice.js';
import { parseFeatures, splicedRequestId } from '../../src/wire/index.js';

describe('edge: which first request heads a connection may be spliced on (docs/protocol.md §4.5)', () => {
  const cases: [string, string, string | undefined][] = [
    ['an origin-form HTTP/1.1 request with one Host', 'GET /a?b=1 HTTP/1.1\r\nHost: app.test\r\nAccept: */*', 'app.test'],
    ['a Host with a port, trimmed', 'POST / HTTP/1.1\r\nhost:   app.test:8080  \r\nContent-Length: 3', 'app.test:8080'],
    ['HTTP/1.0 (per request: no keep-alive by default)', 'GET / HTTP/1.0\r\nHost: app.test', undefined],
    ['an absolute-form target (the edge answers 400 per request)', 'GET http://app.test/ HTTP/1.1\r\nHost: app.test', undefined],
    ['OPTIONS *', 'OPTIONS * HTTP/1.1\r\nHost: app.test', undefined],
    ['two Host lines (400 per request)', 'GET / HTTP/1.1\r\nHost: app.test\r\nhost: other.test', undefined],
    ['no Host', 'GET / HTTP/1.1\r\nAccept: */*', undefined],
    ['an empty Host', 'GET / HTTP/1.1\r\nHost: ', undefined],
    ['an Upgrade (a WebSocket goes the extended CONNECT way)', 'GET /ws HTTP/1.1\r\nHost: app.test\r\nUpgrade: websocket\r\nConnection: Upgrade', undefined],
    ['an obs-folded field line', 'GET / HTTP/1.1\r\nHost: app.test\r\nX-A: one\r\n two', undefined],
    ['a bare LF inside a field line', 'GET / HTTP/1.1\r\nHost: app.test\nX-Evil: 1', undefined],
    ['a field name with a space before the colon', 'GET / HTTP/1.1\r\nHost : app.test', undefined],
    ['a malformed method', 'G(T / HTTP/1.1\r\nHost: app.test', undefined],
  ];
  for (const [title, head, expected] of cases) {
    it(`${expected === undefined ? 'refuses' : 'accepts'} ${title}`, () => {
      expect(spliceableAuthority(head)).to.equal(expected);
    });
  }
});

describe('wire: feature tokens and spliced request ids', () => {
  it('reads tuna-features case-insensitively, ignoring blanks', () => {
    expect([...parseFeatures(' Spliced-HTTP1 , ,future-thing')]).to.deep.equal(['spliced-http1', 'future-thing']);
    expect(parseFeatures(undefined).size).to.equal(0);
  });

  it('numbers the requests of a spliced connection after its stream id, base 36', () => {
    expect(splicedRequestId('abc-1', 1)).to.equal('abc-1.1');
    expect(splicedRequestId('abc-1', 36)).to.equal('abc-1.10');
  });
});
