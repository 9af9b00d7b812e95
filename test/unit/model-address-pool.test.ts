/**
 * The one reading of an IPv4 address pool (src/model/address-pool.ts) that the store's allocator,
 * the control API's checks and the operator's spec.addresses check share.
 */
import { expect } from 'chai';
import { intToIpv4, ipv4ToInt, isInAddressPool, readAddressPool } from '../../src/model/index.js';

describe('model: IPv4 address pools', () => {
  it('leaves the network and broadcast addresses out of a CIDR up to /30, and keeps /31 and /32 whole', () => {
    const range = (text: string) => {
      const r = readAddressPool(text);
      return 'problem' in r ? r : [intToIpv4(r.first), intToIpv4(r.last)];
    };
    expect(range('127.77.0.0/16')).to.deep.equal(['127.77.0.1', '127.77.255.254']);
    expect(range('127.77.0.5/30')).to.deep.equal(['127.77.0.5', '127.77.0.6']);
    expect(range('127.77.0.4/31')).to.deep.equal(['127.77.0.4', '127.77.0.5']);
    expect(range('127.77.0.9/32')).to.deep.equal(['127.77.0.9', '127.77.0.9']);
    expect(range('127.77.0.1-127.77.0.9')).to.deep.equal(['127.77.0.1', '127.77.0.9']);
  });

  it('names the problem of a text that is no pool', () => {
    expect(readAddressPool('127.77.0.0/33')).to.deep.equal({ problem: 'bad CIDR' });
    expect(readAddressPool('127.77.0/16')).to.deep.equal({ problem: 'bad CIDR' });
    expect(readAddressPool('127.77.0.1-127.77.0')).to.deep.equal({ problem: 'bad range' });
    expect(readAddressPool('127.77.0.9-127.77.0.1')).to.deep.equal({ problem: 'range is reversed' });
  });

  it('tells membership, false for an address that is not a dotted quad or a pool that does not parse', () => {
    expect(isInAddressPool('127.77.0.0/16', '127.77.3.4')).to.equal(true);
    expect(isInAddressPool('127.77.0.0/16', '127.77.0.0')).to.equal(false);
    expect(isInAddressPool('127.77.0.0/16', '127.78.0.1')).to.equal(false);
    expect(isInAddressPool('127.77.0.0/16', '127.77.03.4')).to.equal(false);
    expect(isInAddressPool('nonsense', '127.77.0.1')).to.equal(false);
    expect(ipv4ToInt('256.0.0.1')).to.equal(undefined);
  });
});
