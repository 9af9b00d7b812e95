import { expect } from 'chai';
import { formatToken, hashSecret, newRecordId, newSecret, parseToken, secretMatches } from '../../src/edge/store/keys.js';
import { parseAddressPool, pickFreeAddress, pickFreePort, intToIpv4 } from '../../src/edge/store/pools.js';
import { advisoryKey, toPositional } from '../../src/edge/store/postgres-driver.js';

describe('store key tokens', () => {
  it('round-trips a token through format and parse', () => {
    const id = newRecordId();
    const secret = newSecret();
    expect(parseToken('api', formatToken('api', id, secret))).to.deep.equal({ id, secret });
    expect(parseToken('tunnel', formatToken('tunnel', id, secret))).to.deep.equal({ id, secret });
  });

  it('rejects a token of the other kind, a short secret or an id with foreign characters', () => {
    const secret = newSecret();
    expect(parseToken('api', formatToken('tunnel', newRecordId(), secret))).to.equal(undefined);
    expect(parseToken('api', `tuna_ak_${newRecordId()}_${secret.slice(1)}`)).to.equal(undefined);
    expect(parseToken('api', `tuna_ak_${"'".repeat(16)}_${secret}`)).to.equal(undefined);
    expect(parseToken('api', 'tuna_ak_')).to.equal(undefined);
  });

  it('matches a secret against its stored digest only', () => {
    const secret = newSecret();
    const digest = hashSecret(secret);
    expect(digest).to.match(/^[0-9a-f]{64}$/);
    expect(digest).not.to.include(secret);
    expect(secretMatches(secret, digest)).to.equal(true);
    expect(secretMatches(newSecret(), digest)).to.equal(false);
    expect(secretMatches(secret, 'abcd')).to.equal(false);
  });
});

describe('store pools', () => {
  it('picks the lowest free port and nothing when the range is full', () => {
    expect(pickFreePort({ first: 10, last: 12 }, new Set([10, 12]))).to.equal(11);
    expect(pickFreePort({ first: 10, last: 11 }, new Set([10, 11]))).to.equal(undefined);
  });

  it('reads CIDR and range pools, leaving out network and broadcast addresses of a subnet', () => {
    const table: [string, string, string][] = [
      ['127.77.0.0/16', '127.77.0.1', '127.77.255.254'],
      ['10.1.2.3/24', '10.1.2.1', '10.1.2.254'],
      ['127.0.0.5/32', '127.0.0.5', '127.0.0.5'],
      ['127.77.0.9-127.77.1.2', '127.77.0.9', '127.77.1.2'],
    ];
    for (const [text, first, last] of table) {
      const pool = parseAddressPool('pool', text);
      expect([intToIpv4(pool.first), intToIpv4(pool.last)], text).to.deep.equal([first, last]);
    }
    expect(pickFreeAddress(parseAddressPool('pool', '127.77.0.0/29'), new Set(['127.77.0.1']))).to.equal('127.77.0.2');
  });

  it('rejects malformed and oversized address pools with the field name', () => {
    for (const text of ['127.0.0.0/33', 'nope/8', '127.0.0.9-127.0.0.1', '10.0.0.0/8', '::1/128']) {
      expect(() => parseAddressPool('spec.pool', text), text).to.throw(/spec\.pool/);
    }
  });
});

describe('store PostgreSQL driver helpers', () => {
  it('renumbers ? placeholders to $n in order', () => {
    expect(toPositional('SELECT * FROM t WHERE a = ? AND b IN (?, ?)')).to.equal('SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)');
  });

  it('derives a stable signed 64-bit advisory lock key per name', () => {
    const key = BigInt(advisoryKey('pool:tcp-port'));
    expect(key).to.equal(BigInt(advisoryKey('pool:tcp-port')));
    expect(key).not.to.equal(BigInt(advisoryKey('pool:address')));
    expect(key >= -(2n ** 63n) && key < 2n ** 63n).to.equal(true);
  });
});
