import { expect } from 'chai';
import type { IncomingHttpHeaders } from 'node:http2';
import { takeStreamMeta, writeStreamMeta } from '../../src/wire/protocol.js';

describe('tunnel stream headers', () => {
  it('round-trips the stream context and strips the tunnel headers', () => {
    const headers: Record<string, string> = { ':path': '/', 'x-other': '1' };
    writeStreamMeta(headers, { publicPort: 443, publicProtocol: 'https', clientAddress: '203.0.113.1', requestId: 'r1' });
    const incoming = headers as IncomingHttpHeaders;
    expect(takeStreamMeta(incoming)).to.deep.equal({ publicPort: 443, publicProtocol: 'https', clientAddress: '203.0.113.1', requestId: 'r1' });
    expect(incoming).to.deep.equal({ ':path': '/', 'x-other': '1' });
  });

  const broken: [string, IncomingHttpHeaders][] = [
    ['a missing port', { 'tuna-public-protocol': 'http', 'tuna-client-address': 'a', 'tuna-request-id': 'r' }],
    ['a port out of range', { 'tuna-public-port': '70000', 'tuna-public-protocol': 'http', 'tuna-client-address': 'a', 'tuna-request-id': 'r' }],
    ['an unknown protocol', { 'tuna-public-port': '80', 'tuna-public-protocol': 'gopher', 'tuna-client-address': 'a', 'tuna-request-id': 'r' }],
    ['a missing request id', { 'tuna-public-port': '80', 'tuna-public-protocol': 'http', 'tuna-client-address': 'a' }],
  ];
  for (const [what, headers] of broken) {
    it(`rejects stream headers with ${what}`, () => {
      expect(takeStreamMeta({ ...headers })).to.equal(undefined);
    });
  }
});
