import { expect } from 'chai';
import { once } from 'node:events';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { PooledKubeConfig } from '../../src/operator/index.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';

/**
 * The operator's two clients keep their connections: client-node 2.0 opened a new TLS
 * connection to the apiserver for every call, and the control API client one to the edge, which
 * was a third of the operator's CPU in the scale benchmark. Counted here on a TLS server on
 * loopback: connections accepted for a number of calls, not times.
 */
describe('connection pools of the operator clients', function () {
  this.timeout(20_000);
  const { cert, key } = selfSignedCertificate(['127.0.0.1']);
  let server: Server | undefined;
  let connections = 0;
  let requests = 0;

  /** serve answers every request with `body`; `onRequest` may destroy a socket instead (return true). */
  async function serve(body: string, onRequest: (socket: Socket, nth: number) => boolean = () => false): Promise<number> {
    const perSocket = new WeakMap<Socket, number>();
    server = createServer({ cert, key }, (req, res) => {
      requests++;
      const nth = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, nth);
      if (onRequest(req.socket, nth)) return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    server.on('secureConnection', () => connections++);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  }

  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
    connections = 0;
    requests = 0;
  });

  function kubeConfig(config: KubeConfig, port: number): KubeConfig {
    config.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(cert).toString('base64') }],
      users: [{ name: 'u', token: 'not-a-secret' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return config;
  }

  const namespace = JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });

  it('PooledKubeConfig: ten apiserver calls one after another share the pool’s connections', async () => {
    const api = kubeConfig(new PooledKubeConfig(), await serve(namespace)).makeApiClient(CoreV1Api);
    for (let i = 0; i < 10; i++) expect((await api.readNamespace({ name: 'default' })).metadata?.name).to.equal('default');
    expect(requests).to.equal(10);
    // undici may open a second connection while the first is released after its answer, never more one call at a time
    expect(connections).to.be.within(1, 2);
  });

  it('(the reason) client-node’s own KubeConfig opens a connection per call', async () => {
    const api = kubeConfig(new KubeConfig(), await serve(namespace)).makeApiClient(CoreV1Api);
    for (let i = 0; i < 3; i++) await api.readNamespace({ name: 'default' });
    expect(connections).to.equal(3);
  });

  it('PooledKubeConfig: a changed CA is a new pool, not the old connection', async () => {
    const port = await serve(namespace);
    const config = kubeConfig(new PooledKubeConfig(), port);
    for (let i = 0; i < 4; i++) await config.makeApiClient(CoreV1Api).readNamespace({ name: 'default' });
    const first = connections;
    expect(first).to.be.within(1, 2);
    // the same server and CA under another cluster entry: same identity, same pool
    config.loadFromOptions({
      clusters: [{ name: 'c2', server: `https://127.0.0.1:${port}`, caData: Buffer.from(cert).toString('base64') }],
      users: [{ name: 'u', token: 'not-a-secret' }],
      contexts: [{ name: 'x', cluster: 'c2', user: 'u' }],
      currentContext: 'x',
    });
    for (let i = 0; i < 4; i++) await config.makeApiClient(CoreV1Api).readNamespace({ name: 'default' });
    expect(connections).to.equal(first);
    // another CA (both trusted: the server's own certificate and a second one): another pool
    const other = selfSignedCertificate(['127.0.0.2']).cert;
    config.loadFromOptions({
      clusters: [{ name: 'c3', server: `https://127.0.0.1:${port}`, caData: Buffer.from(`${cert}\n${other}`).toString('base64') }],
      users: [{ name: 'u', token: 'not-a-secret' }],
      contexts: [{ name: 'x', cluster: 'c3', user: 'u' }],
      currentContext: 'x',
    });
    await config.makeApiClient(CoreV1Api).readNamespace({ name: 'default' });
    expect(connections).to.equal(first + 1);
  });

  it('ControlClient: five calls share one TLS connection', async () => {
    const port = await serve('{"reservations":[]}');
    const client = new ControlClient({ url: new URL(`https://127.0.0.1:${port}`), ca: cert }, 'tuna_ak_test');
    for (let i = 0; i < 5; i++) expect(await client.listReservations()).to.deep.equal({ reservations: [] });
    client.close();
    expect(requests).to.equal(5);
    expect(connections).to.equal(1);
  });

  it('ControlClient: a pooled connection the edge drops as a call takes it is replaced, and the call answers', async () => {
    // every connection's second request is dropped unanswered, as a server closing an idle connection does
    const port = await serve('{"reservations":[]}', (_socket, nth) => nth === 2);
    const client = new ControlClient({ url: new URL(`https://127.0.0.1:${port}`), ca: cert }, 'tuna_ak_test');
    expect(await client.listReservations()).to.deep.equal({ reservations: [] });
    expect(await client.listReservations()).to.deep.equal({ reservations: [] });
    client.close();
    expect(requests).to.equal(3); // the dropped one, then the same call on a new connection
    expect(connections).to.equal(2);
  });

  it('ControlClient: a new connection that fails is an error, not a retry', async () => {
    const port = await serve('{"reservations":[]}', () => true);
    const client = new ControlClient({ url: new URL(`https://127.0.0.1:${port}`), ca: cert }, 'tuna_ak_test');
    const err = await client.listReservations().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    client.close();
    expect(err?.message).to.match(/cannot reach https:\/\/127\.0\.0\.1:\d+/);
    expect(requests).to.equal(1);
  });
});
