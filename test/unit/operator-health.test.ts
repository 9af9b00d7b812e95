import { expect } from 'chai';
import * as t from 'io-ts';
import { ListenAddressString, decodeFlags } from '../../src/cli/flags.js';
import { UsageError } from '../../src/cli/errors.js';
import { OperatorHealth, UdpMetrics } from '../../src/operator/index.js';
import type { HealthSources } from '../../src/operator/index.js';

/** sources is a settable view of the cache, the tunnels and the Lease. */
function sources(): HealthSources & { synced: boolean; leader: boolean; held: { bindingId: string; open: number; wanted: number }[] } {
  const s = {
    synced: false,
    leader: true,
    held: [] as { bindingId: string; open: number; wanted: number }[],
    hasSynced: () => s.synced,
    tunnels: () => s.held,
    isLeader: () => s.leader,
  };
  return s;
}

describe('OperatorHealth', () => {
  it('is not ready before the cache has synced, nor before a sync has succeeded', () => {
    const s = sources();
    const health = new OperatorHealth(s);
    expect(health.readiness()).to.deep.equal({ isReady: false, reasons: ['the object cache has not listed every watched kind yet'] });
    s.synced = true;
    expect(health.readiness()).to.deep.equal({ isReady: false, reasons: ['no sync has succeeded yet'] });
    health.recordFailure();
    expect(health.readiness().isReady).to.equal(false);
    health.recordSync(0, 0);
    expect(health.readiness()).to.deep.equal({ isReady: true, reasons: [] });
  });

  it('is not ready while a binding it holds has no tunnel connection open, and names the binding', () => {
    const s = sources();
    s.synced = true;
    const health = new OperatorHealth(s);
    health.recordSync(2, 0);
    s.held = [
      { bindingId: 'binding/host/a.example', open: 2, wanted: 2 },
      { bindingId: 'binding/host/b.example', open: 0, wanted: 2 },
    ];
    expect(health.readiness()).to.deep.equal({ isReady: false, reasons: ['no tunnel connection open for binding/host/b.example'] });
    s.held[1]!.open = 1;
    expect(health.readiness().isReady).to.equal(true);
  });

  it('is ready as a follower on the same terms, and stays ready after a later failed sync', async () => {
    const s = sources();
    s.synced = true;
    s.leader = false;
    const health = new OperatorHealth(s);
    health.recordSync(1, 0);
    health.recordFailure();
    expect(health.readiness().isReady).to.equal(true);
    expect(await health.metrics()).to.include('\ntuna_operator_leader 0\n');
  });

  it('renders its metrics in the Prometheus text format with HELP and TYPE for each', async () => {
    const s = sources();
    s.synced = true;
    s.held = [{ bindingId: 'binding/tcp-port/1', open: 1, wanted: 2 }];
    const health = new OperatorHealth(s, () => 1_700_000_000_500);
    health.recordSync(3, 1);
    health.recordFailure();
    const text = await health.metrics();
    for (const line of [
      'tuna_operator_ready 1',
      'tuna_operator_leader 1',
      'tuna_operator_syncs_total{result="success"} 1',
      'tuna_operator_syncs_total{result="failure"} 1',
      'tuna_operator_bindings 3',
      'tuna_operator_bindings_held_back 1',
      'tuna_operator_last_sync_timestamp_seconds 1700000000.5',
      'tuna_operator_tunnel_bindings 1',
      'tuna_operator_tunnel_connections{state="open"} 1',
      'tuna_operator_tunnel_connections{state="wanted"} 2',
    ])
      expect(text.split('\n'), line).to.include(line);
    const names = [...text.matchAll(/^# TYPE (\S+) (gauge|counter|histogram)$/gm)].map((m) => m[1]);
    // the 8 families of the hand-written exposition, and those prom-client brought
    expect(names).to.have.members([
      'tuna_operator_ready',
      'tuna_operator_leader',
      'tuna_operator_syncs_total',
      'tuna_operator_bindings',
      'tuna_operator_bindings_held_back',
      'tuna_operator_last_sync_timestamp_seconds',
      'tuna_operator_tunnel_bindings',
      'tuna_operator_tunnel_connections',
      'tuna_operator_sync_duration_seconds',
      'tuna_operator_sync_phase_seconds_total',
      'tuna_operator_queue_depth',
      'tuna_operator_tunnels',
      'tuna_operator_tunnel_reconnects_total',
      'tuna_operator_tunnel_errors_total',
      'tuna_operator_edge_unreachable_total',
      'tuna_operator_binding_tunnel_connections',
      'tuna_operator_certificate_expiry_timestamp_seconds',
    ]);
    for (const name of names) expect(text).to.match(new RegExp(`^# HELP ${name} \\S`, 'm'));
    expect(text.endsWith('\n')).to.equal(true);
  });

  it('renders the data plane\'s UDP losses by reason, every reason from 0, beside its own families', async () => {
    const udp = new UdpMetrics();
    const health = new OperatorHealth(sources(), Date.now, [udp.registry]);
    const zero = (await health.metrics()).split('\n');
    for (const reason of ['too-large', 'queue-full', 'backend-unreachable']) expect(zero).to.include(`tuna_operator_udp_datagrams_dropped_total{reason="${reason}"} 0`);
    for (const reason of ['udp-off', 'no-route', 'no-endpoint', 'backend-error']) expect(zero).to.include(`tuna_operator_udp_flows_refused_total{reason="${reason}"} 0`);
    udp.dropped('queue-full');
    udp.dropped('queue-full');
    udp.refused('no-route');
    const text = (await health.metrics()).split('\n');
    expect(text).to.include('tuna_operator_udp_datagrams_dropped_total{reason="queue-full"} 2');
    expect(text).to.include('tuna_operator_udp_datagrams_dropped_total{reason="too-large"} 0');
    expect(text).to.include('tuna_operator_udp_flows_refused_total{reason="no-route"} 1');
    expect(text).to.include('tuna_operator_ready 0');
  });
});

describe('--health-addr', () => {
  const codec = t.partial({ 'health-addr': ListenAddressString });
  it('reads HOST:PORT, [IPv6]:PORT and :PORT (every interface)', () => {
    expect(decodeFlags(codec, { 'health-addr': '127.0.0.1:8080' }, 'operator')).to.deep.equal({ 'health-addr': { host: '127.0.0.1', port: 8080 } });
    expect(decodeFlags(codec, { 'health-addr': '[::1]:0' }, 'operator')).to.deep.equal({ 'health-addr': { host: '::1', port: 0 } });
    expect(decodeFlags(codec, { 'health-addr': ':8080' }, 'operator')).to.deep.equal({ 'health-addr': { port: 8080 } });
  });
  it('refuses anything else, naming the flag', () => {
    for (const bad of ['8080', 'localhost', ':70000', 'a b:1', 'http://x:1'])
      expect(() => decodeFlags(codec, { 'health-addr': bad }, 'operator'), bad).to.throw(UsageError, /--health-addr .* must be HOST:PORT, \[IPv6\]:PORT or :PORT/);
  });
});
