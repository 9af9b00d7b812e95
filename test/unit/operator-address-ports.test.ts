/**
 * The ports of a Gateway's dedicated address: the listeners' ports mapped to the ports the edge
 * opens, reserved with them and changed only when they change, a port the edge cannot open or
 * reports failed held back on its listeners alone (Accepted=False PortUnavailable), and a port just
 * asked for not Programmed until the edge reports it listening.
 */
import { expect } from 'chai';
import { translateObjects } from '../../src/agent/state.js';
import { ControlPortUnavailableError } from '../../src/control-api/index.js';
import type { ListenerStatus, PortSpec, Reservation } from '../../src/control-api/index.js';
import type { Listener, ObjectStatus } from '../../src/model/index.js';
import { EdgeReconciler, TunnelKeys, correctHeldBack } from '../../src/operator/index.js';
import type { AddressPortLimits, PendingBinding } from '../../src/operator/index.js';
import { planAddressPorts, portProtocolOf } from '../../src/operator/address-ports.js';
import { REFUSED_RETRY_MS } from '../../src/operator/address-bindings.js';
import { FakeEdgeControl } from '../support/fake-edge-control.js';

const GW = 'gateway.networking.k8s.io';
const BINDING = 'binding/address/infra/gw';
const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });
const RANGE: AddressPortLimits = { range: { first: 1, last: 9999 }, fixed: [{ port: 80, protocol: 'http' }] };

type GatewayListener = { name: string; protocol: string; port: number; tls?: Record<string, unknown>; hostname?: string };
/** stateOf translates one Gateway with these listeners. */
function stateOf(listeners: GatewayListener[]) {
  return translateObjects([
    { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: meta('tuna'), spec: { controllerName: 'tuna.dev/gateway-controller' } },
    { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: meta('gw', 'infra'), spec: { gatewayClassName: 'tuna', listeners } },
  ]);
}
const tcp = (name: string, port: number): GatewayListener => ({ name, protocol: 'TCP', port });
const http = (name: string, port: number): GatewayListener => ({ name, protocol: 'HTTP', port });

type Cond = { type: string; status: string; reason: string; message: string };
const listenerConditions = (s: ObjectStatus, name: string): Cond[] => (s.status?.listeners as { name: string; conditions: Cond[] }[]).find((l) => l.name === name)?.conditions ?? [];
const cond = (list: Cond[] | undefined, type: string): Cond | undefined => list?.find((c) => c.type === type);
const gatewayOf = (statuses: ObjectStatus[]): ObjectStatus => statuses.find((s) => s.ref.kind === 'Gateway')!;
const addressReservation = (control: FakeEdgeControl): Reservation => [...control.reservations.values()].find((r) => r.kind === 'address')!;
const listening = (ports: readonly PortSpec[] | undefined, address: string): ListenerStatus[] =>
  (ports ?? []).map((p) => ({ address, port: p.port, protocol: p.protocol, state: 'listening', error: null, failures: 0, retryAt: null }));
const portsPut = (control: FakeEdgeControl): string[] => control.log.filter((l) => l.startsWith('setReservationPorts'));

describe('operator: the ports of a Gateway address', () => {
  it('maps a UDP listener to a udp port, beside a TCP port of the same number', () => {
    expect(portProtocolOf({ protocol: 'udp' })).to.equal('udp');
    const { graph } = stateOf([{ name: 'dns', protocol: 'UDP', port: 53 }, tcp('dns-tcp', 53), { name: 'dns2', protocol: 'UDP', port: 5300 }]);
    expect(planAddressPorts(graph.listeners, RANGE)).to.deep.equal({
      asked: [
        { port: 53, protocol: 'tcp' },
        { port: 53, protocol: 'udp' },
        { port: 5300, protocol: 'udp' },
      ],
      unavailable: [],
    });
    // outside the range it is PortUnavailable like any other port
    expect(planAddressPorts(graph.listeners, { range: { first: 1000, last: 9999 }, fixed: [] }).unavailable.map((p) => p.port)).to.deep.equal([53, 53]);
  });

  it('maps HTTP to http, HTTPS and TLS (terminated or passed through) to tls, TCP to tcp, UDP to udp', () => {
    const at = (protocol: Listener['protocol']) => portProtocolOf({ protocol });
    expect([at('http'), at('https'), at('tls'), at('tcp'), at('udp')]).to.deep.equal(['http', 'tls', 'tls', 'tcp', 'udp']);
    const { graph } = stateOf([http('web', 8080), { name: 'pass', protocol: 'TLS', port: 8443, hostname: 'pass.example', tls: { mode: 'Passthrough' } }, tcp('db', 9300)]);
    // an HTTPS listener terminated in the cluster (its certificate checked by the translator, not here)
    const secure: Listener = { id: `${BINDING}/listener/secure`, bindingId: BINDING, name: 'secure', port: 443, protocol: 'https', tls: { mode: 'terminate-in-cluster', certificates: [] }, source: { group: GW, kind: 'Gateway', namespace: 'infra', name: 'gw', section: 'secure' } };
    expect(graph.listeners.map((l) => l.name).sort()).to.deep.equal(['db', 'pass', 'web']);
    graph.listeners.push(secure);
    expect(planAddressPorts(graph.listeners, RANGE)).to.deep.equal({
      asked: [
        { port: 443, protocol: 'tls' },
        { port: 8080, protocol: 'http' },
        { port: 8443, protocol: 'tls' },
        { port: 9300, protocol: 'tcp' },
      ],
      unavailable: [],
    });
  });

  it('asks for one TCP protocol a port, and UDP beside it', () => {
    const listener = (name: string, port: number, protocol: Listener['protocol']): Listener => ({ id: `${BINDING}/listener/${name}`, bindingId: BINDING, name, port, protocol, source: { group: GW, kind: 'Gateway', namespace: 'infra', name: 'gw', section: name } });
    const plan = planAddressPorts([listener('web', 5300, 'http'), listener('raw', 5300, 'tcp'), listener('dns', 5300, 'udp')], RANGE);
    expect(plan.asked).to.deep.equal([
      { port: 5300, protocol: 'http' },
      { port: 5300, protocol: 'udp' },
    ]);
    expect(plan.unavailable).to.deep.equal([{ port: 5300, state: 'unavailable', message: 'port 5300 is not available for tcp: the address serves it as http' }]);
  });

  it('keeps out a port outside the edge range, or (no range) one not in its fixed list with that protocol, naming the port and what the edge serves', () => {
    const { graph } = stateOf([http('web', 80), tcp('db', 9300), tcp('far', 20000)]);
    expect(planAddressPorts(graph.listeners, RANGE)).to.deep.equal({
      asked: [
        { port: 80, protocol: 'http' },
        { port: 9300, protocol: 'tcp' },
      ],
      unavailable: [{ port: 20000, state: 'unavailable', message: 'port 20000 is not available: the edge serves ports 1-9999 on its addresses' }],
    });
    const fixed = planAddressPorts(graph.listeners, { range: null, fixed: [{ port: 80, protocol: 'http' }, { port: 9300, protocol: 'http' }] });
    expect(fixed.asked).to.deep.equal([{ port: 80, protocol: 'http' }]);
    expect(fixed.unavailable.map((p) => p.message)).to.deep.equal([
      'port 9300 (tcp) is not available: the edge serves only ports 80 (http), 9300 (http) on its addresses',
      'port 20000 (tcp) is not available: the edge serves only ports 80 (http), 9300 (http) on its addresses',
    ]);
  });

  it('reserves the address with its listeners’ ports, changes them with one PUT when a listener comes or goes, and asks nothing when they are equal', async () => {
    const control = new FakeEdgeControl();
    control.listeners = (r) => listening(r.ports, r.value);
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', addressPorts: RANGE });
    const first = await reconciler.reconcile(stateOf([tcp('a', 9300), tcp('b', 9301)]).graph);
    expect(control.bodies).to.have.length(1);
    expect((control.bodies[0] as { ports: PortSpec[] }).ports).to.deep.equal([
      { port: 9300, protocol: 'tcp' },
      { port: 9301, protocol: 'tcp' },
    ]);
    expect([...first.ready]).to.deep.equal([BINDING]);
    // just asked for: not served until the edge reports them listening, and looked at again soon
    expect(first.pending.map((p) => [p.reason, p.port])).to.deep.equal([
      ['ListenerPending', 9300],
      ['ListenerPending', 9301],
    ]);
    expect(first.confirming).to.equal(true);

    const confirmed = await reconciler.reconcile(stateOf([tcp('a', 9300), tcp('b', 9301)]).graph);
    expect(confirmed.listed, 'listed again to read the listeners').to.equal(true);
    expect(confirmed.pending).to.deep.equal([]);
    expect(confirmed.confirming).to.equal(undefined);
    const idle = control.total();
    const again = await reconciler.reconcile(stateOf([tcp('a', 9300), tcp('b', 9301)]).graph);
    expect(again.pending).to.deep.equal([]);
    expect(control.total() - idle, 'an unchanged Gateway costs no control-API call').to.equal(0);
    expect(portsPut(control)).to.deep.equal([]);

    const changed = await reconciler.reconcile(stateOf([tcp('a', 9300), tcp('c', 9302)]).graph);
    expect(portsPut(control)).to.deep.equal([`setReservationPorts ${addressReservation(control).id}`]);
    expect(addressReservation(control).ports).to.deep.equal([
      { port: 9300, protocol: 'tcp' },
      { port: 9302, protocol: 'tcp' },
    ]);
    expect(changed).to.include({ reserved: 0, minted: 0 });
    expect(changed.pending.map((p) => [p.reason, p.port]), 'only the new port waits').to.deep.equal([['ListenerPending', 9302]]);
    await reconciler.reconcile(stateOf([tcp('a', 9300), tcp('c', 9302)]).graph);
    await reconciler.reconcile(stateOf([tcp('a', 9300), tcp('c', 9302)]).graph);
    expect(portsPut(control), 'no PUT while the ports stay').to.have.length(1);
  });

  it('asks for a UDP listener\'s udp port and, when the edge fails to open its socket, holds back the UDP listener only, not the TCP one of that number', async () => {
    const control = new FakeEdgeControl();
    control.listeners = (r) => listening(r.ports, r.value).map((l) => (l.protocol === 'udp' ? { ...l, state: 'failed' as const, error: 'EADDRINUSE', failures: 1 } : l));
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', addressPorts: RANGE });
    const state = stateOf([{ name: 'dns', protocol: 'UDP', port: 5300 }, tcp('dns-tcp', 5300)]);
    await reconciler.reconcile(state.graph);
    const report = await reconciler.reconcile(state.graph);
    expect(addressReservation(control).ports).to.deep.equal([{ port: 5300, protocol: 'tcp' }, { port: 5300, protocol: 'udp' }]);
    expect(report.pending.map((p) => ({ reason: p.reason, port: p.port, transport: p.transport }))).to.deep.equal([{ reason: 'ListenerFailed', port: 5300, transport: 'udp' }]);
    const gw = gatewayOf(correctHeldBack(state.statuses, state.graph, report.pending, report.addresses));
    expect(cond(listenerConditions(gw, 'dns'), 'Accepted')).to.deep.include({ status: 'False', reason: 'PortUnavailable' });
    expect(cond(listenerConditions(gw, 'dns-tcp'), 'Accepted')).to.deep.include({ status: 'True', reason: 'Accepted' });
    expect(cond(listenerConditions(gw, 'dns-tcp'), 'Programmed')).to.deep.include({ status: 'True' });
  });

  it('does not ask for a port outside the edge range, reports it PortUnavailable on its listener only, with a Warning event', async () => {
    const control = new FakeEdgeControl();
    control.listeners = (r) => listening(r.ports, r.value);
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', addressPorts: RANGE });
    const state = stateOf([tcp('db', 9300), tcp('far', 20000)]);
    await reconciler.reconcile(state.graph);
    const report = await reconciler.reconcile(state.graph);
    expect(addressReservation(control).ports).to.deep.equal([{ port: 9300, protocol: 'tcp' }]);
    const message = 'port 20000 is not available: the edge serves ports 1-9999 on its addresses';
    expect(report.pending).to.deep.equal([{ bindingId: BINDING, reason: 'PortUnavailable', message, port: 20000 }]);

    const gw = gatewayOf(correctHeldBack(state.statuses, state.graph, report.pending, report.addresses));
    expect(cond(listenerConditions(gw, 'far'), 'Accepted')).to.deep.include({ status: 'False', reason: 'PortUnavailable', message });
    expect(cond(listenerConditions(gw, 'far'), 'Programmed')).to.deep.include({ status: 'False' });
    expect(cond(listenerConditions(gw, 'db'), 'Accepted')).to.deep.include({ status: 'True', reason: 'Accepted' });
    expect(cond(listenerConditions(gw, 'db'), 'Programmed')).to.deep.include({ status: 'True', reason: 'Programmed' });
    expect(cond(gw.status?.conditions as Cond[], 'Programmed')).to.deep.include({ status: 'True' });
    expect(cond(gw.status?.conditions as Cond[], 'Accepted')).to.deep.include({ status: 'True', reason: 'ListenersNotValid' });
    expect(gw.status?.addresses).to.deep.equal([{ type: 'IPAddress', value: '127.77.0.1' }]);
    expect(gw.events).to.deep.equal([{ type: 'Warning', reason: 'PortUnavailable', message }]);
  });

  it('holds back a ListenerSet listener on a port the edge cannot open in the ListenerSet’s own status, not the Gateway’s listener of the same name', async () => {
    const control = new FakeEdgeControl();
    control.listeners = (r) => listening(r.ports, r.value);
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', addressPorts: RANGE });
    const state = translateObjects([
      { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: meta('tuna'), spec: { controllerName: 'tuna.dev/gateway-controller' } },
      { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: meta('gw', 'infra'), spec: { gatewayClassName: 'tuna', allowedListeners: { namespaces: { from: 'Same' } }, listeners: [tcp('db', 9300)] } },
      { apiVersion: `${GW}/v1`, kind: 'ListenerSet', metadata: meta('more', 'infra'), spec: { parentRef: { name: 'gw' }, listeners: [tcp('db', 20000)] } },
    ]);
    await reconciler.reconcile(state.graph);
    const report = await reconciler.reconcile(state.graph);
    const message = 'port 20000 is not available: the edge serves ports 1-9999 on its addresses';
    expect(report.pending).to.deep.equal([{ bindingId: BINDING, reason: 'PortUnavailable', message, port: 20000 }]);

    const statuses = correctHeldBack(state.statuses, state.graph, report.pending, report.addresses);
    const set = statuses.find((s) => s.ref.kind === 'ListenerSet')!;
    expect(cond(listenerConditions(set, 'db'), 'Accepted')).to.deep.include({ status: 'False', reason: 'PortUnavailable', message });
    expect(cond(listenerConditions(set, 'db'), 'Programmed')).to.deep.include({ status: 'False' });
    expect(cond(set.status?.conditions as Cond[], 'Programmed')).to.deep.include({ status: 'False', reason: 'PortUnavailable' });
    expect(cond(set.status?.conditions as Cond[], 'Accepted')).to.deep.include({ status: 'True', reason: 'ListenersNotValid' });
    expect(set.events).to.deep.equal([{ type: 'Warning', reason: 'PortUnavailable', message }]);
    const gw = gatewayOf(statuses);
    expect(cond(listenerConditions(gw, 'db'), 'Accepted'), 'the Gateway’s own db listener, on 9300').to.deep.include({ status: 'True', reason: 'Accepted' });
    expect(cond(listenerConditions(gw, 'db'), 'Programmed')).to.deep.include({ status: 'True' });
    expect(cond(gw.status?.conditions as Cond[], 'Programmed')).to.deep.include({ status: 'True' });
  });

  it('reports a port the edge failed to listen on PortUnavailable with the edge’s error until it listens', async () => {
    const control = new FakeEdgeControl();
    let isTaken = true;
    control.listeners = (r) =>
      listening(r.ports, r.value).map((l) => (l.port === 9301 && isTaken ? { ...l, state: 'failed', error: 'EADDRINUSE', failures: 3, retryAt: Date.UTC(2026, 0, 1) } : l));
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', addressPorts: RANGE });
    const state = stateOf([tcp('a', 9300), tcp('b', 9301)]);
    await reconciler.reconcile(state.graph);
    const failed = await reconciler.reconcile(state.graph);
    const message = 'port 9301 is not available: the edge could not listen on 127.77.0.1:9301: EADDRINUSE (3 attempt(s) failed; it tries again at 2026-01-01T00:00:00.000Z)';
    expect(failed.pending).to.deep.equal([{ bindingId: BINDING, reason: 'ListenerFailed', message, port: 9301 }]);
    expect(failed.confirming, 'a failure waits for the slow recheck').to.equal(undefined);
    const gw = gatewayOf(correctHeldBack(state.statuses, state.graph, failed.pending, failed.addresses));
    expect(cond(listenerConditions(gw, 'b'), 'Accepted')).to.deep.include({ status: 'False', reason: 'PortUnavailable', message });
    expect(cond(listenerConditions(gw, 'b'), 'Programmed')).to.deep.include({ status: 'False' });
    expect(cond(listenerConditions(gw, 'a'), 'Programmed')).to.deep.include({ status: 'True' });
    expect(gw.events).to.deep.equal([{ type: 'Warning', reason: 'PortUnavailable', message }]);

    isTaken = false;
    const healed = await reconciler.reconcile(state.graph);
    expect(healed.listed, 'a failed port has the edge listed again').to.equal(true);
    expect(healed.pending).to.deep.equal([]);
    const served = gatewayOf(correctHeldBack(state.statuses, state.graph, healed.pending, healed.addresses));
    expect(cond(listenerConditions(served, 'b'), 'Programmed')).to.deep.include({ status: 'True' });
    expect(portsPut(control)).to.deep.equal([]);
  });

  it('holds back a port just asked for as Programmed=False Pending without an event, and the Gateway too when it is the only one', () => {
    const state = stateOf([tcp('a', 9300)]);
    const pending: PendingBinding[] = [{ bindingId: BINDING, reason: 'ListenerPending', message: 'port 9300 is not served yet: the edge is opening it on 127.77.0.1', port: 9300 }];
    const gw = gatewayOf(correctHeldBack(state.statuses, state.graph, pending, new Map([[BINDING, '127.77.0.1']])));
    expect(cond(listenerConditions(gw, 'a'), 'Programmed')).to.deep.include({ status: 'False', reason: 'Pending' });
    expect(cond(listenerConditions(gw, 'a'), 'Accepted')).to.deep.include({ status: 'True' });
    expect(cond(gw.status?.conditions as Cond[], 'Programmed')).to.deep.include({ status: 'False', reason: 'Pending' });
    expect(gw.status?.addresses).to.deep.equal([{ type: 'IPAddress', value: '127.77.0.1' }]);
    expect(gw.events).to.deep.equal([]);
  });

  it('keeps the ports it had when the edge refuses a change, reports the refused one PortUnavailable and does not ask again until the edge is listed again', async () => {
    const control = new FakeEdgeControl();
    control.listeners = (r) => listening(r.ports, r.value);
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', addressPorts: RANGE });
    await reconciler.reconcile(stateOf([tcp('a', 9300)]).graph);
    await reconciler.reconcile(stateOf([tcp('a', 9300)]).graph);
    control.refusePorts = new ControlPortUnavailableError('port 9301 is a listener port of the edge on 127.77.0.1');
    const refused = await reconciler.reconcile(stateOf([tcp('a', 9300), tcp('b', 9301)]).graph);
    expect(portsPut(control)).to.have.length(1);
    expect(refused.pending.map((p) => [p.reason, p.port, p.message])).to.deep.equal([
      ['PortUnavailable', 9301, 'port 9301 is not available: the edge refused it: port 9301 is a listener port of the edge on 127.77.0.1'],
    ]);
    expect(addressReservation(control).ports).to.deep.equal([{ port: 9300, protocol: 'tcp' }]);
    await reconciler.reconcile(stateOf([tcp('a', 9300), tcp('b', 9301)]).graph);
    expect(portsPut(control), 'the refusal is remembered').to.have.length(1);
  });

  it('asks a refused port change again a minute later, and serves it once the edge accepts', async () => {
    const control = new FakeEdgeControl();
    control.listeners = (r) => listening(r.ports, r.value);
    let now = Date.UTC(2026, 0, 1);
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', addressPorts: RANGE, now: () => now });
    await reconciler.reconcile(stateOf([tcp('a', 9300)]).graph);
    control.refusePorts = new ControlPortUnavailableError('port 9301 is held by another reservation of 127.77.0.1');
    const both = stateOf([tcp('a', 9300), tcp('b', 9301)]).graph;
    const refused = await reconciler.reconcile(both);
    expect(refused.refusedPorts, 'the operator is told to reconcile again later').to.equal(true);
    now += REFUSED_RETRY_MS - 1;
    await reconciler.reconcile(both);
    expect(portsPut(control), 'not within the minute').to.have.length(1);
    control.refusePorts = undefined;
    now += 1;
    const accepted = await reconciler.reconcile(both);
    expect(portsPut(control), 'asked again after a minute').to.have.length(2);
    expect(accepted.refusedPorts).to.equal(undefined);
    expect(addressReservation(control).ports).to.deep.equal([{ port: 9300, protocol: 'tcp' }, { port: 9301, protocol: 'tcp' }]);
  });

  it('sends no ports to an edge without a range, and holds back a listener its fixed list does not serve', async () => {
    const control = new FakeEdgeControl();
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', addressPorts: { range: null, fixed: [{ port: 80, protocol: 'http' }] } });
    await reconciler.reconcile(stateOf([http('web', 80), tcp('db', 9300)]).graph);
    const report = await reconciler.reconcile(stateOf([http('web', 80), tcp('db', 9300)]).graph);
    expect(control.bodies).to.have.length(1);
    expect(control.bodies[0]).to.not.have.property('ports');
    expect(report.pending.map((p) => [p.reason, p.port])).to.deep.equal([['PortUnavailable', 9300]]);
    expect(portsPut(control)).to.deep.equal([]);
  });
});
