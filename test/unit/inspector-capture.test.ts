import { expect } from 'chai';
import type { IncomingHttpHeaders } from 'node:http';
import { PassThrough, Writable } from 'node:stream';
import type { Downstream, HeaderMap } from '../../src/dataplane/index.js';
import {
  BodyCapture,
  Recorder,
  RequestLog,
  addSharedExchange,
  handingObserver,
  describe as describeRecord,
  headerPairs,
  isLoopbackHost,
  redactHeaders,
  replayHeaders,
  replayRequestIdPrefix,
  summarize,
  viewBody,
  whyNotReplayable,
} from '../../src/inspector/index.js';
import type { SharedExchange } from '../../src/inspector/index.js';
import type { TunnelStreamContext } from '../../src/wire/index.js';

const context: TunnelStreamContext = { bindingId: 'binding/host/app.test', publicPort: 80, publicProtocol: 'http', clientAddress: '198.51.100.7', requestId: 'req-1' };

/** FakeExchange is a Downstream over in-memory streams: what the recorder wraps, and what the test drives. */
function fakeExchange(method: string, target: string, headers: IncomingHttpHeaders, hasBody: boolean): Downstream & { sink: Buffer[]; sent: { status: number; headers: HeaderMap }[]; close(aborted: boolean): void } {
  const body = new PassThrough();
  const sink: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, cb) {
      sink.push(chunk);
      cb();
    },
  });
  const closers: (() => void)[] = [];
  let isClosed = false;
  let isAborted = false;
  const sent: { status: number; headers: HeaderMap }[] = [];
  const ds = {
    method,
    authority: 'app.test',
    target,
    headers,
    body,
    hasBody,
    out,
    sink,
    sent,
    get headersSent() {
      return sent.length > 0;
    },
    get isClosed() {
      return isClosed;
    },
    get isAborted() {
      return isAborted;
    },
    respond(status: number, h: HeaderMap) {
      sent.push({ status, headers: h });
    },
    onClose(cb: () => void) {
      closers.push(cb);
    },
    destroy() {
      isClosed = true;
    },
    close(aborted: boolean) {
      isClosed = true;
      isAborted = aborted;
      for (const c of closers) c();
    },
  };
  if (!hasBody) body.end();
  return ds;
}

describe('inspector capture, bounds and redaction', () => {
  it('counts every byte of a body but keeps only up to the cap', () => {
    const c = new BodyCapture(10);
    c.add(Buffer.from('hello '));
    c.add(Buffer.from('world, and more'));
    c.add('!');
    expect(c.size).to.equal(22);
    expect(c.bytes().toString()).to.equal('hello worl');
    expect(c.isTruncated).to.equal(true);
    const none = new BodyCapture(0);
    none.add(Buffer.from('abc'));
    expect([none.size, none.bytes().length, none.isTruncated]).to.deep.equal([3, 0, true]);
  });

  it('copies kept bytes, so a stream reusing its buffer does not change the capture', () => {
    const c = new BodyCapture(100);
    const buf = Buffer.from('abc');
    c.add(buf);
    buf.write('xyz');
    expect(c.bytes().toString()).to.equal('abc');
  });

  it('shows text bodies as UTF-8, a cut through a multi-byte character still as text, binary as base64', () => {
    const text = new BodyCapture(100);
    text.add('grüße');
    expect(viewBody(text)).to.include({ encoding: 'utf8', data: 'grüße', truncated: false });
    const cut = new BodyCapture(3); // 'gr' + the first byte of 'ü'
    cut.add('grüße');
    expect(viewBody(cut)).to.include({ encoding: 'utf8', data: 'gr', truncated: true, captured: 3 });
    const binary = new BodyCapture(100);
    binary.add(Buffer.from([0xff, 0x00, 0xfe]));
    expect(viewBody(binary)).to.include({ encoding: 'base64', data: Buffer.from([0xff, 0x00, 0xfe]).toString('base64') });
  });

  it('lists headers one value a line without pseudo-headers, and redacts credentials unless asked', () => {
    const pairs = headerPairs({ ':path': '/x', ':method': 'GET', authorization: 'Bearer s3cret', cookie: 'sid=1', 'set-cookie': ['a=1', 'b=2'], 'proxy-authorization': 'Basic eA==', accept: '*/*' });
    expect(pairs).to.deep.equal([
      ['authorization', 'Bearer s3cret'],
      ['cookie', 'sid=1'],
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['proxy-authorization', 'Basic eA=='],
      ['accept', '*/*'],
    ]);
    expect(redactHeaders(pairs, false)).to.deep.equal([
      ['authorization', '[redacted]'],
      ['cookie', '[redacted]'],
      ['set-cookie', '[redacted]'],
      ['set-cookie', '[redacted]'],
      ['proxy-authorization', '[redacted]'],
      ['accept', '*/*'],
    ]);
    expect(redactHeaders(pairs, true)).to.deep.equal(pairs);
  });

  it('records an exchange as the data plane serves it: request body as read, response head and body, duration', () => {
    const log = new RequestLog(10, 8);
    const ds = fakeExchange('POST', '/submit?x=1', { ':method': 'POST', ':path': '/submit?x=1', authorization: 'Bearer s3cret', 'content-type': 'text/plain' }, true);
    new Recorder(log).observe(ds, context);
    const record = log.list()[0]!;
    expect(summarize(record)).to.include({ method: 'POST', host: 'app.test', path: '/submit?x=1', status: 0, state: 'pending', durationMs: null });
    // The recorder must not read the body itself: nothing is captured until a consumer reads it.
    (ds.body as PassThrough).write('0123456789abcdef');
    expect(record.requestBody.size).to.equal(0);
    const consumer: Buffer[] = [];
    ds.body.on('data', (c: Buffer) => consumer.push(c));
    (ds.body as PassThrough).end();
    return new Promise<void>((resolve) => ds.body.once('end', resolve)).then(() => {
      expect(Buffer.concat(consumer).toString()).to.equal('0123456789abcdef');
      expect([record.requestBody.size, record.requestBody.bytes().toString(), record.requestBody.isComplete]).to.deep.equal([16, '01234567', true]);
      ds.respond(201, { 'content-type': 'text/plain', 'set-cookie': ['sid=2'] });
      ds.out.write('created ');
      ds.out.end(Buffer.from('ok'));
      expect(Buffer.concat(ds.sink).toString()).to.equal('created ok');
      expect(ds.sent).to.deep.equal([{ status: 201, headers: { 'content-type': 'text/plain', 'set-cookie': ['sid=2'] } }]);
      ds.close(false);
      const detail = describeRecord(record, false);
      expect(detail).to.include({ status: 201, state: 'complete', requestBytes: 16, responseBytes: 10 });
      expect(detail.durationMs).to.be.a('number');
      expect(detail.request.headers).to.deep.include(['authorization', '[redacted]']);
      expect(detail.response?.headers).to.deep.include(['set-cookie', '[redacted]']);
      expect(detail.response?.body).to.include({ data: 'created ', truncated: true, size: 10, complete: true });
      expect(detail.notReplayable).to.match(/larger than the capture limit of 8 bytes/);
      expect(describeRecord(record, true).request.headers).to.deep.include(['authorization', 'Bearer s3cret']);
      // What replay sends is the request as it arrived, secrets included.
      expect(record.requestHeaders.authorization).to.equal('Bearer s3cret');
    });
  });

  it('hands a finished exchange of another agent process to process 0, whose log shows it as if recorded there', async () => {
    /** serve plays one exchange: a 16-byte request body read, a 201 with a 10-byte body */
    const serve = async (ds: ReturnType<typeof fakeExchange>): Promise<void> => {
      ds.body.resume();
      (ds.body as PassThrough).end('0123456789abcdef');
      await new Promise<void>((resolve) => ds.body.once('end', resolve));
      ds.respond(201, { 'content-type': 'text/plain', 'set-cookie': ['sid=2'] });
      ds.out.write('created ');
      ds.out.end(Buffer.from('ok'));
      ds.close(false);
    };
    const headers = { ':method': 'POST', ':path': '/submit', authorization: 'Bearer s3cret' };
    const here = new RequestLog(10, 8);
    const direct = fakeExchange('POST', '/submit', headers, true);
    new Recorder(here).observe(direct, context);
    await serve(direct);

    const handed: SharedExchange[] = [];
    const other = fakeExchange('POST', '/submit', headers, true);
    handingObserver(8, (e) => handed.push(e)).observe(other, context);
    expect(handed).to.have.length(0);
    await serve(other);
    expect(handed).to.have.length(1);
    // it crosses as plain data (cluster IPC serialises it)
    const process0 = new RequestLog(10, 8);
    const record = addSharedExchange(process0, JSON.parse(JSON.stringify(handed[0])) as SharedExchange);
    const comparable = (d: ReturnType<typeof describeRecord>) => ({ ...d, id: '', seq: 0, durationMs: 0, startedAt: '' });
    expect(comparable(describeRecord(record, true))).to.deep.equal(comparable(describeRecord(here.list()[0]!, true)));
    expect(describeRecord(record, false)).to.include({ state: 'complete', status: 201, requestBytes: 16, responseBytes: 10 });
    expect(record.startedAt).to.equal(handed[0]!.startedAt);
    expect(process0.list().map((r) => r.id)).to.deep.equal([record.id]);
  });

  it('marks an exchange whose client went away as aborted, and a replayed stream with its origin', () => {
    const log = new RequestLog(10, 1024);
    const ds = fakeExchange('GET', '/slow', { ':method': 'GET' }, false);
    new Recorder(log).observe(ds, { ...context, requestId: `${replayRequestIdPrefix}r7/3` });
    ds.close(true);
    const s = summarize(log.list()[0]!);
    expect(s).to.include({ state: 'aborted', status: 0, replayOf: 'r7' });
    expect(whyNotReplayable(log.list()[0]!)).to.equal(null);
  });

  it('keeps the last N exchanges, filters by text, method and status class, and bumps its version on every change', () => {
    const log = new RequestLog(3, 16);
    const add = (method: string, path: string) => log.add({ method, host: 'app.test', path, requestHeaders: {}, context, replayOf: undefined });
    const v0 = log.version;
    const a = add('GET', '/a');
    const b = add('POST', '/b');
    const c = add('GET', '/api/c');
    const d = add('DELETE', '/d');
    expect(log.get(a.id)).to.equal(undefined);
    expect(log.list().map((r) => r.path)).to.deep.equal(['/d', '/api/c', '/b']);
    b.status = 404;
    log.finish(b, 'complete');
    c.status = 200;
    log.finish(c, 'complete');
    expect(log.version).to.equal(v0 + 6);
    expect(log.list({ q: 'API' }).map((r) => r.id)).to.deep.equal([c.id]);
    expect(log.list({ q: '404' }).map((r) => r.id)).to.deep.equal([b.id]);
    expect(log.list({ method: 'get' }).map((r) => r.id)).to.deep.equal([c.id]);
    expect(log.list({ status: '4xx' }).map((r) => r.id)).to.deep.equal([b.id]);
    expect(log.list({ status: 'pending' }).map((r) => r.id)).to.deep.equal([d.id]);
    log.clear();
    expect(log.size).to.equal(0);
  });

  it('rebuilds the header block to replay: pseudo-headers from the record, connection headers dropped, te: trailers kept', () => {
    const log = new RequestLog(3, 16);
    const r = log.add({
      method: 'PUT',
      host: 'app.test',
      path: '/p?q=1',
      requestHeaders: { ':scheme': 'https', ':path': '/p?q=1', host: 'app.test', connection: 'keep-alive', 'keep-alive': '5', te: 'trailers', 'x-a': 'b', cookie: 'sid=1' },
      context,
      replayOf: undefined,
    });
    expect(replayHeaders(r)).to.deep.equal({ ':method': 'PUT', ':path': '/p?q=1', ':authority': 'app.test', ':scheme': 'https', te: 'trailers', 'x-a': 'b', cookie: 'sid=1' });
  });

  it('answers only loopback Host names (DNS rebinding)', () => {
    const table: [string | undefined, boolean][] = [
      ['127.0.0.1:4040', true],
      ['127.1.2.3', true],
      ['localhost:4040', true],
      ['inspector.localhost:4040', true],
      ['[::1]:4040', true],
      ['evil.example:4040', false],
      ['10.0.0.1:4040', false],
      ['[2001:db8::1]:4040', false],
      ['', false],
      [undefined, false],
    ];
    for (const [host, expected] of table) expect(isLoopbackHost(host), String(host)).to.equal(expected);
  });
});
