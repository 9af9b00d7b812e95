/**
 * src/cli/agent-process-plan: how many agent processes `tuna http` runs — the usable CPUs by
 * default (the cgroup's cpu.max first, then the core count), one when something asked for needs
 * one process, or what `--processes` / `$TUNA_PROCESSES` pins.
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_PROCESSES, pinnedProcesses, planProcesses } from '../../src/cli/agent-process-plan.js';
import { singleProcessReasons } from '../../src/cli/commands/http.js';
import { CGROUP_V2_CPU_MAX, cgroupCpuLimit, cgroupReaderAt, usableCpuCount } from '../../src/cli/cpu-limit.js';
import { UsageError } from '../../src/cli/errors.js';

describe('tuna http: the number of agent processes', () => {
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'tuna-cgroup-'));
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** cpusWith writes a cgroup v2 cpu.max fixture (none for undefined) and reads the usable CPUs of a machine of `cores` through it. */
  function cpusWith(cpuMax: string | undefined, cores: number): number {
    if (cpuMax !== undefined) {
      mkdirSync(join(root, '/sys/fs/cgroup'), { recursive: true });
      writeFileSync(join(root, CGROUP_V2_CPU_MAX), cpuMax);
    }
    return usableCpuCount(cores, cgroupCpuLimit(cgroupReaderAt(root)));
  }

  it('defaults to the CPU limit of the cgroup cpu.max file, rounded up, within the core count', () => {
    expect(planProcesses(undefined, [], cpusWith('200000 100000\n', 8))).to.deep.equal({ count: 2, isPinned: false });
    expect(planProcesses(undefined, [], cpusWith('150000 100000\n', 8))).to.deep.equal({ count: 2, isPinned: false });
    expect(planProcesses(undefined, [], cpusWith('50000 100000\n', 8))).to.deep.equal({ count: 1, isPinned: false });
    expect(planProcesses(undefined, [], cpusWith('1600000 100000\n', 4))).to.deep.equal({ count: 4, isPinned: false });
  });

  it('falls back to os.availableParallelism() when cpu.max says "max" or no cgroup file can be read', () => {
    const cores = availableParallelism();
    expect(planProcesses(undefined, [], cpusWith('max 100000\n', cores)).count).to.equal(Math.min(cores, MAX_PROCESSES));
    expect(planProcesses(undefined, [], cpusWith(undefined, cores)).count).to.equal(Math.min(cores, MAX_PROCESSES));
    expect(planProcesses(undefined, [], cpusWith(undefined, 6)).count).to.equal(6);
  });

  it('runs at most MAX_PROCESSES by default, and one on one CPU without a note', () => {
    expect(planProcesses(undefined, [], 200)).to.deep.equal({ count: MAX_PROCESSES, isPinned: false });
    expect(planProcesses(undefined, ['a reason'], 1)).to.deep.equal({ count: 1, isPinned: false });
  });

  it('falls back to one process with a one-line note for an OIDC login without a cookie key, or a rate limit', () => {
    const cases: [boolean, boolean, string][] = [
      [true, false, '--oidc-issuer without --oidc-cookie-secret-file'],
      [false, true, '--rate-limit counts per process'],
      [true, true, '--oidc-issuer without --oidc-cookie-secret-file'],
    ];
    for (const [hasOwnCookieKey, hasRateLimit, named] of cases) {
      const plan = planProcesses(undefined, singleProcessReasons(hasOwnCookieKey, hasRateLimit), 2);
      expect(plan.count, named).to.equal(1);
      expect(plan.isPinned).to.equal(false);
      expect(plan.note).to.contain('one agent process, not 2: ').and.contain(named).and.contain('--processes N runs N');
      expect(plan.note).to.not.contain('\n');
    }
    expect(singleProcessReasons(false, false)).to.deep.equal([]);
  });

  it('keeps a pinned count whatever the CPUs and the reasons', () => {
    expect(planProcesses(3, [], 1)).to.deep.equal({ count: 3, isPinned: true });
    expect(planProcesses(1, [], 8)).to.deep.equal({ count: 1, isPinned: true });
    expect(planProcesses(4, singleProcessReasons(false, true), 8)).to.deep.equal({ count: 4, isPinned: true });
  });

  it('reads --processes, else $TUNA_PROCESSES (an empty one is unset), the flag first', () => {
    expect(pinnedProcesses(undefined, {}, 'http')).to.equal(undefined);
    expect(pinnedProcesses(undefined, { TUNA_PROCESSES: '' }, 'http')).to.equal(undefined);
    expect(pinnedProcesses('3', {}, 'http')).to.equal(3);
    expect(pinnedProcesses(undefined, { TUNA_PROCESSES: '2' }, 'http')).to.equal(2);
    expect(pinnedProcesses('1', { TUNA_PROCESSES: '4' }, 'http')).to.equal(1);
    expect(pinnedProcesses(String(MAX_PROCESSES), {}, 'http')).to.equal(MAX_PROCESSES);
  });

  it('refuses a count that is not 1 to MAX_PROCESSES as a usage error naming where it came from', () => {
    for (const value of ['0', String(MAX_PROCESSES + 1), 'two', '-1', '1.5']) {
      expect(() => pinnedProcesses(value, {}, 'http'), value).to.throw(UsageError, `tuna http: --processes ${JSON.stringify(value)} must be a whole number from 1 to ${MAX_PROCESSES}`);
      expect(() => pinnedProcesses(undefined, { TUNA_PROCESSES: value }, 'http'), value).to.throw(UsageError, '$TUNA_PROCESSES');
    }
  });
});
