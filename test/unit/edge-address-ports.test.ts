import { expect } from 'chai';
import { ControlInvalidRequestError, ControlPortUnavailableError } from '../../src/control-api/index.js';
import { checkAddressPorts } from '../../src/edge/control/address-ports.js';
import type { AddressPortRules, AddressTarget, OwnListener } from '../../src/edge/control/address-ports.js';
import { EdgeConfigError, decodeEdgeConfig } from '../../src/edge/index.js';

const DEFAULT_PORTS = [{ port: 80, protocol: 'http' as const }, { port: 443, protocol: 'tls' as const }];
const OWN: OwnListener[] = [
  { name: 'tunnel', host: '0.0.0.0', port: 8443 },
  { name: 'http', host: '127.77.0.5', port: 8080 },
  { name: 'metrics', host: '127.0.0.1', port: 9100 },
  { name: 'https', host: '::', port: 9443 },
];
const RANGED: AddressPortRules = { addressPorts: DEFAULT_PORTS, addressPortRange: { first: 8000, last: 9999 }, ownListeners: () => OWN };
const UNRANGED: AddressPortRules = { addressPorts: DEFAULT_PORTS, ownListeners: () => OWN };
const AT: AddressTarget = { address: '127.77.0.9' };

function refusal(ports: { port: number; protocol: 'http' | 'https' | 'tls' | 'tcp' | 'udp' }[], target: AddressTarget, rules: AddressPortRules): Error {
  try {
    checkAddressPorts(ports, target, rules);
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a refusal');
}

describe('edge control: the ports an address reservation may ask for', () => {
  it('accepts ports inside store.addressPortRange and returns them as asked (the store sorts)', () => {
    const ports = [{ port: 9300, protocol: 'tcp' as const }, { port: 8081, protocol: 'http' as const }];
    expect(checkAddressPorts(ports, AT, RANGED)).to.deep.equal(ports);
  });

  const OUTSIDE: [string, number, AddressPortRules, RegExp][] = [
    ['below the range', 7999, RANGED, /port 7999 is outside the address port range 8000-9999/],
    ['above the range', 10000, RANGED, /port 10000 is outside the address port range 8000-9999/],
    ['the default 80 with a range that does not hold it', 80, RANGED, /port 80 is outside the address port range 8000-9999/],
    ['any port but addressPorts without a range', 9300, UNRANGED, /port 9300 is outside .*none is configured \(store\.addressPortRange\), so only its addressPorts 80, 443/],
  ];
  for (const [what, port, rules, message] of OUTSIDE) {
    it(`refuses a port ${what} with TUNA_CONTROL_PORT_UNAVAILABLE naming the port and the range`, () => {
      const err = refusal([{ port: rules.addressPortRange ? 8081 : 80, protocol: 'http' }, { port, protocol: 'tcp' }], AT, rules);
      expect(err).to.be.instanceOf(ControlPortUnavailableError);
      expect(err).to.include({ status: 400, code: 'TUNA_CONTROL_PORT_UNAVAILABLE', field: 'ports[1].port' });
      expect(err.message).to.match(message);
    });
  }

  it('accepts the ports of addressPorts, with any protocol, when no range is configured', () => {
    expect(checkAddressPorts([{ port: 443, protocol: 'https' }, { port: 80, protocol: 'http' }], AT, UNRANGED)).to.have.length(2);
  });

  it('refuses a port listed twice, even with two protocols, with TUNA_CONTROL_INVALID naming the second', () => {
    const err = refusal([{ port: 8081, protocol: 'http' }, { port: 9300, protocol: 'tcp' }, { port: 8081, protocol: 'tls' }], AT, RANGED);
    expect(err).to.be.instanceOf(ControlInvalidRequestError);
    expect(err).to.include({ status: 400, code: 'TUNA_CONTROL_INVALID', field: 'ports[2].port' });
    expect(err.message).to.match(/port 8081 is already ports\[0\]/);
  });

  it('takes a udp port beside a TCP protocol on the same number, refuses a second udp, and lets udp share a port with the edge\'s own TCP listener', () => {
    const both = [{ port: 8053, protocol: 'tcp' as const }, { port: 8053, protocol: 'udp' as const }];
    expect(checkAddressPorts(both, AT, RANGED)).to.deep.equal(both);
    const err = refusal([{ port: 8053, protocol: 'udp' }, { port: 8053, protocol: 'udp' }], AT, RANGED);
    expect(err).to.include({ code: 'TUNA_CONTROL_INVALID', field: 'ports[1].port' });
    const ownPort = OWN[0]!.port;
    expect(checkAddressPorts([{ port: ownPort, protocol: 'udp' }], AT, { ...RANGED, addressPortRange: { first: 1, last: 65535 } })).to.have.length(1);
  });

  const OWN_CASES: [string, number, AddressTarget, boolean][] = [
    ['the tunnel listener on 0.0.0.0', 8443, AT, true],
    ['the HTTPS listener on ::', 9443, AT, true],
    ['the HTTP listener on the reserved address itself', 8080, { address: '127.77.0.5' }, true],
    ['the HTTP listener on another address', 8080, AT, false],
    ['the HTTP listener on an address of the pool the address comes from', 8080, { pool: '127.77.0.0/24' }, true],
    ['the HTTP listener on an address outside that pool', 8080, { pool: '127.78.0.0/24' }, false],
    ['the metrics listener on 127.0.0.1 when the reserved address is 127.0.0.1', 9100, { address: '127.0.0.1' }, true],
  ];
  for (const [what, port, target, isRefused] of OWN_CASES) {
    it(`${isRefused ? 'refuses' : 'accepts'} the port of ${what}`, () => {
      if (!isRefused) return void expect(checkAddressPorts([{ port, protocol: 'http' }], target, RANGED)).to.have.length(1);
      const err = refusal([{ port, protocol: 'http' }], target, RANGED);
      expect(err).to.include({ code: 'TUNA_CONTROL_PORT_UNAVAILABLE', field: 'ports[0].port' });
      expect(err.message).to.match(new RegExp(`port ${port} is taken by the edge's own \\w+ listener .*8000-9999`));
    });
  }
});

describe('edge config: store.addressPortRange', () => {
  const config = (range: unknown) => ({
    listen: { tunnel: { port: 8443 } },
    store: { url: ':memory:', baseDomain: 'tuna.test', addressPool: '127.77.0.0/24', addressPortRange: range },
  });

  it('decodes an inclusive range', () => {
    expect(decodeEdgeConfig(config({ first: 8000, last: 9999 })).store?.addressPortRange).to.deep.equal({ first: 8000, last: 9999 });
    expect(decodeEdgeConfig(config({ first: 9300, last: 9300 })).store?.addressPortRange).to.deep.equal({ first: 9300, last: 9300 });
  });

  const BAD: [string, unknown][] = [
    ['first above last', { first: 9999, last: 8000 }],
    ['port 0', { first: 0, last: 100 }],
    ['a port above 65535', { first: 1024, last: 65536 }],
    ['a fraction', { first: 1024.5, last: 2048 }],
    ['a string', '8000-9999'],
    ['a missing last', { first: 8000 }],
  ];
  for (const [what, range] of BAD) {
    it(`refuses ${what}, naming store.addressPortRange`, () => {
      expect(() => decodeEdgeConfig(config(range))).to.throw(EdgeConfigError, /store\.addressPortRange/);
    });
  }
});
