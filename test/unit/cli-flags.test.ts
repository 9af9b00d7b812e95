import { expect } from 'chai';
import { parseEdgeAddress, resolveAgentOptions } from '../../src/cli/agent-options.js';
import { parseLocalTarget } from '../../src/cli/commands/http.js';
import { UsageError } from '../../src/cli/errors.js';
import { PortString, SecondsString, decodeFlags } from '../../src/cli/flags.js';
import * as t from 'io-ts';

describe('cli flags', () => {
  describe('parseLocalTarget', () => {
    const cases: [string, { host: string; port: number; protocol: string }][] = [
      ['3000', { host: '127.0.0.1', port: 3000, protocol: 'http' }],
      ['localhost:8080', { host: 'localhost', port: 8080, protocol: 'http' }],
      ['h2c://127.0.0.1:50051', { host: '127.0.0.1', port: 50051, protocol: 'h2c' }],
      ['https://127.0.0.1', { host: '127.0.0.1', port: 443, protocol: 'h2' }],
      ['http://[::1]:9000', { host: '::1', port: 9000, protocol: 'http' }],
    ];
    for (const [text, want] of cases) it(`reads ${text}`, () => expect(parseLocalTarget(text)).to.deep.equal(want));

    for (const bad of ['0', '70000', 'ftp://x:1', 'http://', undefined])
      it(`refuses ${String(bad)} with a usage error`, () => expect(() => parseLocalTarget(bad)).to.throw(UsageError));
  });

  describe('parseEdgeAddress', () => {
    it('defaults to TLS', () => expect(parseEdgeAddress('edge.example.com:7443')).to.deep.equal({ host: 'edge.example.com', port: 7443, tls: true }));
    it('reads tcp:// as plaintext', () => expect(parseEdgeAddress('tcp://127.0.0.1:7000')).to.deep.equal({ host: '127.0.0.1', port: 7000, tls: false }));
    it('reads a bracketed IPv6 address', () => expect(parseEdgeAddress('tls://[::1]:7443').host).to.equal('::1'));
    for (const bad of ['edge.example.com', 'http://edge:80', 'edge:0', 'edge:99999', ':7443'])
      it(`refuses ${bad} naming the flag`, () => expect(() => parseEdgeAddress(bad)).to.throw(UsageError, '--edge'));
  });

  describe('resolveAgentOptions', () => {
    it('takes the edge and key from the environment when no flag is given', async () => {
      const o = await resolveAgentOptions({}, { TUNA_EDGE: 'tcp://127.0.0.1:7000', TUNA_KEY: 'k' }, 'http');
      expect(o).to.deep.equal({ edge: { host: '127.0.0.1', port: 7000, tls: false }, key: 'k', connections: 1 });
    });
    it('says which flag is missing', async () => {
      const err = await resolveAgentOptions({ edge: 'e:1' }, {}, 'http').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(UsageError);
      expect((err as Error).message).to.contain('--key');
    });
    it('refuses a bad connection count through the io-ts codec', async () => {
      const err = await resolveAgentOptions({ edge: 'e:1', key: 'k', connections: 'many' }, {}, 'http').catch((e: unknown) => e);
      expect((err as Error).message).to.contain('--connections');
    });
  });

  it('decodeFlags names the flag and the reason', () => {
    expect(() => decodeFlags(t.type({ port: PortString }), { port: '0' }, 'tcp')).to.throw(UsageError, /--port "0" must be between 1 and 65535/);
  });
  it('reads whole seconds for --secret-refresh (0 to 86400) and refuses anything else naming the flag', () => {
    const codec = t.partial({ 'secret-refresh': SecondsString });
    expect(decodeFlags(codec, { 'secret-refresh': '30' }, 'operator')).to.deep.equal({ 'secret-refresh': 30 });
    expect(decodeFlags(codec, { 'secret-refresh': '0' }, 'operator')).to.deep.equal({ 'secret-refresh': 0 });
    for (const bad of ['-1', '1.5', '30s', '86401', ''])
      expect(() => decodeFlags(codec, { 'secret-refresh': bad }, 'operator'), bad).to.throw(UsageError, /--secret-refresh .* must be whole seconds from 0 to 86400/);
  });
});
