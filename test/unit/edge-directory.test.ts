import { expect } from 'chai';
import { BindingIndex, StaticBindingDirectory } from '../../src/edge/tunnels/directory.js';
import type { EdgeBinding } from '../../src/edge/tunnels/directory.js';

const bindings: EdgeBinding[] = [
  { id: 'exact', kind: 'host', hostnames: ['app.example.test'], tls: 'edge' },
  { id: 'wild', kind: 'host', hostnames: ['*.example.test'], tls: 'edge' },
  { id: 'deep', kind: 'host', hostnames: ['*.a.example.test'], tls: 'passthrough' },
  { id: 'db', kind: 'tcp-port', hostnames: [], tls: 'edge', port: 15432 },
  { id: 'gw', kind: 'address', hostnames: [], tls: 'edge', address: '127.77.0.9', ports: [{ port: 80, protocol: 'http' }] },
];

describe('edge binding directory', () => {
  const directory = new StaticBindingDirectory(bindings);
  const hosts: [string, string | undefined][] = [
    ['app.example.test', 'exact'],
    ['APP.Example.test', 'exact'],
    ['other.example.test', 'wild'],
    ['x.a.example.test', 'deep'],
    ['y.x.a.example.test', 'deep'],
    // a wildcard reaches one or more labels at the edge; an Ingress binding's
    // data plane narrows it to one (test/unit/host-names-edge-and-dataplane.test.ts)
    ['x.y.b.example.test', 'wild'],
    // the data plane's normal form: no trailing dot, no port, any case
    ['app.example.test.', 'exact'],
    ['App.Example.Test.:8443', 'exact'],
    ['other.example.test.', 'wild'],
    ['example.test', undefined],
    ['unknown.test', undefined],
  ];
  for (const [host, want] of hosts) {
    it(`resolves host ${host} to ${want ?? 'nothing'} (exact first, then the longest wildcard)`, () => {
      expect(directory.byHost(host)?.id).to.equal(want);
    });
  }

  it('resolves tcp ports and dedicated addresses', () => {
    expect(directory.byPort(15432)?.id).to.equal('db');
    expect(directory.byPort(1)).to.equal(undefined);
    expect(directory.byAddress('127.77.0.9')?.id).to.equal('gw');
  });

  it('notifies subscribers when the bindings are replaced', () => {
    const d = new StaticBindingDirectory(bindings);
    let calls = 0;
    const off = d.subscribe(() => calls++);
    d.replace([]);
    off();
    d.replace(bindings);
    expect(calls).to.equal(1);
    expect(d.byHost('app.example.test')?.id).to.equal('exact');
  });

  it('serves a repeated id of the config as it always did: the later binding takes the id, the earlier keeps its names', () => {
    const d = new StaticBindingDirectory([
      { id: 'twice', kind: 'host', hostnames: ['first.example.test'], tls: 'edge' },
      { id: 'twice', kind: 'host', hostnames: ['second.example.test'], tls: 'passthrough' },
    ]);
    expect(d.byId('twice')?.hostnames).to.deep.equal(['second.example.test']);
    expect(d.byHost('first.example.test')?.tls).to.equal('edge');
    expect(d.byHost('second.example.test')?.tls).to.equal('passthrough');
    expect(d.list()).to.have.length(1);
  });

  it('shares its index with the store: set replaces every entry of an id, delete removes only its own', () => {
    const index = BindingIndex.of(bindings);
    index.set({ id: 'exact', kind: 'host', hostnames: ['moved.example.test'], tls: 'edge' });
    expect(index.byHost('app.example.test')?.id).to.equal('wild');
    expect(index.byHost('moved.example.test')?.id).to.equal('exact');
    const list = index.list();
    expect(index.list()).to.equal(list);
    index.delete('db');
    expect(index.byPort(15432)).to.equal(undefined);
    expect(index.list()).to.not.equal(list);
    expect(index.list().map((b) => b.id)).to.deep.equal(['wild', 'deep', 'gw', 'exact']);
  });
});
