import { expect } from 'chai';
import { formatPlan, planParts } from '../../plan.js';
import { estimateTunnelSeconds, formatDuration, toolsNeeded } from '../plan.js';
import type { PlanOptions } from '../plan.js';
import { ensureTools } from '../tools.js';
import type { ToolScript } from '../tools.js';

const base: PlanOptions = { runs: 3, seconds: 5, transferBytes: 0, tunnels: 0, contenders: ['direct', 'nginx'], budgetSeconds: 540 };

/** what hack/bench-tools.sh prints, with the given tools present */
const printed = (present: Record<string, string>): string =>
  ['NGINX', 'WRK', 'H2LOAD', 'CURL', 'OPENSSL', 'FRPS', 'FRPC', 'CHISEL'].map((k) => `TUNA_${k}_BIN=${present[k] ?? ''}`).join('\n') + '\nTUNA_FRP_VERSION=0.65.0\n';

/** a fake script: `--check` prints `before`, an install prints `after`; every call is recorded */
function fakeScript(before: Record<string, string>, after: Record<string, string>, calls: string[][]): ToolScript {
  return (args) => {
    calls.push([...args]);
    return printed(args.includes('--check') ? before : after);
  };
}

const all = { NGINX: '/usr/sbin/nginx', WRK: '/usr/bin/wrk', H2LOAD: '/usr/bin/h2load', CURL: '/usr/bin/curl', OPENSSL: '/usr/bin/openssl', FRPS: '/c/frps', FRPC: '/c/frpc', CHISEL: '/c/chisel' };

describe('npm run bench: the plan printed before the run', () => {
  it('the tunnel estimate grows with the configured rounds, seconds and transfer size', () => {
    const one = estimateTunnelSeconds({ ...base, runs: 1 });
    const three = estimateTunnelSeconds(base);
    expect(three.rounds).to.be.closeTo(3 * one.rounds, 1e-9);
    // req/s + latency: 2 load runs of `seconds` per contender per round, at least
    expect(one.rounds).to.be.at.least(2 * 2 * 5);
    expect(estimateTunnelSeconds({ ...base, seconds: 10 }).total).to.be.greaterThan(three.total);
    expect(estimateTunnelSeconds({ ...base, transferBytes: 2 ** 30 }).total).to.be.greaterThan(three.total);
    expect(estimateTunnelSeconds({ ...base, tunnels: 1000, contenders: ['tuna'] }).memory).to.be.greaterThan(0);
    expect(three.cutByBudget).to.equal(false);
  });

  it('the time budget caps the rounds, but the first round of each figure always runs', () => {
    const big = { ...base, seconds: 60, contenders: ['direct', 'nginx', 'frp', 'chisel'], budgetSeconds: 120 };
    const e = estimateTunnelSeconds(big);
    const oneRound = estimateTunnelSeconds({ ...big, runs: 1, budgetSeconds: 1e9 }).rounds;
    expect(e.cutByBudget).to.equal(true);
    expect(oneRound).to.be.greaterThan(120);
    expect(e.rounds).to.equal(oneRound);
    const mid = estimateTunnelSeconds({ ...base, runs: 10, budgetSeconds: 100 });
    expect(mid.rounds).to.equal(100);
  });

  it('planParts reads the TUNA_BENCH_* knobs and prints one line per part, the total first', () => {
    const short = planParts(['tunnel'], { TUNA_BENCH_RUNS: '1', TUNA_BENCH_CONTENDERS: 'direct', TUNA_BENCH_BYTES: '0', TUNA_BENCH_TUNNELS: '0' })[0]!;
    const long = planParts(['tunnel'], { TUNA_BENCH_RUNS: '3', TUNA_BENCH_CONTENDERS: 'direct', TUNA_BENCH_BYTES: '0', TUNA_BENCH_TUNNELS: '0' })[0]!;
    expect(long.seconds!).to.be.greaterThan(short.seconds!);
    expect(short.basis).to.contain('1 contenders, 1 rounds of 5 s');
    const lines = formatPlan(planParts(['translate', 'tunnel', 'scale'], {}));
    expect(lines).to.have.length(4);
    expect(lines[0]).to.match(/^bench plan .*~\d+ min for the parts with an estimate$/);
    expect(lines[3]).to.equal('  scale: ? (no estimate (its flags decide))');
    expect(formatDuration(45)).to.equal('45 s');
    expect(formatDuration(600)).to.equal('10 min');
    expect(formatDuration(3900)).to.equal('1 h 5 min');
  });
});

describe('npm run bench: tools missing → hack/bench-tools.sh installs them', () => {
  it('all needed tools present: only --check runs, nothing is installed', () => {
    const calls: string[][] = [];
    const tools = ensureTools(toolsNeeded(['direct', 'nginx']), { script: fakeScript(all, all, calls), log: () => undefined });
    expect(calls).to.deep.equal([['--check']]);
    expect(tools.wrk).to.equal('/usr/bin/wrk');
  });

  it('wrk missing (a fresh machine): the install step runs and its paths are returned', () => {
    const calls: string[][] = [];
    const logged: string[] = [];
    const tools = ensureTools(toolsNeeded(['direct']), { script: fakeScript({ CURL: '/usr/bin/curl' }, all, calls), log: (l) => logged.push(l) });
    expect(calls).to.deep.equal([['--check'], []]);
    expect(tools.wrk).to.equal('/usr/bin/wrk');
    expect(logged.join('\n')).to.contain('missing wrk, h2load');
  });

  it('a contender tool missing (chisel) installs only when that contender runs', () => {
    const noChisel = { ...all, CHISEL: '' };
    const without: string[][] = [];
    ensureTools(toolsNeeded(['direct', 'frp']), { script: fakeScript(noChisel, all, without), log: () => undefined });
    expect(without).to.deep.equal([['--check']]);
    const withChisel: string[][] = [];
    ensureTools(toolsNeeded(['chisel']), { script: fakeScript(noChisel, all, withChisel), log: () => undefined });
    expect(withChisel).to.deep.equal([['--check'], []]);
  });

  it('TUNA_BENCH_INSTALL=0 (install: false) installs nothing; a failed install falls back to what --check finds', () => {
    const calls: string[][] = [];
    const tools = ensureTools(['wrk'], { install: false, script: fakeScript({}, all, calls), log: () => undefined });
    expect(calls).to.deep.equal([['--check']]);
    expect(tools.wrk).to.equal('');
    const failing: string[][] = [];
    const script: ToolScript = (args) => {
      failing.push([...args]);
      if (!args.includes('--check')) throw new Error('apt-get: permission denied');
      return printed({});
    };
    const logged: string[] = [];
    expect(ensureTools(['wrk'], { script, log: (l) => logged.push(l) }).wrk).to.equal('');
    expect(failing).to.deep.equal([['--check'], [], ['--check']]);
    expect(logged.at(-1)).to.contain('hack/bench-tools.sh failed: apt-get: permission denied');
  });
});
