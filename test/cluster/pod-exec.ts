// pod-exec.ts — `kubectl exec` for the test kubelet, which serves no exec endpoint: run a command in
// a running container the way a container runtime's exec does, by entering its namespaces (mount,
// network, root and working directory) as its user, with its image's PATH. Used where a doc says
// `kubectl exec` (the edge chart's bootstrap of the first key).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { HOST_PATH } from '../support/kubelet/container-process.js';
import { podNetworkNames } from '../support/kubelet/pod-network.js';

const run = promisify(execFile);

/** ExecResult is what the command printed. */
export interface ExecResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** findContainerProcess returns the pid of the pod's process whose command line `isMain` accepts. */
export async function findContainerProcess(podUid: string, isMain: (argv: string[]) => boolean): Promise<number> {
  const { netns } = podNetworkNames(podUid);
  const { stdout } = await run('ip', ['netns', 'pids', netns], { timeout: 10_000 });
  for (const pid of stdout.split(/\s+/).filter((p) => /^\d+$/.test(p))) {
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').filter((a) => a !== '');
    if (isMain(argv)) return Number(pid);
  }
  throw new Error(`no process of pod ${podUid} (network namespace ${netns}) matches`);
}

/** execInContainer runs argv inside the process's container as its user (uid and gid read from /proc), PATH `containerPath`. */
export async function execInContainer(pid: number, argv: readonly string[], containerPath: string, timeoutMs = 60_000): Promise<ExecResult> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
  const gid = /^Gid:\s+(\d+)/m.exec(status)?.[1];
  if (uid === undefined || gid === undefined) throw new Error(`/proc/${pid}/status has no Uid or Gid`);
  // -r -w: chroot to the process's root and cwd before the command is looked up on PATH
  const args = ['-t', String(pid), '-m', '-n', '-r', '-w', '-S', uid, '-G', gid, '--', ...argv];
  // nsenter is the host's (spawn would look it up on the container's PATH given in env)
  const nsenter = HOST_PATH.split(':').map((dir) => path.join(dir, 'nsenter')).find((file) => existsSync(file)) ?? 'nsenter';
  const { stdout, stderr } = await run(nsenter, args, { timeout: timeoutMs, env: { PATH: containerPath }, maxBuffer: 4 << 20 });
  return { stdout, stderr };
}
