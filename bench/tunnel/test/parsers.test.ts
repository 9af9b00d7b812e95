import { expect } from 'chai';
import { parseCurlTimes, parseH2loadLog, parseWrk, percentile } from '../load.js';
import { parseToolPaths } from '../tools.js';

const wrkOutput = `Running 5s test @ http://127.0.0.1:35557/1k
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     4.88ms    3.01ms  47.55ms   83.79%
    Req/Sec     6.66k   591.13    7.83k    71.00%
  66283 requests in 5.00s, 74.40MB read
  Non-2xx or 3xx responses: 12
  Socket errors: connect 0, read 3, write 0, timeout 1
Requests/sec:  13252.71
Transfer/sec:     14.88MB
`;

describe('bench/tunnel parsers', () => {
  it('reads requests/s, the request count and every error wrk reports', () => {
    expect(parseWrk(wrkOutput)).to.deep.equal({ requestsPerSecond: 13252.71, requests: 66283, errors: 16 });
  });

  it('counts no errors when wrk prints no error lines', () => {
    const clean = wrkOutput.replace(/ {2}Non-2xx.*\n/, '').replace(/ {2}Socket errors.*\n/, '');
    expect(parseWrk(clean).errors).to.equal(0);
  });

  it('rejects wrk output without a Requests/sec line', () => {
    expect(() => parseWrk('unable to connect to 127.0.0.1:1 Connection refused')).to.throw(/Requests\/sec/);
  });

  it('takes nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 0.5)).to.equal(50);
    expect(percentile(values, 0.99)).to.equal(99);
    expect(percentile([7], 0.99)).to.equal(7);
    expect(Number.isNaN(percentile([], 0.5))).to.equal(true);
  });

  it('turns an h2load log into millisecond percentiles, errors and the achieved rate', () => {
    const start = 1_700_000_000_000_000;
    // 200 requests, one every 5 ms over one second; durations 100 µs .. 20,000 µs; two 502s.
    const rows = Array.from({ length: 200 }, (_, i) => `${start + i * 5000}\t${i === 10 || i === 20 ? 502 : 200}\t${(i + 1) * 100}`);
    const res = parseH2loadLog(`${rows.join('\n')}\n`);
    expect(res.requests).to.equal(200);
    expect(res.errors).to.equal(2);
    expect(res.p50).to.equal(10);
    expect(res.p99).to.equal(19.8);
    expect(res.achievedRate).to.be.within(190, 200);
  });

  it('rejects an empty h2load log', () => {
    expect(() => parseH2loadLog('')).to.throw(/no requests/);
  });

  it('reads the timing line curl writes after the body', () => {
    expect(parseCurlTimes('{"bytes":1024}\n200 14 1024 0.000512\n')).to.deep.equal({ status: 200, downloaded: 14, uploaded: 1024, seconds: 0.000512 });
  });

  it('reads the tool paths bench-tools.sh prints, empty for a missing tool', () => {
    const tools = parseToolPaths('TUNA_WRK_BIN=/usr/bin/wrk\nTUNA_FRPS_BIN=\nTUNA_FRP_VERSION=0.65.0\nnoise\n');
    expect(tools.wrk).to.equal('/usr/bin/wrk');
    expect(tools.frps).to.equal('');
    expect(tools.chisel).to.equal('');
    expect(tools.frpVersion).to.equal('0.65.0');
  });
});
