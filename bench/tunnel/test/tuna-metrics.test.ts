import { expect } from 'chai';
import { tunnelCount } from '../contenders/tuna.js';

describe('bench/tunnel tuna: tunnel count from /metrics', () => {
  const binding = 'binding/host/idle-2.bench.tuna.test';

  it('reads the gauge of one binding on an edge of one process', () => {
    const text = ['# TYPE tuna_edge_tunnels gauge', `tuna_edge_tunnels{binding="${binding}"} 7`, 'tuna_edge_tunnels{binding="binding/host/other.test"} 3'].join('\n');
    expect(tunnelCount(text, binding)).to.equal(7);
  });

  it('sums the series of every worker of a multi-worker edge, whatever the label order', () => {
    const text = [
      `tuna_edge_tunnels{binding="${binding}",worker="0"} 5`,
      `tuna_edge_tunnels{worker="1",binding="${binding}"} 4`,
      `tuna_edge_tunnels{binding="${binding}x",worker="1"} 9`,
      'tuna_edge_tunnel_handshakes_total{result="ok",worker="0"} 12',
    ].join('\n');
    expect(tunnelCount(text, binding)).to.equal(9);
  });

  it('counts 0 when the binding has no series (or the scrape failed)', () => {
    expect(tunnelCount('', binding)).to.equal(0);
    expect(tunnelCount('tuna_edge_streams_active 0', binding)).to.equal(0);
  });
});
