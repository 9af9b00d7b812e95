// kubelet-dns-wire.test.ts — the coredns stand-in's DNS messages, its answers, and its servers on loopback.
import { expect } from 'chai';
import { queryDns } from '../support/kubelet/dns-client.js';
import { parseCorefile, planCorefile } from '../support/kubelet/dns-corefile.js';
import { answerQuery, startDnsServers } from '../support/kubelet/dns-server.js';
import {
  addressRecord,
  decodeQuery,
  decodeResponse,
  DNS_TYPE,
  DnsFormatError,
  encodeName,
  encodeQuery,
  encodeResponse,
  ipv6Bytes,
  RCODE,
  readName,
  srvRecord,
} from '../support/kubelet/dns-wire.js';

const PLANS = planCorefile(parseCorefile('.:53 {\n forward . 8.8.8.8\n}\nfoo.bar.com:53 {\n whoami\n}\n'));

describe('coredns stand-in: DNS wire format', () => {
  it('encodes names as length-prefixed labels and reads them back lower-cased', () => {
    expect(encodeName('foo.bar.com.')).to.deep.equal(Buffer.from('\x03foo\x03bar\x03com\x00', 'latin1'));
    expect(encodeName('.')).to.deep.equal(Buffer.from([0]));
    expect(readName(Buffer.from('\x03FOO\x03bar\x00', 'latin1'), 0)).to.deep.equal({ name: 'foo.bar.', next: 9 });
    expect(() => encodeName(`${'a'.repeat(64)}.com.`)).to.throw(DnsFormatError, /1 to 63 bytes/);
  });

  it('follows compression pointers and stops a pointer loop', () => {
    // "bar.com." at 0, then "foo" + pointer to 0 at 9.
    const message = Buffer.concat([Buffer.from('\x03bar\x03com\x00\x03foo', 'latin1'), Buffer.from([0xc0, 0x00])]);
    expect(readName(message, 9)).to.deep.equal({ name: 'foo.bar.com.', next: 15 });
    expect(() => readName(Buffer.from([0xc0, 0x00]), 0)).to.throw(DnsFormatError, /loop/);
    expect(() => readName(Buffer.from([0x05, 0x61]), 0)).to.throw(DnsFormatError, /past the end/);
  });

  it('decodes a query header and question as a client such as dig writes them', () => {
    const query = decodeQuery(encodeQuery(0x1234, 'Foo.Bar.com', DNS_TYPE.A));
    expect(query).to.deep.equal({
      id: 0x1234,
      isResponse: false,
      opcode: 0,
      recursionDesired: true,
      checkingDisabled: false,
      questionCount: 1,
      question: { name: 'foo.bar.com.', type: DNS_TYPE.A, class: 1 },
    });
    expect(() => decodeQuery(Buffer.alloc(5))).to.throw(DnsFormatError, /shorter than a DNS header/);
  });

  it('writes A, AAAA and SRV records byte for byte', () => {
    expect(addressRecord('a.', 1, 0, '198.18.0.7').data).to.deep.equal(Buffer.from([198, 18, 0, 7]));
    expect(addressRecord('a.', 1, 0, '2001:db8::1').type).to.equal(DNS_TYPE.AAAA);
    expect(ipv6Bytes('2001:db8::1').toString('hex')).to.equal('20010db8000000000000000000000001');
    expect(ipv6Bytes('::ffff:1.2.3.4').toString('hex')).to.equal('00000000000000000000ffff01020304');
    const srv = srvRecord('_udp.a.', 1, 0, { priority: 0, weight: 0, port: 40212, target: '.' });
    expect(srv.data).to.deep.equal(Buffer.from([0, 0, 0, 0, 0x9d, 0x14, 0]));
    const encoded = encodeResponse({
      id: 7,
      opcode: 0,
      authoritative: true,
      recursionDesired: true,
      checkingDisabled: false,
      rcode: RCODE.NOERROR,
      question: { name: 'a.', type: 1, class: 1 },
      additional: [srv],
    });
    // header: id 7, QR|AA|RD, 1 question, 0 answers, 0 authority, 1 additional
    expect(encoded.subarray(0, 12).toString('hex')).to.equal('000785000001000000000001');
    const decoded = decodeResponse(encoded);
    expect(decoded.additional[0]).to.deep.include({ name: '_udp.a.', type: DNS_TYPE.SRV, ttl: 0 });
  });
});

describe('coredns stand-in: answers', () => {
  const client = { address: '198.18.0.9', port: 40212, transport: 'udp' as const };

  it('answers a whoami zone as coredns does: empty answer, A of the client and SRV of its port, TTL 0', () => {
    const answer = answerQuery(PLANS, 53, encodeQuery(1, 'foo.bar.com', DNS_TYPE.A), client);
    const response = decodeResponse(answer?.message ?? Buffer.alloc(0));
    expect(response).to.deep.include({ id: 1, isResponse: true, authoritative: true, rcode: RCODE.NOERROR, answers: [], authority: [] });
    expect(response.questions).to.deep.equal([{ name: 'foo.bar.com.', type: DNS_TYPE.A, class: 1 }]);
    expect(response.additional.map((r) => [r.name, r.type, r.ttl])).to.deep.equal([
      ['foo.bar.com.', DNS_TYPE.A, 0],
      ['_udp.foo.bar.com.', DNS_TYPE.SRV, 0],
    ]);
    expect([...(response.additional[0]?.data ?? [])]).to.deep.equal([198, 18, 0, 9]);
    expect(response.additional[1]?.data.readUInt16BE(4)).to.equal(40212);
  });

  it('answers AAAA for an IPv6 client and names the transport in the SRV record', () => {
    const answer = answerQuery(PLANS, 53, encodeQuery(2, 'foo.bar.com', DNS_TYPE.AAAA), { address: 'fd00::5', port: 53000, transport: 'tcp' });
    const response = decodeResponse(answer?.message ?? Buffer.alloc(0));
    expect(response.additional.map((r) => [r.name, r.type])).to.deep.equal([
      ['foo.bar.com.', DNS_TYPE.AAAA],
      ['_tcp.foo.bar.com.', DNS_TYPE.SRV],
    ]);
  });

  it('REFUSES a name of the forward zone and says why', () => {
    const answer = answerQuery(PLANS, 53, encodeQuery(3, 'example.org', DNS_TYPE.A), client);
    const response = decodeResponse(answer?.message ?? Buffer.alloc(0));
    expect(response).to.deep.include({ id: 3, rcode: RCODE.REFUSED, answers: [], additional: [] });
    expect(answer?.summary).to.include('REFUSED').and.include('8.8.8.8');
  });

  it('answers FORMERR, NOTIMP, or nothing for what is not a plain query', () => {
    const two = encodeQuery(4, 'foo.bar.com', DNS_TYPE.A);
    two.writeUInt16BE(2, 4);
    expect(decodeResponse(answerQuery(PLANS, 53, two, client)?.message ?? Buffer.alloc(0)).rcode).to.equal(RCODE.FORMERR);
    const update = encodeQuery(5, 'foo.bar.com', DNS_TYPE.A);
    update.writeUInt16BE(5 << 11, 2);
    expect(decodeResponse(answerQuery(PLANS, 53, update, client)?.message ?? Buffer.alloc(0)).rcode).to.equal(RCODE.NOTIMP);
    const broken = Buffer.concat([encodeQuery(6, 'foo.bar.com', DNS_TYPE.A).subarray(0, 14)]);
    expect(decodeResponse(answerQuery(PLANS, 53, broken, client)?.message ?? Buffer.alloc(0)).rcode).to.equal(RCODE.FORMERR);
    const response = encodeQuery(7, 'foo.bar.com', DNS_TYPE.A);
    response.writeUInt16BE(0x8000, 2);
    expect(answerQuery(PLANS, 53, response, client)).to.equal(undefined);
    expect(answerQuery(PLANS, 53, Buffer.alloc(3), client)).to.equal(undefined);
  });

  it('truncates a UDP answer over 512 bytes to the question with TC set', () => {
    const long = `${Array.from({ length: 3 }, () => 'a'.repeat(60)).join('.')}.foo.bar.com`;
    const udp = decodeResponse(answerQuery(PLANS, 53, encodeQuery(8, long, DNS_TYPE.A), client)?.message ?? Buffer.alloc(0));
    expect(udp).to.deep.include({ truncated: true, additional: [] });
    const tcp = decodeResponse(answerQuery(PLANS, 53, encodeQuery(8, long, DNS_TYPE.A), { ...client, transport: 'tcp' })?.message ?? Buffer.alloc(0));
    expect(tcp.truncated).to.equal(false);
    expect(tcp.additional).to.have.length(2);
  });
});

describe('coredns stand-in: servers on loopback', () => {
  it('answers whoami over UDP and TCP with the client address and port it saw, and refuses other names', async () => {
    const lines: string[] = [];
    const plans = planCorefile(parseCorefile('.:53 {\n forward . 8.8.8.8\n log\n}\nfoo.bar.com:53 {\n whoami\n}\n'));
    const servers = await startDnsServers(plans, '127.0.0.1', (line) => lines.push(line), () => 0);
    try {
      const port = servers.ports[0] ?? 0;
      for (const transport of ['udp', 'tcp'] as const) {
        const exchange = await queryDns('127.0.0.1', port, 'foo.bar.com', DNS_TYPE.A, transport);
        expect(exchange.response.rcode).to.equal(RCODE.NOERROR);
        expect([...(exchange.response.additional[0]?.data ?? [])].join('.')).to.equal(exchange.localAddress);
        expect(exchange.response.additional[1]?.name).to.equal(`_${transport}.foo.bar.com.`);
        expect(exchange.response.additional[1]?.data.readUInt16BE(4)).to.equal(exchange.localPort);
        const refused = await queryDns('127.0.0.1', port, 'example.org', DNS_TYPE.A, transport);
        expect(refused.response.rcode).to.equal(RCODE.REFUSED);
      }
      // `log` is on the "." block only: its refusals are logged, the whoami answers are not.
      expect(lines.filter((line) => line.includes('example.org.'))).to.have.length(2);
      expect(lines.some((line) => line.includes('foo.bar.com.'))).to.equal(false);
    } finally {
      await servers.close();
    }
  });
});
