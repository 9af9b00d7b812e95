import { expect } from 'chai';
import { isInAddressPool as inAddressPool } from '../../src/model/index.js';

describe('operator: the edge’s address pool (spec.addresses inside it)', () => {
  it('tells addresses of a CIDR (without network and broadcast) and of a range', () => {
    const table: [string, string, boolean][] = [
      ['127.77.0.0/16', '127.77.3.3', true],
      ['127.77.0.0/16', '127.77.0.0', false],
      ['127.77.0.0/16', '127.77.255.255', false],
      ['127.77.0.0/16', '127.78.0.1', false],
      ['127.0.0.5/32', '127.0.0.5', true],
      ['127.77.0.9-127.77.1.2', '127.77.1.0', true],
      ['127.77.0.9-127.77.1.2', '127.77.0.8', false],
      ['127.77.0.0/16', 'not-an-ip', false],
      ['nonsense', '127.77.0.1', false],
    ];
    for (const [pool, ip, want] of table) expect(inAddressPool(pool, ip), `${ip} in ${pool}`).to.equal(want);
  });
});
