import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { CONTROL_EXITS, controlCliError } from '../../src/cli/control-errors.js';
import * as api from '../../src/control-api/index.js';
import type { ControlAnswerError } from '../../src/control-api/index.js';

const {
  ControlBodyTooLargeError, ControlConflictError, ControlDomainUnverifiedError, ControlError, ControlForbiddenError, ControlInvalidRequestError,
  ControlMethodNotAllowedError, ControlNotFoundError, ControlPortUnavailableError, ControlRateLimitedError, ControlServerError, ControlUnauthorizedError,
  ControlUnsupportedMediaTypeError, errorFromAnswer, toErrorBody,
} = api;

/** The control API's one set of error classes: what the edge answers comes back as the same class, and the CLI has one exit for each. */
describe('control API errors', () => {
  const answered: ControlAnswerError[] = [
    new ControlInvalidRequestError('labels.team: expected string', 'labels.team'),
    new ControlPortUnavailableError('port 22 is outside the address port range 8000-9999', 'ports[0].port'),
    new ControlUnauthorizedError(),
    new ControlForbiddenError(),
    new ControlNotFoundError('reservation not found'),
    new ControlMethodNotAllowedError(['GET', 'POST']),
    new ControlConflictError('web.edge.test is held by another account'),
    new ControlConflictError('every port of the pool is reserved', 'TUNA_STORE_POOL_EXHAUSTED'),
    new ControlDomainUnverifiedError('no TXT record yet'),
    new ControlBodyTooLargeError('request body exceeds 1024 bytes'),
    new ControlUnsupportedMediaTypeError('request body must be application/json'),
    new ControlRateLimitedError(7),
    new ControlServerError(),
  ];

  for (const sent of answered) {
    it(`decodes a ${sent.status} ${sent.code} answer back into ${sent.name} with its message and field`, () => {
      const headers = { retryAfter: sent instanceof ControlRateLimitedError ? String(sent.retryAfterSeconds) : undefined, allow: sent instanceof ControlMethodNotAllowedError ? sent.allow.join(', ') : undefined };
      // The document crosses the wire as JSON.
      const body = (JSON.parse(JSON.stringify(toErrorBody(sent))) as ReturnType<typeof toErrorBody>).error;
      const got = errorFromAnswer(sent.status, body, headers);
      expect(got.constructor).to.equal(sent.constructor);
      expect({ status: got.status, code: got.code, message: got.message, field: got.field }).to.deep.equal({ status: sent.status, code: sent.code, message: sent.message, field: sent.field });
    });
  }

  it('keeps the 429 wait and the 405 methods from the headers, and the scope the call needed on a 403', () => {
    expect((errorFromAnswer(429, {}, { retryAfter: '2.5' }) as api.ControlRateLimitedError).retryAfterSeconds).to.equal(3);
    expect((errorFromAnswer(429, {}, {}) as api.ControlRateLimitedError).retryAfterSeconds).to.equal(undefined);
    expect((errorFromAnswer(405, {}, { allow: 'GET, DELETE' }) as api.ControlMethodNotAllowedError).allow).to.deep.equal(['GET', 'DELETE']);
    expect((errorFromAnswer(403, { code: 'TUNA_CONTROL_FORBIDDEN' }, {}, 'admin') as api.ControlForbiddenError).requiredScope).to.equal('admin');
  });

  it('turns an error page without a document (a proxy in front of the edge) into ControlServerError by its status', () => {
    const got = errorFromAnswer(502, {});
    expect(got).to.be.instanceOf(ControlServerError);
    expect(got).to.include({ status: 502, code: 'TUNA_CONTROL_SERVER' });
  });

  const classes = Object.entries(api).filter(
    ([name, value]) => typeof value === 'function' && value.prototype instanceof ControlError && !['ControlError', 'ControlAnswerError'].includes(name),
  );

  it('exports the error classes every consumer matches on (edge, CLI, operator import only this index)', () => {
    expect(classes.map(([name]) => name).sort()).to.include.members(['ControlBadAnswerError', 'ControlUnreachableError', ...answered.map((e) => e.name)]);
  });

  it('gives every control API error class exactly one row in the CLI table of exits, with a code docs/cli.md documents', () => {
    const doc = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    for (const [name, type] of classes) {
      const rows = CONTROL_EXITS.filter((r) => r.type === type);
      expect(rows, name).to.have.length(1);
      expect(rows[0]!.code, name).to.match(/^TUNA_CLI_CONTROL_[A-Z_]+$/);
      expect(doc, `${rows[0]!.code} in docs/cli.md`).to.contain(`\`${rows[0]!.code}\``);
    }
  });

  it('leaves errors that are not the control API\'s to the CLI\'s other handlers', () => {
    expect(controlCliError(new Error('boom'))).to.equal(undefined);
    expect(controlCliError(Object.assign(new Error('x'), { code: 'TUNA_CONTROL_INTERNAL' }))).to.equal(undefined);
  });
});
