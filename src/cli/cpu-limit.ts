import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * The CPUs tuna may use: the edge's default worker count (`tuna edge` without `--workers`) and the
 * agent's default process count (`tuna http` without `--processes`, agent-process-plan.ts) are the
 * core count, but no more than a container's CPU limit: `os.availableParallelism()` counts the
 * cores the process may run on, not the CPU time its cgroup may use, so a pod limited to 1.5 CPUs
 * on a 32-core node would otherwise start 32 workers.
 */

/** CgroupReader reads a file's text, or undefined when it cannot (absent, unreadable). */
export type CgroupReader = (path: string) => string | undefined;

/** CGROUP_V2_CPU_MAX is cgroup v2's `<quota> <period>` (or `max <period>`: no limit) of the process's own cgroup in a container. */
export const CGROUP_V2_CPU_MAX = '/sys/fs/cgroup/cpu.max';

/** CGROUP_V1_DIRS are where cgroup v1's cpu controller is mounted (cpu.cfs_quota_us, -1 = no limit, and cpu.cfs_period_us). */
export const CGROUP_V1_DIRS = ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct'] as const;

/** cgroupReaderAt reads the cgroup files under `root` (`''`: the machine's own; a folder of fixture files in tests). */
export function cgroupReaderAt(root: string): CgroupReader {
  return (path) => {
    try {
      return readFileSync(`${root}${path}`, 'utf8');
    } catch {
      return undefined;
    }
  };
}

const readText = cgroupReaderAt('');

/** quotaOf is quota ÷ period when both are positive whole numbers, else undefined (no limit, or text it cannot read). */
function quotaOf(quota: string | undefined, period: string | undefined): number | undefined {
  if (quota === undefined || period === undefined || !/^\d+$/.test(quota) || !/^\d+$/.test(period)) return undefined;
  const q = Number(quota);
  const p = Number(period);
  return q > 0 && p > 0 ? q / p : undefined;
}

/** cgroupCpuLimit is the container's CPU limit in CPUs (1.5 for "150000 100000"), or undefined when it has none or none can be read. */
export function cgroupCpuLimit(read: CgroupReader = readText): number | undefined {
  const v2 = read(CGROUP_V2_CPU_MAX);
  if (v2 !== undefined) {
    const [quota, period] = v2.trim().split(/\s+/);
    return quota === 'max' ? undefined : quotaOf(quota, period);
  }
  for (const dir of CGROUP_V1_DIRS) {
    const quota = read(`${dir}/cpu.cfs_quota_us`)?.trim();
    if (quota === undefined) continue;
    return quotaOf(quota, read(`${dir}/cpu.cfs_period_us`)?.trim());
  }
  return undefined;
}

/** usableCpuCount is min(the core count, the CPU limit rounded up), at least 1. */
export function usableCpuCount(cores: number = availableParallelism(), limit: number | undefined = cgroupCpuLimit()): number {
  const count = limit === undefined ? cores : Math.min(cores, Math.ceil(limit));
  return Math.max(1, Math.floor(count));
}
