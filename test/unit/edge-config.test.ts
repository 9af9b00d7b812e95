import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeEdgeConfig, loadEdgeConfig } from '../../src/edge/config.js';
import { hashTunnelKey } from '../../src/edge/tunnels/authority.js';

describe('edge config file', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tuna-edge-config-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads YAML with key digests and PEM files relative to the file', async () => {
    writeFileSync(join(dir, 'tunnel.crt'), 'CERT');
    writeFileSync(join(dir, 'tunnel.key'), 'KEY');
    const digest = hashTunnelKey('k');
    writeFileSync(
      join(dir, 'edge.yaml'),
      `listen:\n  tunnel: {port: 7000, tls: {certFile: tunnel.crt, keyFile: tunnel.key}}\n  http: {port: 8080}\n` +
        `bindings:\n  - id: binding/host/a.test\n    kind: host\n    hostnames: [a.test]\n    keys: [{sha256: ${digest}, maxConnections: 2}]\n`,
    );
    const config = await loadEdgeConfig(join(dir, 'edge.yaml'));
    expect(config.listen.tunnel.tls).to.deep.include({ cert: 'CERT', key: 'KEY' });
    expect(config.bindings?.[0]?.keys?.[0]).to.deep.equal({ sha256: digest, maxConnections: 2 });
  });

  it('accepts http1Forwarding spliced or per-request and names any other value', () => {
    const doc = (mode: unknown): unknown => ({ listen: { tunnel: { port: 1 } }, http1Forwarding: mode });
    expect(decodeEdgeConfig(doc('spliced')).http1Forwarding).to.equal('spliced');
    expect(decodeEdgeConfig(doc('per-request')).http1Forwarding).to.equal('per-request');
    expect(() => decodeEdgeConfig(doc('both'))).to.throw(/http1Forwarding: invalid value "both"/);
  });

  it('names the path of an invalid field', () => {
    expect(() => decodeEdgeConfig({ listen: { tunnel: { port: 'x' } } })).to.throw(/listen\.tunnel\.port/);
  });

  it('rejects a key that is not a SHA-256 hex digest, so clear keys never sit in the file', () => {
    const doc = { listen: { tunnel: { port: 1 } }, bindings: [{ id: 'b', kind: 'host', keys: [{ sha256: 'my-secret-key' }] }] };
    expect(() => decodeEdgeConfig(doc)).to.throw(/sha256 must be 64 lowercase hex digits/);
  });

  it('rejects a dedicated address outside the address pool', () => {
    const doc = (address: string): unknown => ({
      listen: { tunnel: { port: 1 }, addressPool: '127.77.0.0/16' },
      bindings: [{ id: 'gw', kind: 'address', address }],
    });
    expect(() => decodeEdgeConfig(doc('127.78.0.1'))).to.throw(/outside 127\.77\.0\.0\/16/);
    expect(decodeEdgeConfig(doc('127.77.200.3')).bindings?.[0]?.address).to.equal('127.77.200.3');
  });

  it('accepts public connection limits and names a limit that is not a whole number above 0', () => {
    const doc = (value: unknown): unknown => ({ listen: { tunnel: { port: 1 } }, limits: { public: { firstByteTimeoutMs: 500, maxConnectionsPerAddress: value } } });
    expect(decodeEdgeConfig(doc(10)).limits?.public).to.deep.equal({ firstByteTimeoutMs: 500, maxConnectionsPerAddress: 10 });
    expect(() => decodeEdgeConfig(doc(0))).to.throw(/limits\.public\.maxConnectionsPerAddress: must be a whole number above 0/);
    expect(() => decodeEdgeConfig(doc(1.5))).to.throw(/limits\.public\.maxConnectionsPerAddress/);
    expect(() => decodeEdgeConfig(doc('many'))).to.throw(/limits\.public\.maxConnectionsPerAddress/);
  });
  it('accepts tunnel listener limits and the raw and fairness limits, and names one that is not a whole number above 0', () => {
    const doc = (value: unknown): unknown => ({
      listen: { tunnel: { port: 1 } },
      limits: { public: { tcpIdleTimeoutMs: 1000, maxInFlightPerClient: 8 }, tunnelListener: { headersTimeoutMs: 500, maxConnectionsPerAddress: value } },
    });
    const limits = decodeEdgeConfig(doc(10)).limits;
    expect(limits?.tunnelListener).to.deep.equal({ headersTimeoutMs: 500, maxConnectionsPerAddress: 10 });
    expect(limits?.public).to.deep.equal({ tcpIdleTimeoutMs: 1000, maxInFlightPerClient: 8 });
    expect(() => decodeEdgeConfig(doc(0))).to.throw(/limits\.tunnelListener\.maxConnectionsPerAddress: must be a whole number above 0/);
    expect(() => decodeEdgeConfig(doc(2.5))).to.throw(/limits\.tunnelListener\.maxConnectionsPerAddress/);
    const fairness = { listen: { tunnel: { port: 1 } }, limits: { public: { maxInFlightPerClient: 0 } } };
    expect(() => decodeEdgeConfig(fairness)).to.throw(/limits\.public\.maxInFlightPerClient: must be a whole number above 0/);
  });
});
