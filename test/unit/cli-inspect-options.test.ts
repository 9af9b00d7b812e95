import { expect } from 'chai';
import { resolveInspectOptions } from '../../src/cli/inspect-options.js';
import { UsageError } from '../../src/cli/errors.js';

describe('tuna http/run --inspect flags', () => {
  const defaults = { bodyLimit: 65_536, maxRequests: 250, showSecrets: false };

  it('is on at 127.0.0.1:4040 by default, off with --inspect=false, moved with --inspect ADDR', () => {
    const table: [Record<string, unknown>, NodeJS.ProcessEnv, { host: string; port: number } | undefined][] = [
      [{}, {}, { host: '127.0.0.1', port: 4040 }],
      [{ inspect: 'false' }, {}, undefined],
      [{ inspect: 'off' }, {}, undefined],
      [{ inspect: 'true' }, {}, { host: '127.0.0.1', port: 4040 }],
      [{ inspect: '4041' }, {}, { host: '127.0.0.1', port: 4041 }],
      [{ inspect: '127.0.0.1:0' }, {}, { host: '127.0.0.1', port: 0 }],
      [{ inspect: 'localhost:5000' }, {}, { host: 'localhost', port: 5000 }],
      [{ inspect: '[::1]:4040' }, {}, { host: '::1', port: 4040 }],
      [{}, { TUNA_INSPECT: 'false' }, undefined],
      [{}, { TUNA_INSPECT: '127.0.0.2:4050' }, { host: '127.0.0.2', port: 4050 }],
      [{ inspect: '4042' }, { TUNA_INSPECT: 'false' }, { host: '127.0.0.1', port: 4042 }],
    ];
    for (const [values, env, expected] of table) {
      const got = resolveInspectOptions(values, env, 'http');
      expect(got, JSON.stringify([values, env])).to.deep.equal(expected === undefined ? undefined : { ...expected, ...defaults });
    }
  });

  it('takes the body cap, the number kept and --inspect-show-secrets', () => {
    expect(resolveInspectOptions({ 'inspect-body-limit': '1024', 'inspect-max-requests': '10', 'inspect-show-secrets': true }, {}, 'run')).to.deep.equal({
      host: '127.0.0.1',
      port: 4040,
      bodyLimit: 1024,
      maxRequests: 10,
      showSecrets: true,
    });
  });

  it('refuses a non-loopback address and bad numbers, naming the flag', () => {
    const table: [Record<string, unknown>, RegExp][] = [
      [{ inspect: '0.0.0.0:4040' }, /--inspect "0.0.0.0:4040" must be a loopback address/],
      [{ inspect: '192.168.1.2:4040' }, /--inspect .* must be a loopback address/],
      [{ inspect: 'nonsense' }, /--inspect "nonsense" must be false, true, PORT or HOST:PORT/],
      [{ inspect: '70000' }, /--inspect "70000" must be/],
      [{ 'inspect-body-limit': '-1' }, /--inspect-body-limit "-1" must be a whole number from 0 to 16777216/],
      [{ 'inspect-max-requests': '0' }, /--inspect-max-requests "0" must be a whole number from 1 to 100000/],
    ];
    for (const [values, message] of table) {
      expect(() => resolveInspectOptions(values, {}, 'http'), JSON.stringify(values))
        .to.throw(UsageError)
        .with.property('message')
        .that.matches(message);
    }
  });
});
