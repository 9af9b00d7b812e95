// kubelet-dns-corefile.test.ts — the coredns stand-in reads a Corefile and says what it serves.
import { expect } from 'chai';
import {
  CorefileError,
  findZone,
  isLocalUpstream,
  parseCorefile,
  parseStandInArgs,
  planCorefile,
} from '../support/kubelet/dns-corefile.js';

// The ConfigMap of the Gateway API conformance base manifests (v1.6.3), as written there.
const CONFORMANCE_COREFILE = `.:53 {
    forward . 8.8.8.8 9.9.9.9
    log
    errors
}
foo.bar.com:53 {
  whoami
}
`;

describe('coredns stand-in: Corefile', () => {
  it('parses the conformance Corefile into two server blocks with their plugins and lines', () => {
    const blocks = parseCorefile(CONFORMANCE_COREFILE);
    expect(blocks.map((b) => b.keys)).to.deep.equal([[{ zone: '.', port: 53 }], [{ zone: 'foo.bar.com.', port: 53 }]]);
    expect(blocks[0]?.directives.map((d) => [d.name, d.args, d.line])).to.deep.equal([
      ['forward', ['.', '8.8.8.8', '9.9.9.9'], 2],
      ['log', [], 3],
      ['errors', [], 4],
    ]);
    expect(blocks[1]?.directives.map((d) => d.name)).to.deep.equal(['whoami']);
  });

  it('serves the whoami zone and refuses the zone that would forward to 8.8.8.8', () => {
    const plans = planCorefile(parseCorefile(CONFORMANCE_COREFILE));
    const root = plans.find((p) => p.zone === '.');
    const foo = plans.find((p) => p.zone === 'foo.bar.com.');
    expect(root?.action).to.equal('refuse');
    expect(root?.reason).to.include('8.8.8.8, 9.9.9.9').and.include('leave this machine');
    expect(root?.logQueries).to.equal(true);
    expect(foo?.action).to.equal('whoami');
    expect(foo?.logQueries).to.equal(false);
  });

  it('picks the longest zone containing a name on the query port, as coredns does', () => {
    const plans = planCorefile(parseCorefile(CONFORMANCE_COREFILE));
    expect(findZone(plans, 53, 'foo.bar.com.')?.action).to.equal('whoami');
    expect(findZone(plans, 53, 'www.foo.bar.com.')?.action).to.equal('whoami');
    expect(findZone(plans, 53, 'xfoo.bar.com.')?.zone).to.equal('.');
    expect(findZone(plans, 53, 'example.org.')?.action).to.equal('refuse');
    expect(findZone(plans, 54, 'foo.bar.com.')).to.equal(undefined);
  });

  it('reads keys with ports, dns:// schemes, several zones per block, comments, quotes and nested blocks', () => {
    const text = `# a comment
dns://example.org:1053 other.test {
    whoami # trailing comment
    forward "." 127.0.0.1:5300 {
        max_fails 3
    }
}`;
    const [block] = parseCorefile(text, 5353);
    expect(block?.keys).to.deep.equal([
      { zone: 'example.org.', port: 1053 },
      { zone: 'other.test.', port: 5353 },
    ]);
    expect(block?.directives[1]).to.deep.include({ name: 'forward', args: ['.', '127.0.0.1:5300'], line: 4 });
    expect(block?.directives[1]?.block).to.deep.equal([['max_fails', '3']]);
    // forward comes before whoami in coredns's plugin order, so it would answer: the stand-in refuses.
    const [plan] = planCorefile([block!]);
    expect(plan?.action).to.equal('refuse');
    expect(plan?.reason).to.include('not implemented');
  });

  it('rejects what it cannot serve, naming the line', () => {
    expect(() => planCorefile(parseCorefile('. {\n  whoami\n  kubernetes cluster.local\n}'))).to.throw(CorefileError, /line 3: plugin "kubernetes"/);
    expect(() => parseCorefile('tls://.:853 {\n whoami\n}')).to.throw(CorefileError, /line 1: tls:\/\//);
    expect(() => parseCorefile('. {\n whoami\n')).to.throw(CorefileError, /not closed/);
    expect(() => parseCorefile('(snip) {\n whoami\n}')).to.throw(CorefileError, /snippets/);
    expect(() => parseCorefile('.:99999 {\n whoami\n}')).to.throw(CorefileError, /port 99999/);
    expect(() => parseCorefile('')).to.throw(CorefileError, /no server block/);
    expect(() => planCorefile(parseCorefile('. {\n forward\n}'))).to.throw(CorefileError, /line 2: forward needs/);
    expect(() => planCorefile(parseCorefile('a.test {\n whoami\n}\na.test {\n whoami\n}'))).to.throw(CorefileError, /defined twice/);
    expect(() => planCorefile(parseCorefile('. {\n forward example.org 8.8.8.8\n whoami\n}'))).to.throw(CorefileError, /only part/);
  });

  it('tells loopback upstreams from outside ones', () => {
    expect(isLocalUpstream('127.0.0.1')).to.equal(true);
    expect(isLocalUpstream('127.0.0.53:53')).to.equal(true);
    expect(isLocalUpstream('[::1]:53')).to.equal(true);
    expect(isLocalUpstream('8.8.8.8')).to.equal(false);
    expect(isLocalUpstream('dns://9.9.9.9:53')).to.equal(false);
    expect(isLocalUpstream('/etc/resolv.conf')).to.equal(false);
  });

  it('reads the coredns flags it knows and rejects others', () => {
    expect(parseStandInArgs(['-conf', '/root/Corefile'])).to.deep.equal({ conf: '/root/Corefile', port: 53 });
    expect(parseStandInArgs(['--conf=/x', '-dns.port', '1053'])).to.deep.equal({ conf: '/x', port: 1053 });
    expect(parseStandInArgs([])).to.deep.equal({ conf: 'Corefile', port: 53 });
    expect(() => parseStandInArgs(['-quiet'])).to.throw(CorefileError, /-quiet is not supported/);
    expect(() => parseStandInArgs(['-conf'])).to.throw(CorefileError, /-conf needs a value/);
    expect(() => parseStandInArgs(['-dns.port', '0'])).to.throw(CorefileError, /not a port/);
  });
});
