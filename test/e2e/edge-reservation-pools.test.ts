import { expect } from 'chai';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { waitUntil } from '../support/tunnel-harness.js';
import { api, connectAgent, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';

/** freePort finds a loopback port nobody holds now (the edge then binds it by number). */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** eventually polls an async condition, 10 ms apart, for at most 5 s. */
async function eventually(condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not met in 500 tries');
}

async function tcpRoundTrip(port: number, payload: string): Promise<string> {
  const socket = connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  socket.end(payload);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A tenant cannot stop the edge from starting. */
describe('edge hardening: reservations stay inside the pools and the edge starts whatever the store holds', function () {
  this.timeout(60_000);
  let store: Store;
  let running: StoreEdge | undefined;
  let blocker: Server | undefined;
  const sessions: TunnelSession[] = [];

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.close().catch(() => undefined);
    if (running) await running.edge.close();
    running = undefined;
    if (blocker) await new Promise((resolve) => blocker!.close(resolve));
    blocker = undefined;
    await store.close();
  });

  it('starts on a store that already holds a reservation on its own HTTP port, answers its API and counts the failed listener', async () => {
    const httpPort = await freePort();
    const seeded = await seedAccount(store);
    // A row from before the pool check: the store itself does not know the edge's ports.
    await store.createReservation({ accountId: seeded.accountId, spec: { kind: 'tcp-port', port: httpPort } }, 'test');
    const config = storeEdgeConfig('unused');
    config.listen.http = { host: '127.0.0.1', port: httpPort };
    running = await startStoreEdge(store, config);
    const info = await api(running.controlPort, 'GET', '/v1/edge', seeded.reservationsToken);
    expect(info.status).to.equal(200);
    expect(running.edge.address().bindings.has(`binding/tcp-port/${httpPort}`)).to.equal(false);
    expect(running.logs.some((l) => l.includes(`binding/tcp-port/${httpPort}`))).to.equal(true);
    const metrics = await running.edge.metrics.render(running.edge.registry);
    expect(metrics).to.match(/^tuna_edge_binding_listener_failures_total [1-9]/m);
    expect(metrics).to.include('tuna_edge_binding_listeners_failing 1');
  });

  it('opens the other listeners when one cannot bind, serves them, and binds the failed one on a retry once its port is free', async () => {
    const seeded = await seedAccount(store);
    blocker = createServer().listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const blockedPort = (blocker.address() as AddressInfo).port;
    const freeOne = await freePort();
    await store.createReservation({ accountId: seeded.accountId, spec: { kind: 'tcp-port', port: blockedPort } }, 'test');
    const open = (await store.createReservation({ accountId: seeded.accountId, spec: { kind: 'tcp-port', port: freeOne } }, 'test')).reservation;
    const minted = await store.mintTunnelKey(
      { accountId: seeded.accountId, reservationId: open.id, protocol: 'tcp', maxConnections: 1, expiresAt: Date.now() + 3_600_000 },
      'test',
    );
    running = await startStoreEdge(store);
    const bindings = running.edge.address().bindings;
    expect(bindings.has(`binding/tcp-port/${freeOne}`)).to.equal(true);
    expect(bindings.has(`binding/tcp-port/${blockedPort}`)).to.equal(false);
    sessions.push(await connectAgent(running.endpoint, `binding/tcp-port/${freeOne}`, minted.token));
    expect(await tcpRoundTrip(freeOne, 'still served')).to.equal('still served');
    // The edge was started with the default 30 s retry; a directory change also retries at once.
    await new Promise((resolve) => blocker!.close(resolve));
    blocker = undefined;
    await api(running.controlPort, 'POST', '/v1/reservations', seeded.reservationsToken, { kind: 'tcp-port' });
    await waitUntil(() => running!.edge.address().bindings.has(`binding/tcp-port/${blockedPort}`));
    expect(await running.edge.metrics.render(running.edge.registry)).to.include('tuna_edge_binding_listeners_failing 0');
  });
  it('reports a listener that failed to bind on its reservation (cause, failures, retry), the other reservation listening, and clears it once bound', async () => {
    const seeded = await seedAccount(store);
    blocker = createServer().listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const blockedPort = (blocker.address() as AddressInfo).port;
    const freeOne = await freePort();
    const blocked = (await store.createReservation({ accountId: seeded.accountId, spec: { kind: 'tcp-port', port: blockedPort } }, 'test')).reservation;
    const open = (await store.createReservation({ accountId: seeded.accountId, spec: { kind: 'tcp-port', port: freeOne } }, 'test')).reservation;
    const before = Date.now();
    running = await startStoreEdge(store);
    type Listener = { address: string; port: number; protocol: string; state: string; error: string | null; failures: number; retryAt: number | null };
    const statusOf = async (id: string): Promise<Listener[]> => {
      const answer = await api(running!.controlPort, 'GET', `/v1/reservations/${id}`, seeded.reservationsToken);
      expect(answer.status).to.equal(200);
      return ((answer.body['reservation'] as { status: { listeners: Listener[] } }).status).listeners;
    };
    const [failed] = await statusOf(blocked.id);
    expect(failed).to.include({ address: '127.0.0.1', port: blockedPort, protocol: 'tcp', state: 'failed', error: 'EADDRINUSE', failures: 1 });
    // the default retry is 30 s after the failed attempt
    expect(failed!.retryAt).to.be.a('number').within(before + 30_000, Date.now() + 30_000);
    expect(await statusOf(open.id)).to.deep.equal([{ address: '127.0.0.1', port: freeOne, protocol: 'tcp', state: 'listening', error: null, failures: 0, retryAt: null }]);
    const listed = await api(running.controlPort, 'GET', '/v1/reservations', seeded.reservationsToken);
    const states = (listed.body['reservations'] as { id: string; status?: { listeners: Listener[] } }[]).map((r) => [r.id, r.status?.listeners.map((l) => l.state)]);
    expect(states).to.have.deep.members([[blocked.id, ['failed']], [open.id, ['listening']]]);
    // still blocked at a retry (a reservation change retries at once): the failures count up
    await api(running.controlPort, 'POST', '/v1/reservations', seeded.reservationsToken, { kind: 'tcp-port' });
    await eventually(async () => ((await statusOf(blocked.id))[0]?.failures ?? 0) >= 2);
    await new Promise((resolve) => blocker!.close(resolve));
    blocker = undefined;
    await api(running.controlPort, 'POST', '/v1/reservations', seeded.reservationsToken, { kind: 'tcp-port' });
    await eventually(async () => (await statusOf(blocked.id))[0]?.state === 'listening');
    expect(await statusOf(blocked.id)).to.deep.equal([{ address: '127.0.0.1', port: blockedPort, protocol: 'tcp', state: 'listening', error: null, failures: 0, retryAt: null }]);
  });
});
