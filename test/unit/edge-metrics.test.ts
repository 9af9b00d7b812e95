import { expect } from 'chai';
import { EdgeMetrics } from '../../src/edge/index.js';
import { statusClass } from '../../src/edge/metrics/metrics.js';
import type { TunnelRegistry } from '../../src/edge/tunnels/tunnel-registry.js';

/** tunnels is the part of a TunnelRegistry the exposition reads: live connections by binding, and bytes. */
function tunnels(count: [string, number][], bytes = { in: 0, out: 0 }): TunnelRegistry {
  return { count: () => new Map(count), bytes: () => bytes } as unknown as TunnelRegistry;
}

/** The edge's families, in the order the hand-written exposition had them, and the histogram prom-client brought. */
const FAMILIES = [
  ['tuna_edge_tunnels', 'gauge'],
  ['tuna_edge_tunnel_handshakes_total', 'counter'],
  ['tuna_edge_streams_active', 'gauge'],
  ['tuna_edge_streams_total', 'counter'],
  ['tuna_edge_public_connections_total', 'counter'],
  ['tuna_edge_binding_listener_failures_total', 'counter'],
  ['tuna_edge_binding_listeners_failing', 'gauge'],
  ['tuna_edge_public_connections_open', 'gauge'],
  ['tuna_edge_public_connections_refused_total', 'counter'],
  ['tuna_edge_public_timeouts_total', 'counter'],
  ['tuna_edge_public_http2_goaways_total', 'counter'],
  ['tuna_edge_tunnel_listener_connections_open', 'gauge'],
  ['tuna_edge_tunnel_listener_closed_total', 'counter'],
  ['tuna_edge_udp_flows_total', 'counter'],
  ['tuna_edge_udp_flows_active', 'gauge'],
  ['tuna_edge_udp_datagrams_total', 'counter'],
  ['tuna_edge_udp_datagrams_dropped_total', 'counter'],
  ['tuna_edge_udp_flow_ends_total', 'counter'],
  ['tuna_edge_requests_total', 'counter'],
  ['tuna_edge_answers_total', 'counter'],
  ['tuna_edge_certificate_expiry_timestamp_seconds', 'gauge'],
  ['tuna_edge_control_requests_total', 'counter'],
  ['tuna_edge_tunnel_bytes_total', 'counter'],
  ['tuna_edge_request_duration_seconds', 'histogram'],
];

describe('EdgeMetrics (prom-client)', () => {
  it('renders every family with HELP and TYPE, the names, types and labels it had, series sorted by label', async () => {
    const metrics = new EdgeMetrics();
    metrics.streamsTotal = 7;
    metrics.streamsActive = 2;
    metrics.publicConnections = 3;
    metrics.countHandshake('revoked');
    metrics.countHandshake('granted');
    metrics.countHandshake('granted');
    metrics.countControlRequest('POST');
    metrics.countControlRequest('GET');
    metrics.countControlRequest('get me');
    metrics.countPublicTimeout('idle');
    metrics.countTunnelListenerClose('first-byte');
    metrics.udpFlowsTotal = 4;
    metrics.udpFlowsActive = 1;
    metrics.countUdpDatagram('in');
    metrics.countUdpDrop('queue-full', 3);
    metrics.countUdpDrop('binding-flow-limit');
    metrics.countUdpFlowEnd('idle');
    const text = await metrics.render(tunnels([['binding/host/b.test', 1], ['binding/host/a"q.test', 2]], { in: 10, out: 20 }));
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]);
    expect(types).to.deep.equal(FAMILIES);
    for (const [name] of FAMILIES) expect(text).to.match(new RegExp(`^# HELP ${name!} \\S`, 'm'));
    const lines = text.split('\n');
    expect(lines).to.include.members([
      'tuna_edge_streams_total 7',
      'tuna_edge_streams_active 2',
      'tuna_edge_public_connections_total 3',
      'tuna_edge_public_timeouts_total{phase="idle"} 1',
      'tuna_edge_tunnel_listener_closed_total{cause="first-byte"} 1',
      'tuna_edge_tunnel_bytes_total{direction="in"} 10',
      'tuna_edge_tunnel_bytes_total{direction="out"} 20',
      'tuna_edge_binding_listeners_failing 0',
      'tuna_edge_udp_flows_total 4',
      'tuna_edge_udp_flows_active 1',
      'tuna_edge_udp_datagrams_total{direction="in"} 1',
      'tuna_edge_udp_flow_ends_total{cause="idle"} 1',
    ]);
    expect(lines.filter((l) => l.startsWith('tuna_edge_udp_datagrams_dropped_total{'))).to.deep.equal(['tuna_edge_udp_datagrams_dropped_total{reason="binding-flow-limit"} 1', 'tuna_edge_udp_datagrams_dropped_total{reason="queue-full"} 3']);
    expect(lines.filter((l) => l.startsWith('tuna_edge_tunnels{'))).to.deep.equal(['tuna_edge_tunnels{binding="binding/host/a\\"q.test"} 2', 'tuna_edge_tunnels{binding="binding/host/b.test"} 1']);
    expect(lines.filter((l) => l.startsWith('tuna_edge_tunnel_handshakes_total{'))).to.deep.equal(['tuna_edge_tunnel_handshakes_total{result="granted"} 2', 'tuna_edge_tunnel_handshakes_total{result="revoked"} 1']);
    expect(lines.filter((l) => l.startsWith('tuna_edge_control_requests_total{'))).to.deep.equal(['tuna_edge_control_requests_total{method="GET"} 1', 'tuna_edge_control_requests_total{method="OTHER"} 1', 'tuna_edge_control_requests_total{method="POST"} 1']);
    expect(text.endsWith('\n')).to.equal(true);
  });

  it('follows the live tunnels from one scrape to the next (a binding gone is no longer listed)', async () => {
    const metrics = new EdgeMetrics();
    expect(await metrics.render(tunnels([['binding/host/a.test', 1]]))).to.include('tuna_edge_tunnels{binding="binding/host/a.test"} 1');
    expect(await metrics.render(tunnels([]))).not.to.include('tuna_edge_tunnels{');
  });

  it('observes a begun request once in the duration histogram by front and status class; counts every answer by code', async () => {
    const metrics = new EdgeMetrics();
    const [a, b, c] = [{}, {}, {}];
    metrics.beginRequest(a);
    metrics.countRequest(200, a, 'http1');
    // a second answer on the same exchange (the edge's own 502 after a failed relay) is counted, not timed again
    metrics.countRequest(502, a, 'http1');
    metrics.beginRequest(b);
    metrics.countRequest(404, b, 'http2');
    // an answer whose start was not seen is counted, not timed
    metrics.countRequest(200, c, 'websocket');
    const lines = (await metrics.render(tunnels([]))).split('\n');
    expect(lines).to.include.members([
      'tuna_edge_requests_total{code="200"} 2',
      'tuna_edge_requests_total{code="404"} 1',
      'tuna_edge_requests_total{code="502"} 1',
      'tuna_edge_request_duration_seconds_count{front="http1",code_class="2xx"} 1',
      'tuna_edge_request_duration_seconds_count{front="http2",code_class="4xx"} 1',
      'tuna_edge_request_duration_seconds_bucket{le="+Inf",front="http1",code_class="2xx"} 1',
    ]);
    expect(lines.filter((l) => l.startsWith('tuna_edge_request_duration_seconds_count'))).to.have.length(2);
  });

  it('counts the edge’s own answers by reason, and lists each certificate’s expiry by hostname and source', async () => {
    const metrics = new EdgeMetrics();
    metrics.countEdgeAnswer('no-tunnel');
    metrics.countEdgeAnswer('no-tunnel');
    metrics.countEdgeAnswer('unknown-host');
    let certificates = [
      { hostname: 'b.test', source: 'store' as const, notAfter: 1_900_000_000_500 },
      { hostname: '*.a.test', source: 'static' as const, notAfter: 1_800_000_000_000 },
    ];
    metrics.certificates = () => certificates;
    const lines = (await metrics.render(tunnels([]))).split('\n');
    expect(lines.filter((l) => l.startsWith('tuna_edge_answers_total{'))).to.deep.equal(['tuna_edge_answers_total{reason="no-tunnel"} 2', 'tuna_edge_answers_total{reason="unknown-host"} 1']);
    expect(lines.filter((l) => l.startsWith('tuna_edge_certificate_expiry_timestamp_seconds{'))).to.deep.equal([
      'tuna_edge_certificate_expiry_timestamp_seconds{hostname="*.a.test",source="static"} 1800000000',
      'tuna_edge_certificate_expiry_timestamp_seconds{hostname="b.test",source="store"} 1900000000.5',
    ]);
    certificates = [];
    expect((await metrics.render(tunnels([]))).split('\n').filter((l) => l.startsWith('tuna_edge_certificate_expiry_timestamp_seconds{')), 'a certificate gone is no longer listed').to.deep.equal([]);
  });

  it('keeps each edge’s metrics its own (no global registry)', async () => {
    const one = new EdgeMetrics();
    const two = new EdgeMetrics();
    one.countHandshake('granted');
    expect(await two.render(tunnels([]))).not.to.include('tuna_edge_tunnel_handshakes_total{');
  });

  it('names status classes 1xx to 5xx, and other outside 100–599', () => {
    expect([101, 200, 302, 404, 503, 0, 600].map(statusClass)).to.deep.equal(['1xx', '2xx', '3xx', '4xx', '5xx', 'other', 'other']);
  });
});
