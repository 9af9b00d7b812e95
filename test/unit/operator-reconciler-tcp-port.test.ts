/**
 * TCP-port bindings in the edge reconciler, against a fake control API that holds
 * tcp-port reservations as the edge does (a pool, a port held once, adoption of a port the account
 * holds): a port per binding, found again by its label, a `tcp` key recording the edge's binding id,
 * the pool's refusals held back as PortNotAssigned, and what a departed binding held let go.
 */
import { expect } from 'chai';
import type { PortPool, Reservation, ReservationRequest } from '../../src/control-api/index.js';
import { emptyGraph } from '../../src/model/index.js';
import type { Binding, ObjectStatus, RouteGraph } from '../../src/model/index.js';
import { EdgeReconciler, TunnelKeys } from '../../src/operator/index.js';
import { correctHeldBack } from '../../src/operator/held-back.js';
import { FakeEdgeControl } from '../support/fake-edge-control.js';

/** TcpEdgeControl adds tcp-port reservations to the fake: from `pool` when no port is named, refused outside it or once taken. */
class TcpEdgeControl extends FakeEdgeControl {
  pool: PortPool | undefined = { first: 21000, last: 21002 };
  #next = 0;

  override reserve(body: ReservationRequest) {
    if (body.kind !== 'tcp-port') return super.reserve(body);
    this.calls.reserve++;
    this.log.push(`reserve tcp-port ${body.port ?? 'any'}`);
    const held = new Set([...this.reservations.values()].filter((r) => r.kind === 'tcp-port').map((r) => Number(r.value)));
    const pool = this.pool;
    if (pool === undefined) return Promise.reject(new Error('port: this edge has no TCP port pool (store.portPool): no port can be reserved'));
    let port = body.port;
    if (port !== undefined && (port < pool.first || port > pool.last)) return Promise.reject(new Error(`port: port ${port} is outside the TCP port pool ${pool.first}-${pool.last}`));
    if (port !== undefined && held.has(port)) {
      // the edge adopts a port the account holds, taking the new labels: the reconciler must not ask for one it holds
      const existing = [...this.reservations.values()].find((r) => r.kind === 'tcp-port' && r.value === String(port))!;
      const adopted = { ...existing, labels: body.labels ?? existing.labels };
      this.reservations.set(existing.id, adopted);
      return Promise.resolve({ reservation: adopted, created: false });
    }
    for (let p = pool.first; port === undefined && p <= pool.last; p++) if (!held.has(p)) port = p;
    if (port === undefined) return Promise.reject(new Error(`no free TCP port in ${pool.first}-${pool.last}`));
    const reservation: Reservation = { id: `p${++this.#next}`, accountId: 'a', kind: 'tcp-port', value: String(port), name: null, labels: body.labels ?? {}, domainType: null, verificationToken: null, verified: true, createdAt: 0, updatedAt: 0 };
    this.reservations.set(reservation.id, reservation);
    return Promise.resolve({ reservation, created: true });
  }
}

const SERVICE = { group: '', kind: 'Service', namespace: 'shop', name: 'db' };
const tcpBinding = (port: number, name = 'db', kind = 'Service', group = ''): Binding => ({
  id: kind === 'Service' ? `binding/tcp-port/shop/${name}/${port}` : `binding/tcp-port/tunnel/shop/${name}/${port}`,
  kind: 'tcp-port',
  hostnames: [],
  port,
  source: { group, kind, namespace: 'shop', name },
});
const graphOf = (...bindings: Binding[]): RouteGraph => ({ ...emptyGraph(), bindings });
const tcpReservations = (control: FakeEdgeControl) => [...control.reservations.values()].filter((r) => r.kind === 'tcp-port');

describe('operator: tcp-port bindings in the edge reconciler', () => {
  it('reserves a port from the pool labelled with the binding, mints a tcp key recording binding/tcp-port/<port>, and reports where the edge serves it', async () => {
    const control = new TcpEdgeControl();
    const keys = new TunnelKeys();
    const reconciler = new EdgeReconciler(control, keys, { clusterId: 'c', portPool: control.pool!, tcpHost: '127.0.0.1' });
    const db = tcpBinding(5432);
    const report = await reconciler.reconcile(graphOf(db));
    expect(report.pending).to.deep.equal([]);
    expect(report).to.include({ reserved: 1, minted: 1 });
    expect([...report.ready]).to.deep.equal([db.id]);
    expect(report.ports?.get(db.id)).to.deep.equal({ ip: '127.0.0.1', port: 21000 });
    // 5432 lies outside the pool: not asked for
    expect(control.log.filter((l) => l.startsWith('reserve'))).to.deep.equal(['reserve tcp-port any']);
    const [reservation] = tcpReservations(control);
    expect(reservation?.labels).to.deep.equal({ 'tuna.dev/cluster': 'c', 'tuna.dev/owner-kind': 'Service', 'tuna.dev/binding': db.id });
    const [key] = [...control.keys.values()];
    expect(key).to.include({ reservationId: reservation?.id, protocol: 'tcp' });
    expect(keys.get(db.id)).to.deep.include({ keyId: key?.id, edgeBindingId: 'binding/tcp-port/21000' });
    expect(keys.forTunnel('binding/tcp-port/21000')?.keyId).to.equal(key?.id);

    const again = await reconciler.reconcile(graphOf(db));
    expect(again).to.include({ reserved: 0, minted: 0, released: 0, revoked: 0 });
    expect(again.ports?.get(db.id)).to.deep.equal({ ip: '127.0.0.1', port: 21000 });
  });

  it('mints a udp key for a UDP port binding (transport udp), which opens the edge port for UDP', async () => {
    const control = new TcpEdgeControl();
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', portPool: control.pool!, tcpHost: '127.0.0.1' });
    const dns: Binding = { ...tcpBinding(21001, 'dns'), id: 'binding/tcp-port/shop/dns/udp/21001', transport: 'udp' };
    const report = await reconciler.reconcile(graphOf(dns));
    expect(report.pending).to.deep.equal([]);
    expect(report.ports?.get(dns.id)).to.deep.equal({ ip: '127.0.0.1', port: 21001 });
    expect([...control.keys.values()].map((k) => k.protocol)).to.deep.equal(['udp']);
  });

  it('asks for the port the binding names when it lies in the pool, and never for one another binding of the cluster holds', async () => {
    const control = new TcpEdgeControl();
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', portPool: control.pool! });
    const first = tcpBinding(21001, 'first');
    const second = tcpBinding(21001, 'second');
    const report = await reconciler.reconcile(graphOf(first, second));
    expect(report.pending).to.deep.equal([]);
    const ports = new Map([...(report.ports ?? [])].map(([id, at]) => [id, at.port]));
    // one of them gets 21001; the other is not given the same reservation but another port
    expect([...ports.values()].sort()).to.have.length(2);
    expect(new Set(ports.values()).size).to.equal(2);
    expect([...ports.values()]).to.include(21001);
    expect(new Set(tcpReservations(control).map((r) => r.labels['tuna.dev/binding']))).to.deep.equal(new Set([first.id, second.id]));
  });

  it('names no host when the edge listens on every address (0.0.0.0), and a DNS name when it listens on one', async () => {
    for (const [tcpHost, expected] of [['0.0.0.0', { port: 21000 }], ['edge.example.com', { hostname: 'edge.example.com', port: 21000 }], [undefined, { port: 21000 }]] as const) {
      const control = new TcpEdgeControl();
      const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', ...(tcpHost !== undefined ? { tcpHost } : {}) });
      const db = tcpBinding(5432);
      expect((await reconciler.reconcile(graphOf(db))).ports?.get(db.id), String(tcpHost)).to.deep.equal(expected);
    }
  });

  it('falls back to the pool when the port it asked for is refused, with the pool not known in advance', async () => {
    const control = new TcpEdgeControl();
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c' });
    const db = tcpBinding(5432);
    const report = await reconciler.reconcile(graphOf(db));
    expect(control.log.filter((l) => l.startsWith('reserve'))).to.deep.equal(['reserve tcp-port 5432', 'reserve tcp-port any']);
    expect(report.ports?.get(db.id)).to.deep.equal({ port: 21000 });
  });

  it('holds a binding back as PortNotAssigned, with the edge’s answer, when the pool is exhausted or the edge has none, and claims no key for it', async () => {
    const control = new TcpEdgeControl();
    control.pool = { first: 21000, last: 21000 };
    const keys = new TunnelKeys();
    const reconciler = new EdgeReconciler(control, keys, { clusterId: 'c', portPool: control.pool });
    const a = tcpBinding(5432, 'a');
    const b = tcpBinding(5432, 'b');
    const report = await reconciler.reconcile(graphOf(a, b));
    expect([...report.ready]).to.deep.equal([a.id]);
    expect(report.pending).to.deep.equal([{ bindingId: b.id, reason: 'PortNotAssigned', message: 'TCP port 5432 is not served: the edge assigned no port from its pool: no free TCP port in 21000-21000' }]);
    expect(keys.get(b.id)).to.equal(undefined);
    expect(report.ports?.has(b.id)).to.equal(false);

    const none = new TcpEdgeControl();
    none.pool = undefined;
    const without = await new EdgeReconciler(none, new TunnelKeys(), { clusterId: 'c', portPool: null }).reconcile(graphOf(a));
    expect(without.pending).to.deep.equal([{ bindingId: a.id, reason: 'PortNotAssigned', message: 'TCP port 5432 is not served: the edge has no TCP port pool' }]);
    expect(none.calls.reserve, 'an edge known to have no pool is not asked').to.equal(0);
    expect(without.ready.size).to.equal(0);
  });

  it('finds the same port again after a restart by its label, and revokes the key it no longer holds', async () => {
    const control = new TcpEdgeControl();
    const db = tcpBinding(5432);
    await new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c' }).reconcile(graphOf(tcpBinding(5431, 'other'), db));
    const port = tcpReservations(control).find((r) => r.labels['tuna.dev/binding'] === db.id)?.value;
    const keys = new TunnelKeys();
    const restarted = await new EdgeReconciler(control, keys, { clusterId: 'c' }).reconcile(graphOf(tcpBinding(5431, 'other'), db));
    expect(restarted).to.include({ reserved: 0, minted: 2, revoked: 2, released: 0 });
    expect(restarted.ports?.get(db.id)?.port).to.equal(Number(port));
    expect(keys.get(db.id)?.edgeBindingId).to.equal(`binding/tcp-port/${port}`);
  });

  it('releases the port and revokes the key of a binding that left, and keeps a tcp-port reservation made for no binding (a TCPPort’s)', async () => {
    const control = new TcpEdgeControl();
    const keys = new TunnelKeys();
    const reconciler = new EdgeReconciler(control, keys, { clusterId: 'c' });
    const tcpPort = await control.reserve({ kind: 'tcp-port', port: 21002, labels: { 'tuna.dev/cluster': 'c', 'tuna.dev/owner-kind': 'TCPPort.tuna.dev' } });
    const db = tcpBinding(5432);
    await reconciler.reconcile(graphOf(db));
    const after = await reconciler.reconcile(graphOf());
    expect(after).to.include({ released: 1, revoked: 1 });
    expect(keys.get(db.id)).to.equal(undefined);
    expect(tcpReservations(control).map((r) => r.id)).to.deep.equal([tcpPort.reservation.id]);
  });

  it('keeps what a binding of an unlisted kind held, and lets it go once that kind is listed', async () => {
    const control = new TcpEdgeControl();
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c' });
    await reconciler.reconcile(graphOf(tcpBinding(5432)));
    const unlisted = await reconciler.reconcile(graphOf(), (owner) => owner?.kind !== 'Service');
    expect(unlisted).to.include({ released: 0, revoked: 0 });
    // the reservation is kept (and the key, still held by its binding)
    expect(unlisted.kept).to.equal(1);
    expect((await reconciler.reconcile(graphOf(), () => true))).to.include({ released: 1, revoked: 1 });
  });

  it('serves a tcp Tunnel on the port its TCPPort holds, using that reservation as it is', async () => {
    const control = new TcpEdgeControl();
    const keys = new TunnelKeys();
    const tcpPort = await control.reserve({ kind: 'tcp-port', port: 21002, labels: { 'tuna.dev/cluster': 'c', 'tuna.dev/owner-kind': 'TCPPort.tuna.dev' } });
    const tunnel = tcpBinding(21002, 'ssh', 'Tunnel', 'tuna.dev');
    const report = await new EdgeReconciler(control, keys, { clusterId: 'c' }).reconcile(graphOf(tunnel));
    expect(report).to.include({ reserved: 0, minted: 1 });
    expect(report.ports?.get(tunnel.id)?.port).to.equal(21002);
    expect(control.keys.values().next().value?.reservationId).to.equal(tcpPort.reservation.id);
    expect(control.reservations.get(tcpPort.reservation.id)?.labels, 'not relabelled').to.deep.equal(tcpPort.reservation.labels);
    // a Service asking for that port does not take it
    const service = tcpBinding(21002, 'db');
    const other = await new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c' }).reconcile(graphOf(tunnel, service));
    expect(other.ports?.get(service.id)?.port).to.not.equal(21002);
  });

  it('gives a tcp Tunnel the exact port its TCPPort names, or holds it back: never another port of the pool', async () => {
    const control = new TcpEdgeControl();
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', portPool: control.pool! });
    const inPool = tcpBinding(21001, 'ssh', 'Tunnel', 'tuna.dev');
    const outside = tcpBinding(2222, 'git', 'Tunnel', 'tuna.dev');
    const report = await reconciler.reconcile(graphOf(inPool, outside));
    expect(report.ports?.get(inPool.id)?.port).to.equal(21001);
    expect(report.pending).to.deep.equal([{ bindingId: outside.id, reason: 'PortNotAssigned', message: "TCP port 2222 is not served: it is outside the edge's TCP port pool 21000-21002" }]);
    // with the pool not known, the edge's refusal is the reason, and no pool port is taken instead
    const unknown = new TcpEdgeControl();
    const refused = await new EdgeReconciler(unknown, new TunnelKeys(), { clusterId: 'c' }).reconcile(graphOf(outside));
    expect(refused.pending).to.deep.equal([{ bindingId: outside.id, reason: 'PortNotAssigned', message: 'TCP port 2222 is not served: the edge refused it: port: port 2222 is outside the TCP port pool 21000-21002' }]);
    expect(tcpReservations(unknown)).to.deep.equal([]);
  });
});

describe('operator: statuses of served tcp-port bindings', () => {
  const serviceStatus = (ingress: unknown[]): ObjectStatus => ({
    ref: SERVICE,
    conditions: [{ type: 'Published', status: 'True', reason: 'Published', message: 'tcp port 5432' }],
    events: [],
    status: { loadBalancer: { ingress } },
  });

  it('lists the port the edge assigned under its address, in place of the port the Service asked for', () => {
    const db = tcpBinding(5432);
    const cache = tcpBinding(6379, 'db');
    const statuses = [serviceStatus([{ hostname: 'db-shop.tuna.example', ports: [{ port: 5432, protocol: 'TCP' }, { port: 6379, protocol: 'TCP' }] }])];
    const ports = new Map([
      [db.id, { ip: '127.0.0.1', port: 21001 }],
      [cache.id, { ip: '127.0.0.1', port: 5432 }],
    ]);
    const [out] = correctHeldBack(statuses, graphOf(db, cache), [], new Map(), ports);
    // one binding's assigned port (5432) is the other's asked one: it is not dropped
    expect(out?.status?.loadBalancer).to.deep.equal({ ingress: [{ ip: '127.0.0.1', ports: [{ port: 5432, protocol: 'TCP' }, { port: 21001, protocol: 'TCP' }] }] });
    expect(out?.status?.conditions).to.deep.equal([{ type: 'Published', status: 'True', reason: 'Published', message: 'tcp port 5432' }]);
  });

  it('lists a served UDP port with protocol UDP beside the TCP port of the same number, and drops only the UDP one when it is held back', () => {
    const tcp = tcpBinding(53, 'db');
    const udp: Binding = { ...tcpBinding(53, 'db'), id: 'binding/tcp-port/shop/db/udp/53', transport: 'udp' };
    const asked = [{ hostname: 'db-shop.tuna.example', ports: [{ port: 53, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }] }];
    const ports = new Map([
      [tcp.id, { ip: '127.0.0.1', port: 21000 }],
      [udp.id, { ip: '127.0.0.1', port: 21001 }],
    ]);
    const [served] = correctHeldBack([serviceStatus(asked)], graphOf(tcp, udp), [], new Map(), ports);
    expect(served?.status?.loadBalancer).to.deep.equal({ ingress: [{ ip: '127.0.0.1', ports: [{ port: 21000, protocol: 'TCP' }, { port: 21001, protocol: 'UDP' }] }] });
    const held = [{ bindingId: udp.id, reason: 'PortNotAssigned' as const, message: 'UDP port 53 is not served' }];
    const [out] = correctHeldBack([serviceStatus(asked)], graphOf(tcp, udp), held, new Map(), new Map([[tcp.id, { ip: '127.0.0.1', port: 21000 }]]));
    expect(out?.status?.loadBalancer).to.deep.equal({ ingress: [{ ip: '127.0.0.1', ports: [{ port: 21000, protocol: 'TCP' }] }] });
  });

  it('keeps the hostname when the edge names no host, and an HTTP port of the same number on it', () => {
    const db = tcpBinding(443);
    const web = { id: 'binding/host/db-shop.tuna.example', kind: 'host' as const, hostnames: ['db-shop.tuna.example'], source: SERVICE };
    const graph = { ...graphOf(db, web), listeners: [{ id: `${web.id}/listener/https`, bindingId: web.id, name: 'https', port: 443, protocol: 'https' as const, source: SERVICE }] };
    const statuses = [serviceStatus([{ hostname: 'db-shop.tuna.example', ports: [{ port: 80, protocol: 'TCP' }, { port: 443, protocol: 'TCP' }] }])];
    const [out] = correctHeldBack(statuses, graph, [], new Map(), new Map([[db.id, { port: 21000 }]]));
    expect(out?.status?.loadBalancer).to.deep.equal({
      ingress: [{ hostname: 'db-shop.tuna.example', ports: [{ port: 80, protocol: 'TCP' }, { port: 443, protocol: 'TCP' }, { port: 21000, protocol: 'TCP' }] }],
    });
  });

  it('takes a port held back as PortNotAssigned out of the status, with Published False and a Warning', () => {
    const db = tcpBinding(5432);
    const statuses = [serviceStatus([{ hostname: 'db-shop.tuna.example', ports: [{ port: 5432, protocol: 'TCP' }] }])];
    const message = 'TCP port 5432 is not served: the edge has no TCP port pool';
    const [out] = correctHeldBack(statuses, graphOf(db), [{ bindingId: db.id, reason: 'PortNotAssigned', message }]);
    expect(out?.status?.loadBalancer).to.deep.equal({});
    expect(out?.conditions).to.deep.include({ type: 'Published', status: 'False', reason: 'PortNotAssigned', message });
    expect(out?.events).to.deep.equal([{ type: 'Warning', reason: 'PortNotAssigned', message }]);
  });

  it('gives a tcp Tunnel the port and address the edge serves it on', () => {
    const tunnel = tcpBinding(0, 'ssh', 'Tunnel', 'tuna.dev');
    const statuses: ObjectStatus[] = [{ ref: tunnel.source, conditions: [], events: [], status: { requestedPort: 0 } }];
    const [out] = correctHeldBack(statuses, graphOf(tunnel), [], new Map(), new Map([[tunnel.id, { ip: '127.0.0.1', port: 21000 }]]));
    expect(out?.status).to.deep.equal({ requestedPort: 0, port: 21000, address: '127.0.0.1' });
  });
});
