import { expect } from 'chai';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { http1, waitUntil } from '../support/tunnel-harness.js';
import { BASE_DOMAIN, api, connectAgent, refusalStatus, reserveAndMint, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';

async function tcpRoundTrip(host: string, port: number, payload: string): Promise<string> {
  const socket = connect({ host, port });
  await once(socket, 'connect');
  socket.end(payload);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('edge store mode: serving reservations', () => {
  let store: Store;
  let running: StoreEdge;
  const sessions: TunnelSession[] = [];

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store, storeEdgeConfig('unused', { addressPorts: [{ port: 0, protocol: 'http' }] }));
  });

  afterEach(async () => {
    for (const s of sessions.splice(0)) s.destroy();
    await running.edge.close();
    await store.close();
  });

  it('routes a subdomain reserved through the control API to the tunnel opened with its key', async () => {
    const { reservationsToken } = await seedAccount(store);
    const t = await reserveAndMint(running.controlPort, reservationsToken, { kind: 'domain', hostname: `shop.${BASE_DOMAIN}` }, { protocol: 'http' });
    expect(t.bindingId).to.equal(`binding/host/shop.${BASE_DOMAIN}`);
    sessions.push(await connectAgent(running.endpoint, t.bindingId, t.token));
    const res = await http1(running.httpPort, `shop.${BASE_DOMAIN}`, '/hello');
    expect(res.status).to.equal(200);
    expect((JSON.parse(res.body.toString('utf8')) as { headers: Record<string, string> }).headers).to.have.property(':path', '/hello');
    const unknown = await http1(running.httpPort, `other.${BASE_DOMAIN}`, '/');
    expect(unknown.status).to.equal(404);
  });

  it('opens a TCP listener for a tcp-port reservation and relays bytes through the tunnel', async () => {
    const { reservationsToken } = await seedAccount(store);
    const t = await reserveAndMint(running.controlPort, reservationsToken, { kind: 'tcp-port', name: 'default/db' }, { protocol: 'tcp' });
    await waitUntil(() => running.edge.address().bindings.has(t.bindingId));
    expect(running.edge.address().bindings.get(t.bindingId)![0]!.port).to.equal(Number(t.value));
    sessions.push(await connectAgent(running.endpoint, t.bindingId, t.token));
    expect(await tcpRoundTrip('127.0.0.1', Number(t.value), 'ping over tcp')).to.equal('ping over tcp');
  });

  it('opens a dedicated-address listener for an address reservation and serves any Host there', async () => {
    const { reservationsToken } = await seedAccount(store);
    const t = await reserveAndMint(running.controlPort, reservationsToken, { kind: 'address', name: 'default/gw' }, { protocol: 'http' });
    await waitUntil(() => running.edge.address().bindings.has(t.bindingId));
    const info = running.edge.address().bindings.get(t.bindingId)![0]!;
    expect(info.address).to.equal(t.value);
    sessions.push(await connectAgent(running.endpoint, t.bindingId, t.token));
    const req = httpRequest({ host: t.value, port: info.port, path: '/gw', headers: { host: 'anything.example' }, agent: false });
    req.end();
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.resume();
    expect(res.statusCode).to.equal(200);
  });

  it('closes the listener of a released tcp-port reservation', async () => {
    const { reservationsToken } = await seedAccount(store);
    const t = await reserveAndMint(running.controlPort, reservationsToken, { kind: 'tcp-port' }, { protocol: 'tcp' });
    await waitUntil(() => running.edge.address().bindings.has(t.bindingId));
    const released = await api(running.controlPort, 'DELETE', `/v1/reservations/${t.reservationId}`, reservationsToken);
    expect(released.status).to.equal(200);
    await waitUntil(() => !running.edge.address().bindings.has(t.bindingId));
  });

  it('admits at most maxConnections concurrent handshakes of one key and refuses the rest with 429', async () => {
    const { reservationsToken } = await seedAccount(store);
    const t = await reserveAndMint(running.controlPort, reservationsToken, { kind: 'domain', hostname: `cap.${BASE_DOMAIN}` }, { protocol: 'http', maxConnections: 2 });
    const statuses = await Promise.all([0, 1, 2, 3, 4].map(async () => {
      try {
        sessions.push(await connectAgent(running.endpoint, t.bindingId, t.token));
        return 101;
      } catch (err) {
        return (err as { statusCode?: number }).statusCode ?? 0;
      }
    }));
    expect(statuses.filter((s) => s === 101)).to.have.length(2);
    expect(statuses.filter((s) => s === 429)).to.have.length(3);
  });

  it('lets an API key with scope tunnels start a tunnel of its own account only', async () => {
    const a = await seedAccount(store, 'a');
    const b = await seedAccount(store, 'b');
    const cli = await api(running.controlPort, 'POST', '/v1/api-keys', a.adminToken, { name: 'laptop', scopes: ['tunnels'] });
    expect(cli.status).to.equal(201);
    const mine = await reserveAndMint(running.controlPort, a.reservationsToken, { kind: 'domain', hostname: `mine.${BASE_DOMAIN}` }, { protocol: 'http' });
    const theirs = await reserveAndMint(running.controlPort, b.reservationsToken, { kind: 'domain', hostname: `theirs.${BASE_DOMAIN}` }, { protocol: 'http' });
    const token = cli.body['token'] as string;
    expect(await refusalStatus(running.endpoint, mine.bindingId, token)).to.equal(101);
    expect(await refusalStatus(running.endpoint, theirs.bindingId, token)).to.equal(403);
  });

  it('closes a tunnel opened with a tunnels API key once its reservation is released', async () => {
    const a = await seedAccount(store, 'a');
    const cli = await api(running.controlPort, 'POST', '/v1/api-keys', a.adminToken, { name: 'laptop', scopes: ['tunnels'] });
    const reserved = await api(running.controlPort, 'POST', '/v1/reservations', a.reservationsToken, { kind: 'domain', hostname: `gone.${BASE_DOMAIN}` });
    const id = (reserved.body['reservation'] as { id: string }).id;
    const session = await connectAgent(running.endpoint, `binding/host/gone.${BASE_DOMAIN}`, cli.body['token'] as string);
    sessions.push(session);
    expect((await api(running.controlPort, 'DELETE', `/v1/reservations/${id}`, a.reservationsToken)).status).to.equal(200);
    await session.closed();
    expect(running.edge.registry.all()).to.have.length(0);
  });
});
