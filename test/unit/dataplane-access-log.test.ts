import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { AccessLog, AccessLogFormatError, combineObservers, compileAccessLogFormat, redactTarget } from '../../src/dataplane/index.js';
import type { AccessLogEntry, Downstream, ExchangeObserver, HeaderMap } from '../../src/dataplane/index.js';
import type { TunnelStreamContext } from '../../src/wire/index.js';

/** FakeExchange is a Downstream over two PassThrough streams, closed by the test. */
class FakeExchange implements Downstream {
  readonly body = new PassThrough();
  readonly out = new PassThrough();
  readonly headers: Downstream['headers'];
  headersSent = false;
  isClosed = false;
  isAborted = false;
  readonly #closers: (() => void)[] = [];
  constructor(
    readonly method: string,
    readonly authority: string,
    readonly target: string,
    readonly hasBody = false,
    headers: Downstream['headers'] = {},
  ) {
    this.headers = headers;
  }
  respond(_status: number, _headers: HeaderMap): void {
    this.headersSent = true;
  }
  onClose(callback: () => void): void {
    this.#closers.push(callback);
  }
  destroy(): void {
    this.close(true);
  }
  close(isAborted = false): void {
    this.isClosed = true;
    this.isAborted = isAborted;
    for (const c of this.#closers.splice(0)) c();
  }
}

const context: TunnelStreamContext = { bindingId: 'binding/host/a.test', publicPort: 443, publicProtocol: 'https', clientAddress: '198.18.0.7', requestId: 'req-1' };

describe('access log: redaction', () => {
  const cases: [string, string][] = [
    ['/plain', '/plain'],
    ['/a?b=1&c=2', '/a?b=1&c=2'],
    ['/cb?code=abc&state=xyz', '/cb?code=[redacted]&state=xyz'],
    ['/x?access_token=t0k&page=2', '/x?access_token=[redacted]&page=2'],
    ['/s3?X-Amz-Credential=AK%2F1&X-Amz-Signature=ff&X-Amz-Date=1', '/s3?X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]&X-Amz-Date=1'],
    ['/k?api_key=1&apiKey=2&password=3&client_secret=4&session_id=5&auth=6&sig=7', '/k?api_key=[redacted]&apiKey=[redacted]&password=[redacted]&client_secret=[redacted]&session_id=[redacted]&auth=[redacted]&sig=[redacted]'],
    // the name is judged decoded: %74oken is token
    ['/e?%74oken=secret&q=a+b', '/e?%74oken=[redacted]&q=a+b'],
    // a name without a value has nothing to hide; `codec` is not `code`
    ['/f?token&codec=x', '/f?token&codec=x'],
    ['/m?%E0%A4%A=1&key=2', '/m?%E0%A4%A=1&key=[redacted]'],
  ];
  for (const [target, expected] of cases) {
    it(`logs ${target} as ${expected}`, () => expect(redactTarget(target)).to.equal(expected));
  }

  it('never writes a header: Authorization, Cookie and key headers stay out of the line', () => {
    const lines: string[] = [];
    const log = new AccessLog({ write: (l) => lines.push(l) });
    const ds = new FakeExchange('GET', 'a.test', '/', false, { authorization: 'Bearer sekrit-1', cookie: 'sid=sekrit-2', 'x-api-key': 'sekrit-3' });
    log.observe(ds, context);
    ds.respond(200, {});
    ds.close();
    expect(lines).to.have.length(1);
    expect(lines[0]).not.to.match(/sekrit/);
  });
});

describe('access log: sampling', () => {
  it('logs the exchanges whose draw falls below the share, and draws once per exchange', () => {
    const draws = [0.1, 0.3, 0.2499, 0.25, 0];
    let drawn = 0;
    const lines: string[] = [];
    const log = new AccessLog({ write: (l) => lines.push(l), sample: 0.25, random: () => draws[drawn++]!, format: '$path' });
    for (let i = 0; i < draws.length; i++) {
      const ds = new FakeExchange('GET', 'a.test', `/${i}`);
      log.observe(ds, context);
      ds.close();
    }
    expect(drawn).to.equal(5);
    expect(lines).to.deep.equal(['/0', '/2', '/4']);
  });

  it('logs every exchange without drawing at share 1, and refuses a share outside (0, 1]', () => {
    const lines: string[] = [];
    const log = new AccessLog({ write: (l) => lines.push(l), random: () => expect.fail('no draw at share 1') });
    const ds = new FakeExchange('GET', 'a.test', '/');
    log.observe(ds, context);
    ds.close();
    expect(lines).to.have.length(1);
    for (const sample of [0, -0.5, 1.5, NaN]) expect(() => new AccessLog({ write: () => undefined, sample })).to.throw(RangeError);
  });
});

describe('access log: lines', () => {
  it('writes one JSON line with the route, status, bytes each way, duration and client when the exchange ends', () => {
    const lines: string[] = [];
    let clock = 1000;
    const log = new AccessLog({ write: (l) => lines.push(l), now: () => clock });
    const ds = new FakeExchange('POST', 'a.test', '/upload?token=abc', true);
    log.observe(ds, context);
    log.routed(ds, 'ingress/default/web/rule/0/match/0');
    ds.body.resume();
    ds.body.write(Buffer.alloc(7));
    ds.body.end(Buffer.alloc(3));
    ds.respond(201, {});
    ds.out.write('hello ');
    ds.out.end(Buffer.from('world'));
    ds.out.resume();
    clock += 12.3456;
    expect(lines).to.deep.equal([]);
    ds.close();
    expect(lines).to.have.length(1);
    const entry = JSON.parse(lines[0]!) as AccessLogEntry;
    expect(Object.keys(entry)).to.deep.equal(['time', 'requestId', 'binding', 'route', 'client', 'method', 'host', 'path', 'status', 'durationMs', 'bytesIn', 'bytesOut', 'aborted']);
    expect({ ...entry, time: '' }).to.deep.equal({
      time: '',
      requestId: 'req-1',
      binding: 'binding/host/a.test',
      route: 'ingress/default/web/rule/0/match/0',
      client: '198.18.0.7',
      method: 'POST',
      host: 'a.test',
      path: '/upload?token=[redacted]',
      status: 201,
      durationMs: 12.346,
      bytesIn: 10,
      bytesOut: 11,
      aborted: false,
    });
    expect(Date.parse(entry.time)).to.be.closeTo(Date.now(), 5_000);
  });

  it('says null for the status and route of an exchange the client left before any answer', () => {
    const lines: string[] = [];
    const log = new AccessLog({ write: (l) => lines.push(l), format: '$method $host$path $status $route aborted=${aborted}' });
    const ds = new FakeExchange('GET', 'a.test', '/slow');
    log.observe(ds, context);
    ds.destroy();
    expect(lines).to.deep.equal(['GET a.test/slow - - aborted=true']);
  });

  it('fills a template, escaping control characters so a value cannot forge a line', () => {
    const format = compileAccessLogFormat('$client "${method} ${path}" $status $bytesOut');
    const entry: AccessLogEntry = { time: 't', requestId: 'r', binding: 'b', route: null, client: '1.2.3.4', method: 'GET', host: 'h', path: '/a\nGET /forged', status: 200, durationMs: 1, bytesIn: 0, bytesOut: 5, aborted: false };
    expect(format(entry)).to.equal('1.2.3.4 "GET /a\\x0aGET /forged" 200 5');
  });

  it('refuses a template naming an unknown field', () => {
    expect(() => compileAccessLogFormat('$method $user')).to.throw(AccessLogFormatError, /unknown field \$user/);
  });
});

describe('combineObservers', () => {
  it('is undefined for none and the observer itself for one', () => {
    const one: ExchangeObserver = { observe: () => undefined };
    expect(combineObservers([undefined, undefined])).to.equal(undefined);
    expect(combineObservers([undefined, one])).to.equal(one);
  });

  it('tells every observer of each exchange, and the route to those that ask for it', () => {
    const seen: string[] = [];
    const a: ExchangeObserver = { observe: () => seen.push('a') };
    const b: ExchangeObserver = { observe: () => seen.push('b'), routed: (_ds, id) => seen.push(`b:${id}`) };
    const both = combineObservers([a, b])!;
    const ds = new FakeExchange('GET', 'h', '/');
    both.observe(ds, context);
    both.routed?.(ds, 'r1');
    expect(seen).to.deep.equal(['a', 'b', 'b:r1']);
  });
});
