import { expect } from 'chai';
import { resolveTracing } from '../../src/cli/trace-options.js';
import { UsageError } from '../../src/cli/errors.js';

describe('resolveTracing (the trace flags and the OTEL_ variables)', () => {
  it('is off with neither a flag nor a variable, and with empty variables', () => {
    expect(resolveTracing({}, {}, 'http')).to.equal(undefined);
    expect(resolveTracing({}, { OTEL_EXPORTER_OTLP_ENDPOINT: ' ', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' }, 'http')).to.equal(undefined);
  });

  it('takes the flag over the traces variable over the base endpoint plus /v1/traces', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318/', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom' };
    expect(resolveTracing({ 'trace-endpoint': 'https://flag:4318/v1/traces' }, env, 'http')?.endpoint).to.equal('https://flag:4318/v1/traces');
    expect(resolveTracing({}, env, 'http')?.endpoint).to.equal('http://traces:4318/custom');
    expect(resolveTracing({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318/' }, 'http')?.endpoint).to.equal('http://base:4318/v1/traces');
  });

  it('reads the sample share, the service name and the headers, percent-decoded', () => {
    const c = resolveTracing({ 'trace-endpoint': 'http://c:4318/v1/traces', 'trace-sample': '0.25' }, { OTEL_SERVICE_NAME: 'shop', OTEL_EXPORTER_OTLP_HEADERS: 'X-Api-Key=a%20b, tenant=7' }, 'operator');
    expect(c).to.deep.equal({ endpoint: 'http://c:4318/v1/traces', sample: 0.25, serviceName: 'shop', headers: { 'x-api-key': 'a b', tenant: '7' } });
    expect(resolveTracing({ 'trace-endpoint': 'http://c:4318/v1/traces' }, {}, 'run')).to.deep.include({ sample: 1, serviceName: 'tuna-run', headers: {} });
    expect(resolveTracing({ 'trace-endpoint': 'http://c:4318/v1/traces', 'trace-sample': '0' }, {}, 'run')?.sample).to.equal(0);
  });

  it('refuses a malformed header list without printing its values', () => {
    for (const h of ['novalue', '=v', 'bad name=secret-value', 'k=%zz-secret']) {
      let err: unknown;
      try {
        resolveTracing({ 'trace-endpoint': 'http://c:4318/v1/traces' }, { OTEL_EXPORTER_OTLP_HEADERS: h }, 'http');
      } catch (e) {
        err = e;
      }
      expect(err, h).to.be.instanceOf(UsageError);
      expect((err as Error).message).not.to.contain('secret');
    }
  });

  it('refuses other schemes, credentials in the URL, a share outside [0, 1] and a share without an endpoint', () => {
    expect(() => resolveTracing({ 'trace-endpoint': 'grpc://c:4317' }, {}, 'http')).to.throw(UsageError, /http:\/\/ or https:\/\//);
    expect(() => resolveTracing({ 'trace-endpoint': 'http://u:p@c:4318/v1/traces' }, {}, 'http')).to.throw(UsageError, /credentials/);
    expect(() => resolveTracing({ 'trace-endpoint': 'http://c:4318', 'trace-sample': '-0.1' }, {}, 'http')).to.throw(UsageError, /share/);
    expect(() => resolveTracing({ 'trace-sample': '0.1' }, {}, 'http')).to.throw(UsageError, /needs --trace-endpoint/);
  });
});
