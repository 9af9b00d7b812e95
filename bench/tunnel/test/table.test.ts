import { expect } from 'chai';
import type { Figures } from '../table.js';
import { redactPaths, renderSection } from '../section.js';
import { emptyFigures, formatAdded, formatRatio, groupFailures, memoryTable, notesList, ratiosTable } from '../table.js';

function figures(name: string, rps: number[], p99: number[], download: number[]): Figures {
  return { ...emptyFigures(name, `${name} path`), rps, p99, download };
}

describe('bench/tunnel report tables', () => {
  it('divides medians by the direct and the frp rows', () => {
    const all = [figures('direct', [100, 90, 110], [1], [1000]), figures('frp', [10, 30, 20], [3], [250]), figures('tuna', [40], [2.5], [500])];
    const tunaRow = ratiosTable(all).split('\n').find((l) => l.startsWith('| tuna '));
    expect(tunaRow).to.equal('| tuna | 0.40× | 2.00× | +1.50 ms | 0.50× | 2.00× | — | — |');
  });

  it('leaves the frp column empty when frp could not run', () => {
    const frp = { ...figures('frp', [], [], []), unavailable: 'frp is not built' };
    const rows = ratiosTable([figures('direct', [100], [1], [1000]), frp, figures('nginx', [50], [1.2], [400])]).split('\n');
    expect(rows.find((l) => l.startsWith('| nginx '))).to.equal('| nginx | 0.50× | — | +0.20 ms | 0.40× | — | — | — |');
    expect(rows.some((l) => l.startsWith('| frp '))).to.equal(false);
  });

  it('formats missing and zero baselines as a dash', () => {
    expect(formatRatio(1, 0)).to.equal('—');
    expect(formatRatio(undefined, 2)).to.equal('—');
    expect(formatAdded(0.5, 1.25)).to.equal('−0.75 ms');
  });

  it('reports the unavailable, the failed rounds, request errors and a missed rate', () => {
    const tuna = { ...emptyFigures('tuna', ''), unavailable: 'src/cli/main.ts does not exist yet' };
    const frp = { ...emptyFigures('frp', ''), failures: ['upload round 2: curl exit 28'], requestErrors: 5, achievedRate: [1200] };
    expect(notesList([tuna, frp], 2000)).to.deep.equal([
      '- tuna: not available (src/cli/main.ts does not exist yet)',
      '- frp: upload round 2: curl exit 28',
      '- frp: 5 failed requests during load runs (figures suspect)',
      '- frp: the fixed-rate run reached only 1,200 of 2,000 req/s (latency figures include queueing)',
    ]);
  });

  it('computes memory per extra tunnel from the 1- and n-tunnel RSS', () => {
    const frp = { ...emptyFigures('frp', ''), memory: { tunnels: 1001, rssOne: 40 * 2 ** 20, rssMany: 40 * 2 ** 20 + 1000 * 64 * 1024, note: 'one frpc' } };
    expect(memoryTable([frp])).to.contain('| 64.0 KiB |');
    expect(memoryTable([emptyFigures('direct', '')])).to.equal(undefined);
  });
});

describe('bench/tunnel section', () => {
  it('puts a memory-only row (bindings on one connection) in the memory table and its failure in the notes, not in the load tables', () => {
    const facts = { runs: 1, seconds: 1, transferBytes: 2 ** 30, rate: 2000, tunnels: 1000, connections: 64, wrkThreads: 2, latencyClients: 20, versions: {}, load: [0, 0] as [number, number], notes: [] };
    const tuna = { ...figures('tuna', [100], [1], [1000]), memory: { tunnels: 999, rssOne: 100 * 2 ** 20, rssMany: 300 * 2 ** 20, note: 'connections' } };
    const shared = { ...emptyFigures('tuna (bindings on one connection)', 'memory only'), memory: { tunnels: 1000, rssOne: 170 * 2 ** 20, rssMany: 170 * 2 ** 20 + 999 * 16 * 1024, note: 'one connection' } };
    const text = renderSection([tuna], { ...facts, memoryOnly: [shared] });
    const lines = text.split('\n').filter((l) => l.startsWith('| tuna (bindings on one connection)'));
    expect(lines).to.have.length(1);
    expect(lines[0]).to.contain('| 16.0 KiB |');
    const failed = { ...emptyFigures('tuna (bindings on one connection)', ''), failures: ['idle memory: no answer'] };
    expect(renderSection([tuna], { ...facts, memoryOnly: [failed] })).to.contain('- tuna (bindings on one connection): idle memory: no answer');
  });
});

describe('bench/tunnel report paths', () => {
  it('names no absolute path of the checkout or the temp directory', () => {
    const text = 'tuna edge exited 1: /src/x/src/cli/a.js not found; temp /t/tuna-bench-1/edge.yaml';
    expect(redactPaths(text, '/src/x', '/t')).to.equal('tuna edge exited 1: ./src/cli/a.js not found; temp $TMPDIR/tuna-bench-1/edge.yaml');
  });
});

describe('bench/tunnel failure notes', () => {
  it('folds the same failure over several rounds into one line, keeping different ones apart', () => {
    expect(
      groupFailures(['req/s round 1: wrk exited 1', 'req/s round 2: wrk exited 1', 'upload round 2: short', 'req/s round 3: other', 'idle memory: gone']),
    ).to.deep.equal(['req/s rounds 1, 2: wrk exited 1', 'upload round 2: short', 'req/s round 3: other', 'idle memory: gone']);
  });
});
