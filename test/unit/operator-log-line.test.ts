import { expect } from 'chai';
import { ApiException } from '@kubernetes/client-node';
import { errorLine, isAbortError } from '../../src/operator/log-line.js';

const headers = { 'audit-id': '28388710-decc-4a0f-b6c9-cdfeb809daa3', 'content-type': 'application/json', 'x-kubernetes-pf-flowschema-uid': '564425d3' };
const status = (code: number, reason: string, message: string) => JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });

describe('operator: one log line per error', () => {
  const cases: { name: string; err: unknown; line: string }[] = [
    { name: 'an API error by status code, reason and the Status message', err: new ApiException(429, 'Unknown API Status Code!', status(429, 'TooManyRequests', 'storage is (re)initializing'), headers), line: 'HTTP 429 TooManyRequests: storage is (re)initializing' },
    { name: 'an API error whose body is already parsed', err: new ApiException(409, 'Conflict', { kind: 'Status', reason: 'Conflict', message: 'the object has been modified' }, headers), line: 'HTTP 409 Conflict: the object has been modified' },
    { name: 'an API error without a Status body', err: new ApiException(401, 'Unauthorized', undefined, headers), line: 'HTTP 401' },
    { name: 'an API error whose body is not a Status', err: new ApiException(502, 'Unknown API Status Code!', '<html>bad gateway</html>', headers), line: 'HTTP 502' },
    { name: 'a watch error (status code and text)', err: Object.assign(new Error('Gone'), { statusCode: 410 }), line: 'HTTP 410 Gone' },
    { name: 'a plain error on several lines', err: new Error('first\n  second'), line: 'first second' },
    { name: 'something thrown that is no Error', err: 'text', line: 'text' },
  ];
  for (const c of cases)
    it(`writes ${c.name} as one line without headers or body`, () => {
      const line = errorLine(c.err);
      expect(line).to.equal(c.line);
      expect(line).to.not.match(/\n|audit-id|Headers|HTTP-Code/);
    });

  it('cuts a very long message', () => {
    expect(errorLine(new Error('x'.repeat(1000))).length).to.equal(200);
  });

  it('tells an aborted request from a failure', () => {
    expect(isAbortError(new DOMException('This operation was aborted', 'AbortError'))).to.equal(true);
    expect(isAbortError(Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }))).to.equal(true);
    expect(isAbortError(new Error('connect ECONNREFUSED 127.0.0.1:16443'))).to.equal(false);
  });
});
