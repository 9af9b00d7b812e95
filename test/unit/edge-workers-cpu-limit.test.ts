import { expect } from 'chai';
import { availableParallelism } from 'node:os';
import { CGROUP_V2_CPU_MAX, cgroupCpuLimit, usableCpuCount } from '../../src/cli/cpu-limit.js';
import type { CgroupReader } from '../../src/cli/cpu-limit.js';

/** a reader over fake file contents: a path not in `files` cannot be read */
const reader =
  (files: Record<string, string>): CgroupReader =>
  (path) =>
    files[path];

/** The edge's default worker count respects a container's CPU limit. */
describe('tuna edge: the default worker count and the cgroup CPU limit', () => {
  it('reads cgroup v2 cpu.max: "max 100000" is no limit, "150000 100000" is 1.5 CPUs', () => {
    expect(cgroupCpuLimit(reader({ [CGROUP_V2_CPU_MAX]: 'max 100000\n' }))).to.equal(undefined);
    expect(cgroupCpuLimit(reader({ [CGROUP_V2_CPU_MAX]: '150000 100000\n' }))).to.equal(1.5);
    expect(cgroupCpuLimit(reader({ [CGROUP_V2_CPU_MAX]: '400000 100000' }))).to.equal(4);
  });

  it('reads cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us when there is no cpu.max (-1 is no limit)', () => {
    const v1 = (quota: string, dir = '/sys/fs/cgroup/cpu'): CgroupReader =>
      reader({ [`${dir}/cpu.cfs_quota_us`]: `${quota}\n`, [`${dir}/cpu.cfs_period_us`]: '100000\n' });
    expect(cgroupCpuLimit(v1('50000'))).to.equal(0.5);
    expect(cgroupCpuLimit(v1('250000', '/sys/fs/cgroup/cpu,cpuacct'))).to.equal(2.5);
    expect(cgroupCpuLimit(v1('-1'))).to.equal(undefined);
  });

  it('no cgroup files, or text it cannot read, is no limit', () => {
    expect(cgroupCpuLimit(reader({}))).to.equal(undefined);
    for (const text of ['', 'garbage', '150000', '150000 0', '0 100000', '1.5 1'])
      expect(cgroupCpuLimit(reader({ [CGROUP_V2_CPU_MAX]: text })), JSON.stringify(text)).to.equal(undefined);
  });

  it('is min(the core count, the limit rounded up), at least 1', () => {
    expect(usableCpuCount(8, undefined)).to.equal(8);
    expect(usableCpuCount(8, 1.5)).to.equal(2);
    expect(usableCpuCount(8, 0.5)).to.equal(1);
    expect(usableCpuCount(2, 16)).to.equal(2);
    expect(usableCpuCount(0, undefined)).to.equal(1);
    expect(usableCpuCount(32, cgroupCpuLimit(reader({ [CGROUP_V2_CPU_MAX]: '150000 100000' })))).to.equal(2);
  });

  it('with the real files of this machine it is between 1 and the core count', () => {
    const count = usableCpuCount();
    expect(count).to.be.at.least(1);
    expect(count).to.be.at.most(Math.max(1, availableParallelism()));
    expect(Number.isInteger(count)).to.equal(true);
  });
});
