// leftovers.ts — finds anything of the test cluster that is still on the machine.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { BRIDGE_NAME, NETNS_PREFIX, VETH_PREFIX } from '../support/kubelet/pod-network.js';

const run = promisify(execFile);

/** Leftovers lists what remains, by kind; all empty means clean. */
export interface Leftovers {
  readonly processes: string[];
  readonly netns: string[];
  readonly links: string[];
  readonly mounts: string[];
}

/** findProcesses lists live processes whose command line contains one of the markers. */
export function findProcesses(markers: readonly string[]): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      continue; // exited meanwhile
    }
    if (markers.some((marker) => cmdline.includes(marker))) found.push(`${entry} ${cmdline.slice(0, 160)}`);
  }
  return found;
}

/** findLeftovers looks for our processes (by markers), network namespaces, links and mounts. */
export async function findLeftovers(markers: readonly string[]): Promise<Leftovers> {
  const netns = (await run('ip', ['netns', 'list'])).stdout
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => name.startsWith(NETNS_PREFIX));
  const links = (await run('ip', ['-o', 'link', 'show'])).stdout
    .split('\n')
    .map((line) => (line.split(': ')[1] ?? '').split('@')[0] ?? '')
    .filter((name) => name === BRIDGE_NAME || name.startsWith(VETH_PREFIX) || name.startsWith('tkp-'));
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => line.includes(NETNS_PREFIX) || markers.some((marker) => line.includes(marker)));
  return { processes: findProcesses(markers), netns, links, mounts };
}
