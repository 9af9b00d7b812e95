import { expect } from 'chai';
import bcrypt from 'bcryptjs';
import { createHash } from 'node:crypto';
import { isRight } from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CidrString, ClaimHeaderString, ClaimRequirementString, DurationString, HeaderEditString, KeyAuthString, OriginsString, RateLimitString, SizeString, resolvePolicyFlags } from '../../src/cli/policy-flags.js';
import { testSigner } from '../support/jwt-keys.js';
import { UsageError } from '../../src/cli/errors.js';

function decoded<A>(codec: t.Type<A, string, unknown>, text: string): A | 'invalid' {
  const r = codec.decode(text);
  return isRight(r) ? r.right : 'invalid';
}

const fakeHash = (password: string): Promise<string> => bcrypt.hash(password, 4);

describe('tuna http policy flags', () => {
  const tables: [string, t.Type<unknown, string, unknown>, [string, unknown][]][] = [
    [
      '--rate-limit',
      RateLimitString as t.Type<unknown, string, unknown>,
      [
        ['100/m', { requests: 100, periodSeconds: 60, burst: 100 }],
        ['10/s', { requests: 10, periodSeconds: 1, burst: 10 }],
        ['5/10s', { requests: 5, periodSeconds: 10, burst: 5 }],
        ['1000/hour', { requests: 1000, periodSeconds: 3600, burst: 1000 }],
        ['-5/m', 'invalid'],
        ['0/m', 'invalid'],
        ['5', 'invalid'],
        ['5/d', 'invalid'],
        ['5/0s', 'invalid'],
        ['5/25h', 'invalid'],
      ],
    ],
    [
      '--max-body',
      SizeString as t.Type<unknown, string, unknown>,
      [
        ['1048576', 1048576],
        ['512k', 524288],
        ['10m', 10485760],
        ['1GiB', 1073741824],
        ['0', 'invalid'],
        ['-1', 'invalid'],
        ['10q', 'invalid'],
      ],
    ],
    [
      '--timeout',
      DurationString as t.Type<unknown, string, unknown>,
      [
        ['500ms', 500],
        ['30s', 30000],
        ['2m', 120000],
        ['15', 15000],
        ['0s', 'invalid'],
        ['25h', 'invalid'],
        ['soon', 'invalid'],
      ],
    ],
    [
      '--ip-allow',
      CidrString as t.Type<unknown, string, unknown>,
      [
        ['10.0.0.0/8', ['10.0.0.0/8']],
        ['10.0.0.0/8, 2001:db8::/32', ['10.0.0.0/8', '2001:db8::/32']],
        ['::1', ['::1']],
        ['10.0.0.0/33', 'invalid'],
        ['', 'invalid'],
        ['example.com', 'invalid'],
      ],
    ],
    [
      '--request-header',
      HeaderEditString as t.Type<unknown, string, unknown>,
      [
        ['X-A: 1', { op: 'set', name: 'X-A', value: '1' }],
        ['+X-A:2', { op: 'add', name: 'X-A', value: '2' }],
        ['X-A:', { op: 'remove', name: 'X-A' }],
        ['+X-A:', 'invalid'],
        ['X A:1', 'invalid'],
        ['novalue', 'invalid'],
      ],
    ],
    [
      '--key-auth',
      KeyAuthString as t.Type<unknown, string, unknown>,
      [
        ['X-Api-Key:abc', { header: 'X-Api-Key', key: 'abc' }],
        ['X-Api-Key:a:b', { header: 'X-Api-Key', key: 'a:b' }],
        ['abc', 'invalid'],
        ['X-Api-Key:', 'invalid'],
      ],
    ],
    [
      '--cors',
      OriginsString as t.Type<unknown, string, unknown>,
      [
        ['*', ['*']],
        ['https://a.example,http://localhost:3000', ['https://a.example', 'http://localhost:3000']],
        ['https://*.example', ['https://*.example']],
        ['a.example', 'invalid'],
      ],
    ],
    [
      '--jwt-claim-header',
      ClaimHeaderString as t.Type<unknown, string, unknown>,
      [
        ['sub=X-User', { claim: 'sub', header: 'X-User' }],
        ['email=X Email', 'invalid'],
        ['sub', 'invalid'],
        ['=X-User', 'invalid'],
      ],
    ],
    [
      '--jwt-require',
      ClaimRequirementString as t.Type<unknown, string, unknown>,
      [
        ['tier=gold', { claim: 'tier', match: 'equals', value: 'gold' }],
        ['groups[]=ops', { claim: 'groups', match: 'contains', value: 'ops' }],
        ['scope~=orders:write', { claim: 'scope', match: 'scope', value: 'orders:write' }],
        ['aud=a=b', { claim: 'aud', match: 'equals', value: 'a=b' }],
        ['tier', 'invalid'],
        ['tier=', 'invalid'],
      ],
    ],
  ];
  for (const [flag, codec, rows] of tables)
    describe(flag, () => {
      for (const [text, want] of rows) it(`reads ${JSON.stringify(text)} as ${JSON.stringify(want)}`, () => expect(decoded(codec, text)).to.deep.equal(want));
    });

  it('gives no policies without policy flags', async () => {
    expect(await resolvePolicyFlags({}, 'http', fakeHash)).to.equal(undefined);
  });

  it('builds the policies of the flags, keeping only digests and hashes of secrets', async () => {
    const p = await resolvePolicyFlags(
      {
        'https-redirect': true,
        'basic-auth': ['ann:pw'],
        'key-auth': ['X-Api-Key:k1'],
        'ip-allow': ['10.0.0.0/8,::1'],
        'ip-deny': ['10.0.0.1'],
        'request-header': ['X-A:1', '+X-B:2', 'X-C:'],
        'max-body': '1k',
        timeout: '2s',
      },
      'http',
      fakeHash,
    );
    const hash = p?.basicAuth?.users[0]?.hash ?? '';
    expect(bcrypt.compareSync('pw', hash)).to.equal(true);
    expect(p).to.deep.equal({
      ipAccess: { allow: ['10.0.0.0/8', '::1'], deny: ['10.0.0.1'] },
      httpsRedirect: { statusCode: 308 },
      basicAuth: { realm: 'tuna', users: [{ name: 'ann', hash }] },
      keyAuth: { header: 'X-Api-Key', sha256: [createHash('sha256').update('k1').digest('hex')] },
      maxBodyBytes: 1024,
      requestHeaders: { set: [{ name: 'X-A', value: '1' }], add: [{ name: 'X-B', value: '2' }], remove: ['X-C'] },
      timeoutMs: 2000,
    });
  });

  it('builds a JWT policy from a JWKS file (public keys only) or a URL', async () => {
    const signer = testSigner('k1', 'ES256');
    const dir = mkdtempSync(join(tmpdir(), 'tuna-jwt-'));
    try {
      const file = join(dir, 'jwks.json');
      writeFileSync(file, JSON.stringify({ keys: [{ ...(signer.privateKey.export({ format: 'jwk' }) as object), kid: 'k1', alg: 'ES256' }] }));
      const common = { 'jwt-issuer': ['https://i.test'], 'jwt-audience': ['a', 'b'], 'jwt-claim-header': ['sub=X-User'], 'jwt-require': ['scope~=read'], 'jwt-cookie': 'session' };
      const p = await resolvePolicyFlags({ ...common, 'jwt-jwks': file }, 'http', fakeHash);
      expect(p?.jwt).to.deep.equal({
        realm: 'tuna',
        issuers: ['https://i.test'],
        audiences: ['a', 'b'],
        jwks: { kind: 'inline', keys: [signer.jwk] },
        clockSkewSeconds: 60,
        cookie: 'session',
        claimToHeaders: [{ claim: 'sub', header: 'X-User' }],
        require: [{ claim: 'scope', match: 'scope', value: 'read' }],
      });
      const remote = await resolvePolicyFlags({ ...common, 'jwt-jwks': 'http://127.0.0.1:9/jwks' }, 'http', fakeHash);
      expect(remote?.jwt?.jwks).to.deep.equal({ kind: 'url', url: 'http://127.0.0.1:9/jwks', refreshSeconds: 300 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the flag of a bad value in the usage error', async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ 'rate-limit': '-1/m' }, /--rate-limit "-1\/m"/],
      [{ 'ip-deny': ['1.2.3.4/40'] }, /--ip-deny "1.2.3.4\/40"/],
      [{ 'basic-auth': ['nobody'] }, /--basic-auth "nobody" is neither USER:PASSWORD nor an htpasswd file/],
      [{ 'key-auth': ['A:1', 'B:2'] }, /--key-auth: every key must name the same header/],
      [{ 'basic-auth': ['ann:a', 'ann:b'] }, /--basic-auth: user ann is given twice/],
      [{ 'jwt-jwks': 'https://idp.test/jwks' }, /a JWT policy needs --jwt-issuer, --jwt-audience too/],
      [{ 'jwt-issuer': ['i'], 'jwt-audience': ['a'], 'jwt-jwks': 'https://idp.test/jwks', 'jwt-header': 'X Token' }, /--jwt-header: invalid header name "X Token"/],
      [{ 'jwt-issuer': ['i'], 'jwt-audience': ['a'], 'jwt-jwks': 'http://idp.test/jwks' }, /--jwt-jwks: "http:\/\/idp.test\/jwks" is not an https URL \(or http to a loopback address\)/],
      [{ 'jwt-issuer': ['i'], 'jwt-audience': ['a'], 'jwt-jwks': 'https://idp.test/jwks', 'jwt-claim-header': ['sub=Host'] }, /--jwt-claim-header: header Host may not be set from a claim/],
    ];
    for (const [values, message] of bad) {
      const err = await resolvePolicyFlags(values, 'http', fakeHash).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(values)).to.be.instanceOf(UsageError);
      expect((err as Error).message).to.match(message);
    }
  });
});
