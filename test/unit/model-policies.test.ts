import { expect } from 'chai';
import { diff, isInRange, mergePolicies, parseCidr, parseHtpasswd, parseIpAddress, validate, validatePolicies } from '../../src/model/index.js';
import type { RoutePolicies } from '../../src/model/index.js';
import { graphWith, route } from '../support/graph-builders.js';

const bcryptHash = '$2y$10$' + 'a'.repeat(53);
const shaHash = '{SHA}' + 'W6ph5Mm5Pz8GgiULbPgzG37mj9g=';
const hex = (n: number[]): string => Buffer.from(n).toString('hex');

describe('route policies in the model', () => {
  describe('IP addresses and CIDR ranges', () => {
    const addresses: [string, string | undefined][] = [
      ['127.0.0.1', '00000000000000000000ffff7f000001'],
      ['::1', '00000000000000000000000000000001'],
      ['::', '00000000000000000000000000000000'],
      ['2001:db8::8:1', '20010db8000000000000000000080001'],
      ['::ffff:10.1.2.3', '00000000000000000000ffff0a010203'],
      ['fe80:0:0:0:0:0:0:1', 'fe800000000000000000000000000001'],
      ['256.0.0.1', undefined],
      ['01.2.3.4', undefined],
      ['1.2.3', undefined],
      ['1::2::3', undefined],
      ['1:2:3:4:5:6:7:8:9', undefined],
      ['1:2:3:4:5:6:7', undefined],
      ['gggg::1', undefined],
      ['', undefined],
    ];
    for (const [text, bytes] of addresses)
      it(`parses ${JSON.stringify(text)} as ${bytes ?? 'malformed'}`, () => {
        const parsed = parseIpAddress(text);
        expect(parsed === undefined ? undefined : hex([...parsed])).to.equal(bytes);
      });

    const ranges: [string, string, boolean][] = [
      ['10.0.0.0/8', '10.255.1.2', true],
      ['10.0.0.0/8', '11.0.0.1', false],
      ['192.168.1.128/25', '192.168.1.200', true],
      ['192.168.1.128/25', '192.168.1.100', false],
      ['127.0.0.0/8', '::ffff:127.0.0.1', true],
      ['2001:db8::/32', '2001:db8:ffff::1', true],
      ['2001:db8::/32', '2001:db9::1', false],
      ['::1', '::1', true],
      ['0.0.0.0/0', '203.0.113.7', true],
      ['0.0.0.0/0', '2001:db8::1', false],
      ['::/0', '2001:db8::1', true],
    ];
    for (const [cidr, address, inside] of ranges)
      it(`${inside ? 'finds' : 'does not find'} ${address} in ${cidr}`, () => {
        expect(isInRange(parseIpAddress(address)!, parseCidr(cidr)!)).to.equal(inside);
      });

    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/-1', 'ten/8', '10.0.0.0/8/8'])
      it(`refuses the range ${bad}`, () => expect(parseCidr(bad)).to.equal(undefined));
  });

  describe('htpasswd', () => {
    it('reads bcrypt and {SHA} entries, skipping comments and blank lines', () => {
      const parsed = parseHtpasswd(`# team\nann:${bcryptHash}\n\r\nbob:${shaHash}\n`);
      expect(parsed).to.deep.equal({ kind: 'ok', users: [{ name: 'ann', hash: bcryptHash }, { name: 'bob', hash: shaHash }] });
    });

    it('refuses MD5, crypt and plain entries by line, a line without a colon, and a user twice', () => {
      const parsed = parseHtpasswd(`ann:$apr1$x$y\nbob:abcdefghijklm\ncid\ndan:${shaHash}\ndan:${shaHash}\n`);
      expect(parsed.kind).to.equal('invalid');
      const errors = parsed.kind === 'invalid' ? parsed.errors : [];
      expect(errors).to.deep.equal([
        'line 1: user ann: unsupported hash (use bcrypt, htpasswd -B, or {SHA}, htpasswd -s)',
        'line 2: user bob: unsupported hash (use bcrypt, htpasswd -B, or {SHA}, htpasswd -s)',
        'line 3: expected user:hash',
        'line 5: user dan appears twice',
      ]);
    });

    it('refuses content without users', () => expect(parseHtpasswd('# nobody\n')).to.deep.equal({ kind: 'invalid', errors: ['no users'] }));

    it('refuses a bcrypt hash of the wrong length or cost', () => {
      expect(parseHtpasswd(`ann:$2y$10$${'a'.repeat(52)}`).kind).to.equal('invalid');
      expect(parseHtpasswd(`ann:$2y$03$${'a'.repeat(53)}`).kind).to.equal('invalid');
    });
  });

  describe('validatePolicies', () => {
    const bad: [string, RoutePolicies, RegExp][] = [
      ['a bad CIDR', { ipAccess: { allow: ['10.0.0.0/33'], deny: [] } }, /ipAccess.allow: invalid CIDR 10.0.0.0\/33/],
      ['an empty IP policy', { ipAccess: { allow: [], deny: [] } }, /ipAccess: no range/],
      ['a negative rate', { rateLimit: { requests: -1, periodSeconds: 60, burst: 1 } }, /rateLimit.requests: -1/],
      ['a zero period', { rateLimit: { requests: 1, periodSeconds: 0, burst: 1 } }, /rateLimit.periodSeconds: 0/],
      ['a fractional burst', { rateLimit: { requests: 1, periodSeconds: 1, burst: 1.5 } }, /rateLimit.burst: 1.5/],
      ['an unsupported hash', { basicAuth: { realm: 'r', users: [{ name: 'a', hash: 'plain' }] } }, /basicAuth.users: user a: unsupported hash/],
      ['a user name with a colon', { basicAuth: { realm: 'r', users: [{ name: 'a:b', hash: shaHash }] } }, /invalid user name "a:b"/],
      ['a realm with a quote', { basicAuth: { realm: 'a"b', users: [{ name: 'a', hash: shaHash }] } }, /basicAuth.realm/],
      ['no users', { basicAuth: { realm: 'r', users: [] } }, /basicAuth.users: empty/],
      ['a bad key header', { keyAuth: { header: 'x key', sha256: ['0'.repeat(64)] } }, /keyAuth.header/],
      ['a key that is not a digest', { keyAuth: { header: 'x-key', sha256: ['secret'] } }, /keyAuth.sha256: not a lowercase hex/],
      ['a zero body size', { maxBodyBytes: 0 }, /maxBodyBytes: 0/],
      ['a redirect status that is not a redirect', { httpsRedirect: { statusCode: 200 as 301 } }, /httpsRedirect.statusCode: 200/],
      ['a header value with a newline', { requestHeaders: { set: [{ name: 'x', value: 'a\r\nb: c' }], add: [], remove: [] } }, /requestHeaders: header x: value with CR/],
      ['a response header name with a space', { responseHeaders: { set: [], add: [], remove: ['a b'] } }, /responseHeaders: invalid header name/],
      ['a negative timeout', { timeoutMs: -5 }, /timeoutMs: -5/],
      ['CORS without origins', { cors: { allowOrigins: [], allowMethods: [], allowHeaders: [], exposeHeaders: [], allowCredentials: false } }, /cors.allowOrigins: empty/],
    ];
    for (const [what, policies, reason] of bad)
      it(`refuses ${what}`, () => {
        const errors = validatePolicies('route/r', policies);
        expect(errors.join('\n')).to.match(reason);
        expect(errors.every((e) => e.startsWith('route/r: policies.'))).to.equal(true);
      });

    it('accepts a full set', () => {
      const full: RoutePolicies = {
        ipAccess: { allow: ['10.0.0.0/8', '2001:db8::/32'], deny: ['10.0.0.1'] },
        httpsRedirect: { statusCode: 308, port: 8443 },
        rateLimit: { requests: 100, periodSeconds: 60, burst: 20 },
        cors: { allowOrigins: ['*'], allowMethods: ['GET'], allowHeaders: [], exposeHeaders: [], allowCredentials: false },
        basicAuth: { realm: 'tuna', users: [{ name: 'ann', hash: bcryptHash }] },
        keyAuth: { header: 'X-Api-Key', sha256: ['a'.repeat(64)] },
        maxBodyBytes: 1024,
        requestHeaders: { set: [{ name: 'x-a', value: '1' }], add: [], remove: ['x-b'] },
        responseHeaders: { set: [], add: [{ name: 'x-c', value: '2' }], remove: [] },
        timeoutMs: 30_000,
      };
      expect(validatePolicies('r', full)).to.deep.equal([]);
    });

    it('is part of validate, for routes and for binding defaults', () => {
      const g = graphWith('a.example.com', [route('r1', { type: 'Prefix', value: '/' }, { policies: { maxBodyBytes: -1 } })]);
      g.bindings[0]!.policies = { rateLimit: { requests: 0, periodSeconds: 1, burst: 1 } };
      const errors = validate(g);
      expect(errors).to.include('r1: policies.maxBodyBytes: -1 is not a whole number of bytes from 1');
      expect(errors.some((e) => e.startsWith('binding/host/a.example.com: policies.rateLimit.requests'))).to.equal(true);
    });
  });

  describe('mergePolicies', () => {
    it('gives undefined when neither side has a policy', () => {
      expect(mergePolicies(undefined, undefined)).to.equal(undefined);
      expect(mergePolicies({}, {})).to.equal(undefined);
    });

    it("takes the route's policy of a kind over the binding's, and keeps the binding's other kinds", () => {
      const merged = mergePolicies({ maxBodyBytes: 10, timeoutMs: 5 }, { maxBodyBytes: 20 });
      expect(merged).to.deep.equal({ maxBodyBytes: 20, timeoutMs: 5 });
    });
  });

  it("does not count a binding's policy change as a tunnel change", () => {
    const before = graphWith('a.example.com', [route('r1', { type: 'Prefix', value: '/' })]);
    const after = graphWith('a.example.com', [route('r1', { type: 'Prefix', value: '/' })]);
    after.bindings[0]!.policies = { maxBodyBytes: 10 };
    const change = diff(before, after);
    expect(change.isEmpty).to.equal(false);
    expect(change.isTunnelChange).to.equal(false);
    after.bindings[0]!.hostnames = ['b.example.com'];
    expect(diff(before, after).isTunnelChange).to.equal(true);
  });
});
