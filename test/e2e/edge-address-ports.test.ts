import { expect } from 'chai';
import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { ControlClient, ControlInvalidRequestError, ControlNotFoundError, ControlPortUnavailableError } from '../../src/control-api/index.js';
import type { ControlError, PortSpec } from '../../src/control-api/index.js';
import type { EdgeConfigFile } from '../../src/edge/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { waitUntil } from '../support/tunnel-harness.js';
import { connectAgent, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { Seeded, StoreEdge } from '../support/edge-store-harness.js';

/**
 * A dedicated address serves exactly the ports its reservation names (POST /v1/reservations
 * `ports`, PUT /v1/reservations/{id}/ports), inside the edge's store.addressPortRange. Each test
 * reserves an address of its own, picked at random in 127.77.100.0-127.77.199.255, and ports
 * found free on it, so a parallel run elsewhere on the machine does not collide.
 */

const RANGE = { first: 1024, last: 65535 };

function randomAddress(): string {
  return `127.77.${100 + Math.floor(Math.random() * 100)}.${1 + Math.floor(Math.random() * 254)}`;
}

/** freePorts finds n ports nobody holds on an address now (the edge then binds them by number). */
async function freePorts(address: string, n: number): Promise<number[]> {
  const probes: Server[] = [];
  for (let i = 0; i < n; i++) {
    const probe = createServer().listen(0, address);
    await once(probe, 'listening');
    probes.push(probe);
  }
  const ports = probes.map((p) => (p.address() as AddressInfo).port);
  await Promise.all(probes.map((p) => new Promise((resolve) => p.close(resolve))));
  return ports;
}

/** connectState says whether a TCP connect to address:port is accepted or refused. */
async function connectState(address: string, port: number): Promise<'accepted' | 'refused'> {
  const socket = connect({ host: address, port });
  try {
    await once(socket, 'connect');
    return 'accepted';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') return 'refused';
    throw err;
  } finally {
    socket.destroy();
  }
}

/** get sends one GET to address:port and answers its status and whether it rode a reused connection. */
async function get(address: string, port: number, agent: Agent | false = false): Promise<{ status: number; isReused: boolean }> {
  const req: ClientRequest = httpRequest({ host: address, port, path: '/gw', headers: { host: 'any.example' }, agent });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  res.resume();
  await once(res, 'end');
  return { status: res.statusCode ?? 0, isReused: req.reusedSocket };
}

async function refusal(call: Promise<unknown>): Promise<ControlError> {
  try {
    await call;
  } catch (err) {
    return err as ControlError;
  }
  throw new Error('expected the edge to refuse');
}

describe('edge store mode: a dedicated address opens exactly the ports its reservation names', function () {
  this.timeout(60_000);
  let store: Store;
  let running: StoreEdge | undefined;
  let seeded: Seeded;
  let client: ControlClient;
  const sessions: TunnelSession[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];

  async function start(extra: Partial<NonNullable<EdgeConfigFile['store']>>, edit?: (config: EdgeConfigFile) => void): Promise<StoreEdge> {
    const config = storeEdgeConfig('unused', { addressPorts: [{ port: 0, protocol: 'http' }], ...extra });
    edit?.(config);
    running = await startStoreEdge(store, config);
    seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    cleanups.push(() => client.close());
    return running;
  }

  /** reserveWithKey reserves `address` with `ports` and connects an agent with an http key for it. */
  async function reserveWithKey(address: string, ports: readonly PortSpec[] | undefined): Promise<{ id: string; bindingId: string }> {
    const { reservation } = await client.reserve({ kind: 'address', address, ...(ports ? { ports: [...ports] } : {}) });
    const minted = await client.mintTunnelKey({ reservationId: reservation.id, protocol: 'http' });
    const bindingId = `binding/address/${address}`;
    sessions.push(await connectAgent(running!.endpoint, bindingId, minted.token));
    return { id: reservation.id, bindingId };
  }

  const listening = (bindingId: string) => (running!.edge.address().bindings.get(bindingId) ?? []).map((a) => a.port).sort((x, y) => x - y);

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) s.destroy();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    if (running) await running.edge.close();
    running = undefined;
    await store.close();
  });

  it('opens a tcp and an http port the reservation names, not the edge\'s addressPorts, and serves HTTP through the agent on one', async () => {
    await start({ addressPortRange: RANGE });
    const address = randomAddress();
    const [tcpPort, httpPort] = (await freePorts(address, 2)) as [number, number];
    const { id, bindingId } = await reserveWithKey(address, [{ port: tcpPort, protocol: 'tcp' }, { port: httpPort, protocol: 'http' }]);
    await waitUntil(() => listening(bindingId).length === 2);
    expect(listening(bindingId)).to.deep.equal([tcpPort, httpPort].sort((x, y) => x - y));
    expect(await connectState(address, tcpPort)).to.equal('accepted');
    expect((await get(address, httpPort)).status).to.equal(200);
    const { reservation } = await client.listReservations().then((r) => ({ reservation: r.reservations.find((x) => x.id === id)! }));
    expect(reservation.ports).to.deep.equal([{ port: tcpPort, protocol: 'tcp' }, { port: httpPort, protocol: 'http' }].sort((x, y) => x.port - y.port));
    expect(reservation.status?.listeners.map((l) => [l.port, l.protocol, l.state])).to.have.deep.members([
      [tcpPort, 'tcp', 'listening'],
      [httpPort, 'http', 'listening'],
    ]);
  });

  it('adds and removes ports with PUT without touching the kept port\'s open connection or the binding\'s tunnel', async () => {
    await start({ addressPortRange: RANGE });
    const address = randomAddress();
    const [kept, removed, added] = (await freePorts(address, 3)) as [number, number, number];
    const { id, bindingId } = await reserveWithKey(address, [{ port: kept, protocol: 'http' }, { port: removed, protocol: 'http' }]);
    await waitUntil(() => listening(bindingId).length === 2);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    expect(await get(address, kept, agent)).to.deep.equal({ status: 200, isReused: false });
    // A client that holds a connection open on the port going away must not hold the change.
    const lingering: Socket = connect({ host: address, port: removed });
    await once(lingering, 'connect');
    cleanups.push(() => void lingering.destroy());
    const tunnels = running!.edge.registry.all().filter((t) => t.bindingId === bindingId);
    expect(tunnels).to.have.length(1);

    const answer = await client.setReservationPorts(id, [{ port: added, protocol: 'tcp' }, { port: kept, protocol: 'http' }]);
    expect(answer.reservation.ports).to.deep.equal([{ port: kept, protocol: 'http' }, { port: added, protocol: 'tcp' }].sort((x, y) => x.port - y.port));
    await waitUntil(() => listening(bindingId).includes(added) && !listening(bindingId).includes(removed));
    expect(listening(bindingId)).to.deep.equal([kept, added].sort((x, y) => x - y));
    expect(await connectState(address, added)).to.equal('accepted');
    expect(await connectState(address, removed)).to.equal('refused');
    expect(lingering.readyState, 'a connection the removed port had accepted runs on').to.equal('open');
    expect(await get(address, kept, agent), 'the second request rides the connection opened before the change').to.deep.equal({ status: 200, isReused: true });
    const after = running!.edge.registry.all().filter((t) => t.bindingId === bindingId);
    expect(after, 'the same tunnel, not a new one').to.have.length(1);
    expect(after[0]).to.equal(tunnels[0]);
    expect(after[0]!.isAvailable).to.equal(true);
    const audit = await store.listAuditEvents({ accountId: seeded.accountId });
    expect(audit.filter((e) => e.action === 'reservation.ports').map((e) => e.targetId)).to.deep.equal([id]);
  });

  it('reports a port asked for with PUT that another process holds as a failed listener (EADDRINUSE) and opens the others', async () => {
    await start({ addressPortRange: RANGE });
    const address = randomAddress();
    const [open] = (await freePorts(address, 1)) as [number];
    const blocker = createServer().listen(0, address);
    await once(blocker, 'listening');
    cleanups.push(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const taken = (blocker.address() as AddressInfo).port;
    const { id, bindingId } = await reserveWithKey(address, []);
    expect(listening(bindingId), 'an empty list opens no port').to.deep.equal([]);
    await client.setReservationPorts(id, [{ port: open, protocol: 'tcp' }, { port: taken, protocol: 'http' }]);
    await waitUntil(() => listening(bindingId).includes(open));
    let listeners: readonly { port: number; state: string; error: string | null }[] = [];
    for (let i = 0; i < 100 && listeners.length < 2; i++) {
      listeners = (await client.listReservations()).reservations.find((r) => r.id === id)?.status?.listeners ?? [];
      if (listeners.length < 2) await new Promise((r) => setTimeout(r, 20));
    }
    expect(listeners.map((l) => [l.port, l.state, l.error])).to.have.deep.members([
      [open, 'listening', null],
      [taken, 'failed', 'EADDRINUSE'],
    ]);
  });

  it('refuses ports outside the range, a port twice, a port 0 and ports on another kind, on POST and PUT alike, with their codes', async () => {
    const address = randomAddress();
    await start({ addressPortRange: { first: 20000, last: 29999 } });
    const outside = await refusal(client.reserve({ kind: 'address', address, ports: [{ port: 20080, protocol: 'http' }, { port: 9300, protocol: 'tcp' }] }));
    expect(outside).to.be.instanceOf(ControlPortUnavailableError);
    expect(outside).to.include({ code: 'TUNA_CONTROL_PORT_UNAVAILABLE', field: 'ports[1].port' });
    expect(outside.message).to.match(/port 9300 is outside the address port range 20000-29999/);
    const twice = await refusal(client.reserve({ kind: 'address', address, ports: [{ port: 20080, protocol: 'http' }, { port: 20080, protocol: 'tls' }] }));
    expect(twice).to.be.instanceOf(ControlInvalidRequestError);
    expect(twice).to.include({ code: 'TUNA_CONTROL_INVALID', field: 'ports[1].port' });
    const zero = await refusal(client.reserve({ kind: 'address', address, ports: [{ port: 0, protocol: 'http' }] }));
    expect(zero).to.include({ code: 'TUNA_CONTROL_INVALID', field: 'ports[0].port' });
    const onTcpPort = await refusal(client.reserve({ kind: 'tcp-port', ports: [{ port: 20080, protocol: 'tcp' }] }));
    expect(onTcpPort).to.include({ code: 'TUNA_CONTROL_INVALID', field: 'ports' });
    expect((await client.listReservations()).reservations, 'nothing was reserved').to.deep.equal([]);

    const { reservation } = await client.reserve({ kind: 'address', address, ports: [{ port: 20080, protocol: 'http' }] });
    const putOutside = await refusal(client.setReservationPorts(reservation.id, [{ port: 80, protocol: 'http' }]));
    expect(putOutside).to.include({ code: 'TUNA_CONTROL_PORT_UNAVAILABLE', field: 'ports[0].port' });
    const tcp = (await client.reserve({ kind: 'tcp-port', port: 21005 })).reservation;
    const putTcp = await refusal(client.setReservationPorts(tcp.id, [{ port: 20081, protocol: 'tcp' }]));
    expect(putTcp).to.include({ status: 400, code: 'TUNA_CONTROL_INVALID', field: 'ports' });
    expect(await refusal(client.setReservationPorts('res_missing', []))).to.be.instanceOf(ControlNotFoundError);
    const other = await seedAccount(store, 'other');
    const stranger = new ControlClient({ url: new URL(`http://127.0.0.1:${running!.controlPort}`) }, other.reservationsToken);
    cleanups.push(() => stranger.close());
    expect(await refusal(stranger.setReservationPorts(reservation.id, [])), 'another account\'s reservation').to.be.instanceOf(ControlNotFoundError);
    expect((await client.listReservations()).reservations.find((r) => r.id === reservation.id)?.ports).to.deep.equal([{ port: 20080, protocol: 'http' }]);
  });

  it('refuses a port that is the edge\'s own listener on the reserved address, naming the port and the range', async () => {
    const address = randomAddress();
    const [httpPort] = (await freePorts(address, 1)) as [number];
    await start({ addressPortRange: RANGE }, (config) => (config.listen.http = { host: address, port: httpPort }));
    const own = await refusal(client.reserve({ kind: 'address', address, ports: [{ port: httpPort, protocol: 'http' }] }));
    expect(own).to.be.instanceOf(ControlPortUnavailableError);
    expect(own.message).to.match(new RegExp(`port ${httpPort} is taken by the edge's own http listener \\(${address.replace(/\./g, '\\.')}:${httpPort}\\).*1024-65535`));
    const elsewhere = address.replace(/\.(\d+)$/, (_, last: string) => `.${(Number(last) % 254) + 1}`);
    expect((await client.reserve({ kind: 'address', address: elsewhere, ports: [{ port: httpPort, protocol: 'http' }] })).created, 'the same port on another address').to.equal(true);
  });

  it('tells the range in GET /v1/edge, and null without one', async () => {
    await start({ addressPortRange: { first: 20000, last: 29999 } });
    expect((await client.describeEdge()).edge.addressPortRange).to.deep.equal({ first: 20000, last: 29999 });
    await running!.edge.close();
    running = undefined;
    await store.close();
    store = await openSqliteStore(':memory:');
    await start({});
    expect((await client.describeEdge()).edge.addressPortRange).to.equal(null);
  });

  it('serves a reservation that names no ports on the addressPorts, and without a range lets a client ask only for those', async () => {
    const address = randomAddress();
    const [served] = (await freePorts(address, 1)) as [number];
    await start({ addressPorts: [{ port: served, protocol: 'http' }] });
    // a row as an edge before this change wrote it: no ports
    const old = (await store.createReservation({ accountId: seeded.accountId, spec: { kind: 'address', address } }, 'test')).reservation;
    const minted = await client.mintTunnelKey({ reservationId: old.id, protocol: 'http' });
    sessions.push(await connectAgent(running!.endpoint, `binding/address/${address}`, minted.token));
    await waitUntil(() => listening(`binding/address/${address}`).length === 1);
    expect(listening(`binding/address/${address}`)).to.deep.equal([served]);
    expect((await get(address, served)).status).to.equal(200);
    expect((await client.listReservations()).reservations[0]).to.not.have.property('ports');

    const unlisted = await refusal(client.reserve({ kind: 'address', address: randomAddress(), ports: [{ port: 9300, protocol: 'tcp' }] }));
    expect(unlisted).to.include({ code: 'TUNA_CONTROL_PORT_UNAVAILABLE', field: 'ports[0].port' });
    expect(unlisted.message).to.match(new RegExp(`none is configured \\(store\\.addressPortRange\\), so only its addressPorts ${served}`));
    const listed = await client.setReservationPorts(old.id, [{ port: served, protocol: 'tcp' }]);
    expect(listed.reservation.ports, 'a port of addressPorts, with another protocol').to.deep.equal([{ port: served, protocol: 'tcp' }]);
  });
});
