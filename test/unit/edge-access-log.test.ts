import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { AccessLogFormatError } from '../../src/access-log/index.js';
import { EDGE_ACCESS_LOG_FIELDS, EdgeAccessLog, compileEdgeAccessLogFormat } from '../../src/edge/index.js';
import type { EdgeAccessLogEntry } from '../../src/edge/index.js';

/** The edge's access log lines (src/edge/fronts/access-log.ts): the fields of one exchange, formats, sampling. */
describe('EdgeAccessLog', () => {
  const clock = (): { now: () => number; at: number } => {
    const c = { at: 1000, now: () => c.at };
    return c;
  };

  it('writes one line per exchange at its end with every field: the bodies counted, the query redacted, the last tunnel', async () => {
    const lines: string[] = [];
    const c = clock();
    const log = new EdgeAccessLog({ write: (l) => lines.push(l), now: c.now });
    const exchange = log.begin({ protocol: 'http1', client: '203.0.113.7', host: 'web.test:8080', method: 'PUT', target: '/up?X-Amz-Signature=abc&n=1' })!;
    const body = new PassThrough();
    const out = new PassThrough();
    exchange.countBodies(body, out);
    body.resume();
    body.write('12345');
    await new Promise((resolve) => setImmediate(resolve));
    out.write('abc');
    out.end(Buffer.from('de'));
    exchange.binding = 'binding/host/web.test';
    exchange.requestId = 'r-1';
    exchange.tunnel = 'first';
    exchange.tunnel = 'retried';
    c.at = 1012.3456;
    exchange.end(201, false);
    exchange.end(500, true);
    expect(lines).to.have.length(1);
    const entry = JSON.parse(lines[0]!) as EdgeAccessLogEntry;
    expect(Date.parse(entry.time)).to.not.be.NaN;
    expect({ ...entry, time: 't' }).to.deep.equal({
      time: 't',
      requestId: 'r-1',
      protocol: 'http1',
      client: '203.0.113.7',
      host: 'web.test:8080',
      binding: 'binding/host/web.test',
      tunnel: 'retried',
      method: 'PUT',
      path: '/up?X-Amz-Signature=[redacted]&n=1',
      status: 201,
      durationMs: 12.346,
      bytesIn: 5,
      bytesOut: 5,
      aborted: false,
    });
    expect(Object.keys(entry)).to.deep.equal([...EDGE_ACCESS_LOG_FIELDS]);
  });

  it('logs a raw connection with its socket’s byte counters, null method, path and status', () => {
    const lines: string[] = [];
    const exchange = new EdgeAccessLog({ write: (l) => lines.push(l) }).begin({ protocol: 'tls', client: '::1', host: 'db.test' })!;
    const socket = { bytesRead: 0, bytesWritten: 0 };
    exchange.countSocket(socket);
    exchange.binding = 'binding/host/db.test';
    socket.bytesRead = 517;
    socket.bytesWritten = 4096;
    exchange.end(null, true);
    expect(JSON.parse(lines[0]!)).to.deep.include({ protocol: 'tls', host: 'db.test', method: null, path: null, status: null, requestId: null, tunnel: null, bytesIn: 517, bytesOut: 4096, aborted: true });
  });

  it('writes templates with the edge’s fields (- for null, control characters escaped) and refuses an unknown field', () => {
    const lines: string[] = [];
    const exchange = new EdgeAccessLog({ write: (l) => lines.push(l), format: '$client ${protocol} "$method $path" $status $binding $tunnel' }).begin({ protocol: 'http2', client: '1.2.3.4', host: 'h', method: 'GET', target: '/a\nGET /forged' })!;
    exchange.end(404, false);
    expect(lines).to.deep.equal(['1.2.3.4 http2 "GET /a\\x0aGET /forged" 404 - -']);
    expect(() => compileEdgeAccessLogFormat('$host $route')).to.throw(AccessLogFormatError, /unknown field \$route in the access log format; the fields are time, requestId, protocol, client, host, binding, tunnel/);
  });

  it('samples: begin returns nothing for an exchange drawn out, and a share outside (0, 1] is refused', () => {
    const draws = [0.2, 0.7, 0.49];
    const log = new EdgeAccessLog({ write: () => undefined, sample: 0.5, random: () => draws.shift()! });
    expect([log.begin({ protocol: 'tcp', client: 'c', host: null }), log.begin({ protocol: 'tcp', client: 'c', host: null }), log.begin({ protocol: 'tcp', client: 'c', host: null })].map((e) => e !== undefined)).to.deep.equal([true, false, true]);
    expect(() => new EdgeAccessLog({ write: () => undefined, sample: 0 })).to.throw(RangeError);
  });
});
