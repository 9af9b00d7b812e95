import { expect } from 'chai';
import type { IncomingHttpHeaders } from 'node:http2';
import { expandStreamMeta, featureTokens, takeStreamMeta, writeStreamMeta } from '../../src/wire/protocol.js';

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

  it('sends the context as one compact tuna-meta field', () => {
    const headers: Record<string, string> = {};
    writeStreamMeta(headers, { publicPort: 8443, publicProtocol: 'tls', clientAddress: '2001:db8::1', requestId: 'ab-1' });
    expect(headers).to.deep.equal({ 'tuna-meta': '8443,tls,ab-1,2001:db8::1' });
  });

  it('adds the forwarded headers from a compact HTTP context on the agent, as the expanded form carries them', () => {
    const meta = { publicPort: 80, publicProtocol: 'http' as const, clientAddress: '127.0.0.1', requestId: 'r9', host: 'app.test' };
    const compact: Record<string, string> = { ':path': '/', 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' };
    writeStreamMeta(compact, meta);
    const expanded = { ...compact };
    expandStreamMeta(expanded);
    expect(expanded).to.not.have.property('tuna-meta');
    // a request retried on another connection may meet expandStreamMeta twice: the second changes nothing
    const again = { ...expanded };
    expandStreamMeta(again);
    expect(again).to.deep.equal(expanded).and.to.have.property('tuna-request-id', 'r9');
    const context = takeStreamMeta(compact as IncomingHttpHeaders);
    expect(context).to.deep.equal({ publicPort: 80, publicProtocol: 'http', clientAddress: '127.0.0.1', requestId: 'r9' });
    expect(takeStreamMeta(expanded as IncomingHttpHeaders)).to.deep.equal(context);
    expect(compact).to.deep.equal(expanded);

    expect(compact).to.deep.equal({
      ':path': '/',
      'x-forwarded-for': '203.0.113.9, 127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'app.test',
      'x-forwarded-port': '80',
      'x-request-id': 'r9',
    });
  });

  const brokenCompact = ['', '80,http,r', '80,http,r,a,h,x', '70000,http,r,a', '8o,http,r,a', '80,gopher,r,a'];
  for (const value of brokenCompact) {
    it(`rejects the compact context ${JSON.stringify(value)}`, () => {
      const headers: IncomingHttpHeaders = { 'tuna-meta': value };
      expect(takeStreamMeta(headers)).to.equal(undefined);
      expect(headers).to.deep.equal({});
    });
  }

  it('reads the upgrade\'s tuna-features tokens in any case', () => {
    expect([...featureTokens(' Compact-Meta , other')]).to.deep.equal(['compact-meta', 'other']);
    expect(featureTokens(undefined).size).to.equal(0);
  });
});
