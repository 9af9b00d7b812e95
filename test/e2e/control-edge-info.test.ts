import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { ControlClient, ControlUnauthorizedError } from '../../src/control-api/index.js';
import type { ApiKeyScope } from '../../src/control-api/index.js';
import { startEdge } from '../../src/edge/index.js';
import type { EdgeConfigFile, EdgeServer } from '../../src/edge/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** GET /v1/edge against a store-mode edge on 127.0.0.1: what a client learns about the edge it talks to. */
describe('control API: GET /v1/edge', function () {
  this.timeout(30_000);
  let store: Store;
  let edge: EdgeServer | undefined;
  let accountId: string;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    accountId = (await store.createAccount({ name: 'acme' }, 'test')).id;
  });
  afterEach(async () => {
    await edge?.close();
    edge = undefined;
    await store.close();
  });

  async function start(config: EdgeConfigFile): Promise<URL> {
    edge = await startEdge(config, { store });
    return new URL(`http://127.0.0.1:${edge.address().tunnel.port}`);
  }

  async function keyWith(scopes: ApiKeyScope[]): Promise<string> {
    return (await store.createApiKey({ accountId, name: scopes.join('+'), scopes }, 'test')).token;
  }

  it('tells the base domain, both pools with the address ports, the bound HTTP and HTTPS ports, scheme https and the version', async () => {
    const url = await start({
      listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 }, https: { host: '127.0.0.1', port: 0 } },
      store: { url: 'unused', baseDomain: 'edge.test', portPool: { first: 41000, last: 41009 }, addressPool: '127.77.0.0/29' },
    });
    const { edge: info } = await new ControlClient({ url }, await keyWith(['reservations'])).describeEdge();
    const bound = edge!.address();
    expect(info).to.deep.equal({
      version: packageVersion,
      baseDomain: 'edge.test',
      portPool: { first: 41000, last: 41009 },
      addressPool: { range: '127.77.0.0/29', ports: [{ port: 80, protocol: 'http' }, { port: 443, protocol: 'tls' }] },
      http: { port: bound.http!.port },
      https: { port: bound.https!.port },
      scheme: 'https',
      tcpHost: '127.0.0.1',
      addressPortRange: null,
    });
    expect(info.http!.port).to.be.greaterThan(0);
  });

  it('says null for what the edge does not have: no pools, no HTTPS listener, scheme http; configured address ports are reported', async () => {
    const url = await start({
      listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
      store: { url: 'unused', baseDomain: 'tuna.example' },
    });
    const { edge: info } = await new ControlClient({ url }, await keyWith(['tunnels'])).describeEdge();
    expect(info).to.deep.include({ baseDomain: 'tuna.example', portPool: null, addressPool: null, https: null, scheme: 'http' });
    expect(info.http).to.deep.equal({ port: edge!.address().http!.port });

    await edge!.close();
    const withPorts = await start({
      listen: { tunnel: { host: '127.0.0.1', port: 0 } },
      store: { url: 'unused', baseDomain: 'tuna.example', addressPool: '127.77.0.8/29', addressPorts: [{ port: 5432, protocol: 'tcp' }] },
    });
    const { edge: bare } = await new ControlClient({ url: withPorts }, await keyWith(['admin'])).describeEdge();
    expect(bare).to.deep.include({ addressPool: { range: '127.77.0.8/29', ports: [{ port: 5432, protocol: 'tcp' }] }, http: null, https: null, scheme: null, tcpHost: '0.0.0.0' });
  });

  it('answers any valid API key of any scope, and 401 to a wrong key or a tunnel key', async () => {
    const url = await start({ listen: { tunnel: { host: '127.0.0.1', port: 0 } }, store: { url: 'unused', baseDomain: 'edge.test' } });
    for (const scopes of [['reservations'], ['tunnels'], ['admin']] as ApiKeyScope[][]) {
      const { edge: info } = await new ControlClient({ url }, await keyWith(scopes)).describeEdge();
      expect(info.baseDomain, scopes.join()).to.equal('edge.test');
    }
    const reservation = (await store.createReservation({ accountId, spec: { kind: 'tcp-port', port: 41001 } }, 'test')).reservation;
    const tunnelKey = (await store.mintTunnelKey({ accountId, reservationId: reservation.id, protocol: 'tcp', maxConnections: 1, expiresAt: Date.now() + 60_000 }, 'test')).token;
    const valid = await keyWith(['tunnels']);
    for (const token of [tunnelKey, `${valid.slice(0, -4)}AAAA`]) {
      const err = await new ControlClient({ url }, token).describeEdge().then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(ControlUnauthorizedError);
    }
  });
});
