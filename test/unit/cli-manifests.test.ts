import { expect } from 'chai';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '../../src/agent/agent.js';
import type { TunnelControl } from '../../src/agent/agent.js';
import { ManifestError } from '../../src/cli/errors.js';
import { translateObjects } from '../../src/agent/state.js';
import { loadManifestObjects } from '../../src/cli/manifests.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { Binding } from '../../src/model/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';

describe('cli file provider', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tuna-manifests-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads every YAML and JSON document recursively, expands Lists and skips hidden files', async () => {
    mkdirSync(join(dir, 'sub'));
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, 'a.yaml'), 'kind: Service\napiVersion: v1\nmetadata: {name: a}\n---\nkind: Service\napiVersion: v1\nmetadata: {name: b}\n');
    writeFileSync(join(dir, 'sub', 'c.json'), JSON.stringify({ kind: 'List', apiVersion: 'v1', items: [{ kind: 'Service', apiVersion: 'v1', metadata: { name: 'c' } }] }));
    writeFileSync(join(dir, '.git', 'd.yaml'), 'kind: Service\napiVersion: v1\nmetadata: {name: hidden}\n');
    writeFileSync(join(dir, 'notes.txt'), 'kind: Service');
    const names = (await loadManifestObjects([dir])).map((o) => (o as { metadata: { name: string } }).metadata.name);
    expect(names).to.deep.equal(['a', 'b', 'c']);
  });

  it('names the file and line of a YAML error', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'kind: Service\nmetadata: {name: [\n');
    const err = await loadManifestObjects([dir]).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ManifestError);
    expect((err as Error).message).to.match(/bad\.yaml:\d+: /);
  });

  it('refuses a folder that does not exist with a clear message', async () => {
    const err = await loadManifestObjects([join(dir, 'missing')]).catch((e: unknown) => e);
    expect((err as Error).message).to.contain('cannot read manifests folder');
  });

  it('takes endpoints from EndpointSlices and key material from TLS Secrets only', () => {
    const state = translateObjects([
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 's', namespace: 'default', labels: { 'kubernetes.io/service-name': 'api' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8081 }],
        endpoints: [{ addresses: ['127.0.0.1'] }, { addresses: ['127.0.0.2'], conditions: { ready: false } }],
      },
      { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'cert', namespace: 'default' }, stringData: { 'tls.crt': 'C', 'tls.key': 'K' } },
      { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'other', namespace: 'default' }, stringData: { 'tls.crt': 'C', 'tls.key': 'K' } },
    ]);
    expect(state.endpoints.get('default/api')?.get('http')).to.deep.equal([{ address: '127.0.0.1', port: 8081 }]);
    expect([...state.certificates.keys()]).to.deep.equal(['default/cert']);
    expect(JSON.stringify(state.graph)).not.to.contain('"K"');
  });
});

describe('cli agent', () => {
  /** RecordingTunnels is a fake TunnelControl that records what it was asked. */
  class RecordingTunnels implements TunnelControl {
    applied: string[][] = [];
    closed = 0;
    apply(bindings: readonly Binding[]): Promise<void> {
      this.applied.push(bindings.map((b) => b.id));
      return Promise.resolve();
    }
    close(): Promise<void> {
      this.closed++;
      return Promise.resolve();
    }
  }

  it('asks the tunnels to change only when bindings change', async () => {
    const tunnels = new RecordingTunnels();
    const plane = new DataPlane({ endpoints: new StaticEndpointResolver() });
    const agent = new Agent(plane, tunnels);
    const first = hostGraph([{ hostname: 'a.test', routes: [httpRoute('x', [serviceBackend('x')])] }]);
    const routesOnly = hostGraph([{ hostname: 'a.test', routes: [httpRoute('y', [serviceBackend('y')])] }]);
    const newHost = hostGraph([{ hostname: 'b.test', routes: [httpRoute('y', [serviceBackend('y')])] }]);
    expect(await agent.apply(first)).to.deep.equal({ tunnelsChanged: true });
    expect(await agent.apply(routesOnly)).to.deep.equal({ tunnelsChanged: false });
    expect(plane.graph()).to.equal(routesOnly);
    expect(await agent.apply(newHost)).to.deep.equal({ tunnelsChanged: true });
    expect(tunnels.applied).to.have.length(2);
    await agent.close();
    expect(tunnels.closed).to.equal(1);
  });
});
