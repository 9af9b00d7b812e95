import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import type { Socket } from 'node:dgram';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { challengeName, createDnsVerifier } from '../../src/edge/control/index.js';

/**
 * startTxtServer answers DNS TXT queries (RFC 1035 §4.1) from a table, NXDOMAIN otherwise: just
 * enough of a DNS server on 127.0.0.1 to check the custom-domain verifier end to end.
 */
async function startTxtServer(records: Map<string, string[][]>): Promise<Socket> {
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    let offset = 12;
    const labels: string[] = [];
    while (offset < query.length && query[offset] !== 0) {
      const length = query[offset]!;
      labels.push(query.subarray(offset + 1, offset + 1 + length).toString('ascii'));
      offset += length + 1;
    }
    const questionEnd = offset + 5;
    const answers = records.get(labels.join('.').toLowerCase()) ?? [];
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(answers.length ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const rrs = answers.map((strings) => {
      const rdata = Buffer.concat(strings.map((s) => Buffer.concat([Buffer.from([s.length]), Buffer.from(s, 'ascii')])));
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0);
      rr.writeUInt16BE(16, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(60, 6);
      rr.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([rr, rdata]);
    });
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...rrs]), peer.port, peer.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return socket;
}

describe('control API: custom-domain verification through DNS', function () {
  this.timeout(20_000);
  let dns: Socket;
  let server: string;

  beforeEach(async () => {
    const records = new Map<string, string[][]>([
      [challengeName('shop.example.com'), [['unrelated'], ['tok-', 'en-123']]],
      [challengeName('other.example.com'), [['wrong-token']]],
    ]);
    dns = await startTxtServer(records);
    server = `127.0.0.1:${(dns.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    dns.close();
  });

  it('accepts a domain whose challenge TXT record holds the token, split into strings or not', async () => {
    const verify = createDnsVerifier([server]);
    expect(await verify('shop.example.com', 'tok-en-123')).to.equal(true);
  });

  it('refuses a domain whose record holds another token, or that has no record', async () => {
    const verify = createDnsVerifier([server]);
    expect(await verify('other.example.com', 'tok-en-123')).to.equal(false);
    expect(await verify('missing.example.com', 'tok-en-123')).to.equal(false);
    expect(await verify('shop.example.com', '')).to.equal(false);
  });
});
