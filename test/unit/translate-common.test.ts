import { expect } from 'chai';
import { resolveServiceBackend } from '../../src/translate/common/backend.js';
import { indexSnapshot } from '../../src/translate/common/index-snapshot.js';
import { snapshotFromObjects } from '../../src/translate/index.js';

const service = (name: string, spec: object) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec });
const indexOf = (...objects: unknown[]) => indexSnapshot(snapshotFromObjects(objects).snapshot);

describe('resolveServiceBackend', () => {
  it('prefers the TCP port when a number is listed for UDP first and TCP second', () => {
    const index = indexOf(service('dns', { ports: [{ name: 'dns-udp', port: 53, protocol: 'UDP' }, { name: 'dns-tcp', port: 53, protocol: 'TCP' }] }));
    const r = resolveServiceBackend(index, 'default', 'dns', 53);
    expect(r.ok && r.backend.portName).to.equal('dns-tcp');
  });

  it('refuses a port that is UDP only with reason UnsupportedProtocol', () => {
    const index = indexOf(service('dns', { ports: [{ port: 53, protocol: 'UDP' }] }));
    const r = resolveServiceBackend(index, 'default', 'dns', 53);
    expect(r.ok ? 'ok' : r.reason).to.equal('UnsupportedProtocol');
  });

  it('prefers the UDP port for a udp backend when a number is listed for TCP first and UDP second', () => {
    const index = indexOf(service('dns', { ports: [{ name: 'dns-tcp', port: 53, protocol: 'TCP' }, { name: 'dns-udp', port: 53, protocol: 'UDP' }] }));
    const r = resolveServiceBackend(index, 'default', 'dns', 53, 'udp');
    expect(r.ok && [r.backend.portName, r.backend.protocol]).to.deep.equal(['dns-udp', 'udp']);
  });

  it('refuses a TCP-only port for a udp backend with reason UnsupportedProtocol', () => {
    const index = indexOf(service('web', { ports: [{ port: 80 }] }));
    const r = resolveServiceBackend(index, 'default', 'web', 80, 'udp');
    expect(r.ok ? 'ok' : [r.reason, r.message]).to.deep.equal(['UnsupportedProtocol', 'Service default/web port 80 is TCP; a UDP route needs a UDP port']);
  });

  const cases: [string, unknown, number | string | undefined, string][] = [
    ['a missing Service', undefined, 80, 'ServiceNotFound'],
    ['an ExternalName Service', service('s', { type: 'ExternalName', externalName: 'example.com' }), 80, 'ExternalNameService'],
    ['a missing port number', service('s', { ports: [{ port: 81 }] }), 80, 'ServicePortNotFound'],
    ['a missing port name', service('s', { ports: [{ name: 'http', port: 80 }] }), 'web', 'ServicePortNotFound'],
  ];
  for (const [what, svc, port, reason] of cases) {
    it(`refuses ${what} with reason ${reason}`, () => {
      const r = resolveServiceBackend(svc ? indexOf(svc) : indexOf(), 'default', 's', port);
      expect(r.ok ? 'ok' : r.reason).to.equal(reason);
    });
  }

  it('maps appProtocol to the backend protocol', () => {
    const index = indexOf(service('s', { ports: [{ name: 'g', port: 9000, appProtocol: 'kubernetes.io/h2c' }, { name: 'w', port: 9001, appProtocol: 'kubernetes.io/ws' }] }));
    const g = resolveServiceBackend(index, 'default', 's', 'g');
    const w = resolveServiceBackend(index, 'default', 's', 9001);
    expect([g.ok && g.backend.protocol, w.ok && w.backend.protocol]).to.deep.equal(['h2c', 'ws']);
  });
});

describe('indexSnapshot', () => {
  it('picks the same one of two same-named Services whatever their order', () => {
    const a = service('s', { ports: [{ port: 80 }] });
    const b = service('s', { ports: [{ port: 81 }] });
    const one = indexOf(a, b).services.get('default/s');
    const two = indexOf(b, a).services.get('default/s');
    expect(one).to.deep.equal(two);
  });
});
