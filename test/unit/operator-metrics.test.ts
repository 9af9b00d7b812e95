import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { ControlUnreachableError } from '../../src/control-api/index.js';
import type { RouteGraph } from '../../src/model/index.js';
import { AcceptedCertificates } from '../../src/operator/accepted-certificates.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { Downstream } from '../../src/dataplane/index.js';
import { Operator, OperatorHealth, RequestMetrics } from '../../src/operator/index.js';
import type { ReconcileReport } from '../../src/operator/index.js';
import type { Clock, ClockTimer } from '../../src/tunnel/index.js';
import { ListedObjects, RecordingTunnels } from '../support/operator-fakes.js';

/** ManualClock stands still until the test moves it (here: while the reconcile runs). */
class ManualClock implements Clock {
  at = 1_000;
  now(): number {
    return this.at;
  }
  setTimeout(): ClockTimer {
    return {};
  }
  clearTimeout(): void {}
}

/** lines is the exposition as lines. */
async function lines(health: OperatorHealth): Promise<string[]> {
  return (await health.metrics()).split('\n');
}

/** emptyReport is a reconcile that found nothing to do. */
function emptyReport(): ReconcileReport {
  return { ready: new Set(), addresses: new Map(), pending: [], reserved: 0, minted: 0, released: 0, revoked: 0, kept: 0 };
}

const noTunnels = { hasSynced: () => true, tunnels: () => [], isLeader: () => true };

describe('operator metrics (prom-client)', () => {
  it('observes each sync in tuna_operator_sync_duration_seconds, a failed one by result="failure"', async () => {
    const health = new OperatorHealth(noTunnels);
    let isFailing = false;
    const clock = new ManualClock();
    const operator = new Operator({
      objects: new ListedObjects(),
      dataPlane: new DataPlane({ endpoints: new StaticEndpointResolver() }),
      endpoints: new StaticEndpointResolver(),
      tunnels: new RecordingTunnels(),
      reconciler: {
        reconcile: () => {
          clock.at += 600;
          return isFailing ? Promise.reject(new Error('the edge is down')) : Promise.resolve(emptyReport());
        },
      },
      clock,
      onSyncEnded: (outcome, ms) => health.observeSync(outcome, ms),
    });
    await operator.sync();
    const after = await lines(health);
    expect(after).to.include('tuna_operator_sync_duration_seconds_count{result="success"} 1');
    expect(after).to.include('tuna_operator_sync_duration_seconds_sum{result="success"} 0.6');
    expect(after).to.include('tuna_operator_sync_duration_seconds_bucket{le="0.5",result="success"} 0');
    expect(after).to.include('tuna_operator_sync_duration_seconds_bucket{le="1",result="success"} 1');
    isFailing = true;
    let failed: unknown;
    await operator.sync().catch((err: unknown) => (failed = err));
    expect(failed).to.be.instanceOf(Error);
    expect(await lines(health)).to.include('tuna_operator_sync_duration_seconds_count{result="failure"} 1');
  });

  it('adds each sync\'s time per phase to tuna_operator_sync_phase_seconds_total (the reconcile\'s 600 ms under reconcile)', async () => {
    const health = new OperatorHealth(noTunnels);
    const clock = new ManualClock();
    const operator = new Operator({
      objects: new ListedObjects(),
      dataPlane: new DataPlane({ endpoints: new StaticEndpointResolver() }),
      endpoints: new StaticEndpointResolver(),
      tunnels: new RecordingTunnels(),
      reconciler: {
        reconcile: () => {
          clock.at += 600;
          return Promise.resolve(emptyReport());
        },
      },
      clock,
      onSynced: (result) => health.observePhases(result.phases),
    });
    const result = await operator.sync();
    expect(result.phases).to.deep.equal({ readMs: 0, translateMs: 0, admitMs: 0, reconcileMs: 600, applyMs: 0, statusMs: 0 });
    const after = await lines(health);
    expect(after).to.include('tuna_operator_sync_phase_seconds_total{phase="reconcile"} 0.6');
    expect(after).to.include('tuna_operator_sync_phase_seconds_total{phase="translate"} 0');
  });

  it('shows the work queue: a change not taken up yet and the bindings the last sync deferred', async () => {
    let isPending = true;
    const health = new OperatorHealth({ ...noTunnels, hasPendingChange: () => isPending });
    health.recordSync(5, 0, 3);
    expect(await lines(health)).to.include.members(['tuna_operator_queue_depth{queue="changes"} 1', 'tuna_operator_queue_depth{queue="deferred"} 3']);
    isPending = false;
    health.recordSync(5, 0);
    expect(await lines(health)).to.include.members(['tuna_operator_queue_depth{queue="changes"} 0', 'tuna_operator_queue_depth{queue="deferred"} 0']);
  });

  it('counts bindings up and down, reconnects and failed attempts', async () => {
    const held = [
      { bindingId: 'binding/host/a.test', open: 2, wanted: 2 },
      { bindingId: 'binding/host/b.test', open: 0, wanted: 2 },
      { bindingId: 'binding/host/c.test', open: 1, wanted: 2 },
    ];
    const health = new OperatorHealth({ ...noTunnels, tunnels: () => held });
    expect(await lines(health)).to.include.members(['tuna_operator_tunnels{state="up"} 2', 'tuna_operator_tunnels{state="down"} 1', 'tuna_operator_tunnel_reconnects_total 0']);
    health.countReconnect();
    health.countTunnelError();
    health.countTunnelError();
    expect(await lines(health)).to.include.members(['tuna_operator_tunnel_reconnects_total 1', 'tuna_operator_tunnel_errors_total 2']);
  });

  it('shows each held binding’s open connections, 0 for one without a tunnel', async () => {
    let held = [
      { bindingId: 'binding/host/b.test', open: 0, wanted: 2 },
      { bindingId: 'binding/host/a.test', open: 2, wanted: 2 },
    ];
    const health = new OperatorHealth({ ...noTunnels, tunnels: () => held });
    const series = async (): Promise<string[]> => (await lines(health)).filter((l) => l.startsWith('tuna_operator_binding_tunnel_connections{'));
    expect(await series()).to.deep.equal(['tuna_operator_binding_tunnel_connections{binding="binding/host/a.test"} 2', 'tuna_operator_binding_tunnel_connections{binding="binding/host/b.test"} 0']);
    held = [{ bindingId: 'binding/host/a.test', open: 1, wanted: 2 }];
    expect(await series(), 'a binding no longer held is no longer listed').to.deep.equal(['tuna_operator_binding_tunnel_connections{binding="binding/host/a.test"} 1']);
  });

  it('counts the edge unreachable by path: a sync failed reaching the control API, a tunnel dial that got no answer; not a refusal', async () => {
    const health = new OperatorHealth(noTunnels);
    const unreachable = async (): Promise<string[]> => (await lines(health)).filter((l) => l.startsWith('tuna_operator_edge_unreachable_total{'));
    expect(await unreachable()).to.deep.equal(['tuna_operator_edge_unreachable_total{path="control"} 0', 'tuna_operator_edge_unreachable_total{path="tunnel"} 0']);
    health.recordFailure(new Error('reconcile failed', { cause: new ControlUnreachableError('cannot reach https://edge.test: ECONNREFUSED') }));
    health.recordFailure(new Error('the edge refused the key'));
    health.recordFailure();
    health.countTunnelError(Object.assign(new Error('connect ETIMEDOUT 127.0.0.1:7443'), { code: 'ETIMEDOUT' }));
    health.countTunnelError(new Error('the edge refused the tunnel key (401)'));
    expect(await unreachable()).to.deep.equal(['tuna_operator_edge_unreachable_total{path="control"} 1', 'tuna_operator_edge_unreachable_total{path="tunnel"} 1']);
    expect(await lines(health)).to.include.members(['tuna_operator_syncs_total{result="failure"} 3', 'tuna_operator_tunnel_errors_total 2']);
  });

  it('shows when each accepted certificate expires, by Secret', async () => {
    const { cert, key } = selfSignedCertificate(['web.test']);
    const accepted = new AcceptedCertificates();
    const graph = { listeners: [{ tls: { mode: 'terminate-in-cluster', certificates: [{ namespace: 'default', name: 'web-tls' }, { namespace: 'default', name: 'junk' }] } }], virtualHosts: [] } as unknown as RouteGraph;
    accepted.update(graph, new Map([['default/web-tls', { cert, key }], ['default/junk', { cert: 'not a certificate', key }]]));
    const health = new OperatorHealth({ ...noTunnels, certificates: () => accepted.expiries() });
    const notAfter = new X509Certificate(cert).validToDate.getTime() / 1000;
    expect((await lines(health)).filter((l) => l.startsWith('tuna_operator_certificate_expiry_timestamp_seconds{'))).to.deep.equal([`tuna_operator_certificate_expiry_timestamp_seconds{secret="default/web-tls"} ${notAfter}`]);
  });

  it('keeps each operator’s counters its own (no global registry), and renders the parts it is given after its own', async () => {
    const requests = new RequestMetrics();
    const one = new OperatorHealth(noTunnels, Date.now, [requests.registry]);
    const two = new OperatorHealth(noTunnels);
    one.recordSync(1, 0);
    one.countReconnect();
    expect(await lines(two)).to.include.members(['tuna_operator_syncs_total{result="success"} 0', 'tuna_operator_tunnel_reconnects_total 0']);
    const text = await one.metrics();
    expect(text).to.match(/^# HELP tuna_operator_ready /);
    expect(text.indexOf('# TYPE tuna_operator_requests_total counter')).to.be.greaterThan(text.indexOf('# TYPE tuna_operator_ready gauge'));
  });
});

/** FakeExchange is the part of a Downstream the request counter touches. */
function fakeExchange(): { ds: Downstream; close: () => void } {
  const closers: (() => void)[] = [];
  const ds = { respond: () => undefined, onClose: (cb: () => void) => closers.push(cb) } as unknown as Downstream;
  return { ds, close: () => closers.forEach((c) => c()) };
}

describe('RequestMetrics', () => {
  const context = { bindingId: 'binding/host/a.test', publicPort: 80, publicProtocol: 'http' as const, clientAddress: '127.0.0.1', requestId: 'r1' };

  it('counts an exchange at its end by binding and the status it was answered with, none when it had no answer', async () => {
    const metrics = new RequestMetrics();
    for (const status of [200, 200, 404]) {
      const x = fakeExchange();
      metrics.observe(x.ds, context);
      x.ds.respond(status, {});
      x.close();
    }
    const left = fakeExchange();
    metrics.observe(left.ds, { ...context, bindingId: 'binding/host/b.test' });
    left.close();
    const text = (await metrics.registry.metrics()).split('\n');
    expect(text).to.include.members([
      'tuna_operator_requests_total{binding="binding/host/a.test",code="200"} 2',
      'tuna_operator_requests_total{binding="binding/host/a.test",code="404"} 1',
      'tuna_operator_requests_total{binding="binding/host/b.test",code="none"} 1',
    ]);
  });
});
