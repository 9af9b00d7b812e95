import { expect } from 'chai';
import { createLogger, describeError, peekLogFormat, resolveLogFormat } from '../../src/cli/log.js';
import type { LogFormat } from '../../src/cli/log.js';
import { UsageError } from '../../src/cli/errors.js';

/** A terminal that records which stream got which line. */
function terminal(): { out: string[]; err: string[]; io: { out(l: string): void; err(l: string): void } } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l) => out.push(l), err: (l) => err.push(l) } };
}

const at = () => new Date('2026-01-02T03:04:05.678Z');

/** apiException builds what @kubernetes/client-node throws: status, body and headers over several lines. */
function apiException(code: number, body: unknown): Error {
  const err = new Error(`HTTP-Code: ${code}\nMessage: Unknown API Status Code!\nBody: ${JSON.stringify(body)}\nHeaders: {"retry-after":"1","content-type":"application/json"}`);
  return Object.assign(err, { code, body, headers: { 'retry-after': '1' } });
}

describe('cli logger', () => {
  it('writes text as the commands always have: info on stdout, notices and problems on stderr', () => {
    const t = terminal();
    const log = createLogger(t.io, 'text', at);
    log.info('Forwarding app.localhost → http://127.0.0.1:3000', { target: 'x' });
    log.notice('SIGTERM: closing tunnels', { signal: 'SIGTERM' });
    log.warn('warning: nothing accepts connections');
    log.error('tuna http: cannot reach edge');
    expect(t.out).to.deep.equal(['Forwarding app.localhost → http://127.0.0.1:3000']);
    expect(t.err).to.deep.equal(['SIGTERM: closing tunnels', 'warning: nothing accepts connections', 'tuna http: cannot reach edge']);
  });

  it('writes one JSON object a line on stdout with time, level, msg and the fields', () => {
    const t = terminal();
    const log = createLogger(t.io, 'json', at);
    log.info('tuna edge: tunnel listener on port 7443', { tunnelPort: 7443 });
    log.notice('SIGTERM: draining the edge', { signal: 'SIGTERM' });
    log.warn('sync failed (retrying)', { err: new Error('edge unreachable') });
    expect(t.err).to.deep.equal([]);
    expect(t.out.map((l) => JSON.parse(l) as unknown)).to.deep.equal([
      { time: '2026-01-02T03:04:05.678Z', level: 'info', msg: 'tuna edge: tunnel listener on port 7443', tunnelPort: 7443 },
      { time: '2026-01-02T03:04:05.678Z', level: 'info', msg: 'SIGTERM: draining the edge', signal: 'SIGTERM' },
      { time: '2026-01-02T03:04:05.678Z', level: 'warn', msg: 'sync failed (retrying)', err: 'edge unreachable' },
    ]);
  });

  it('keeps a message of several lines as one JSON line: the first as msg, the others in detail', () => {
    const t = terminal();
    createLogger(t.io, 'json', at).info('\nPublishing:\n  binding/host/a: a (1 route)\n  binding/host/b: b (2 routes)');
    expect(t.out).to.have.length(1);
    expect(JSON.parse(t.out[0]!)).to.deep.include({ msg: 'Publishing:', detail: ['binding/host/a: a (1 route)', 'binding/host/b: b (2 routes)'] });
  });

  it('adds the stable code of an error and never lets a field override time, level or msg', () => {
    const t = terminal();
    createLogger(t.io, 'json', at).error('tuna run: bad flag', { err: new UsageError('bad'), msg: 'other', level: 'debug' });
    expect(JSON.parse(t.out[0]!)).to.deep.equal({ time: '2026-01-02T03:04:05.678Z', level: 'error', msg: 'tuna run: bad flag', err: 'bad', code: 'TUNA_CLI_USAGE' });
  });

  it('turns a Kubernetes API error into one line with its status and message, without the headers', () => {
    const err = apiException(429, { kind: 'Status', message: 'storage is (re)initializing', reason: 'TooManyRequests', code: 429 });
    expect(describeError(err)).to.equal('HTTP 429 TooManyRequests: storage is (re)initializing');
    expect(describeError(apiException(500, JSON.stringify({ message: 'etcd\nleader changed' })))).to.equal('HTTP 500: etcd leader changed');
    expect(describeError(apiException(503, ''))).to.equal('HTTP 503');
    const t = terminal();
    createLogger(t.io, 'text').warn('watching Gateway', { err });
    expect(t.err).to.deep.equal(['watching Gateway: HTTP 429 TooManyRequests: storage is (re)initializing']);
  });

  it('joins the lines of any other error message, so that an event stays one line', () => {
    expect(describeError(new Error('first\n  second\n'))).to.equal('first second');
    expect(describeError('plain')).to.equal('plain');
    expect(describeError(Object.assign(new Error(''), { name: 'AbortError' }))).to.equal('AbortError');
  });

  it('reads --log-format, then TUNA_LOG_FORMAT, and names the flag when the value is wrong', () => {
    const cases: [Record<string, unknown>, NodeJS.ProcessEnv, LogFormat][] = [
      [{}, {}, 'text'],
      [{ 'log-format': 'json' }, {}, 'json'],
      [{}, { TUNA_LOG_FORMAT: 'json' }, 'json'],
      [{ 'log-format': 'text' }, { TUNA_LOG_FORMAT: 'json' }, 'text'],
      [{}, { TUNA_LOG_FORMAT: '' }, 'text'],
    ];
    for (const [values, env, want] of cases) expect(resolveLogFormat(values, env, 'edge'), JSON.stringify([values, env])).to.equal(want);
    expect(() => resolveLogFormat({ 'log-format': 'yaml' }, {}, 'edge')).to.throw(UsageError, /^tuna edge: --log-format "yaml"/);
  });

  it('peeks the format on a raw command line, so that a failure before parsing follows it', () => {
    expect(peekLogFormat(['--config', 'x', '--log-format', 'json'], {})).to.equal('json');
    expect(peekLogFormat(['--log-format=json'], {})).to.equal('json');
    expect(peekLogFormat(['--log-format=text'], { TUNA_LOG_FORMAT: 'json' })).to.equal('text');
    expect(peekLogFormat([], { TUNA_LOG_FORMAT: 'json' })).to.equal('json');
    expect(peekLogFormat(['--log-format', 'yaml'], {})).to.equal('text');
  });
});
