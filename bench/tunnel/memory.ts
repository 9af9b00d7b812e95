/**
 * Resident memory of benchmark processes, read from /proc (Linux): VmRSS of a process and of its
 * descendants (nginx workers, for instance), in bytes.
 */
import { readFileSync, readdirSync } from 'node:fs';

function readStatus(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
}

/** rssBytes is one process's VmRSS in bytes (0 when it is gone). */
export function rssBytes(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readStatus(pid) ?? '')?.[1];
  return kib === undefined ? 0 : Number(kib) * 1024;
}

/** descendants lists the pids whose parent chain leads to `pid` (one scan of /proc). */
export function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const ppid = /PPid:\s+(\d+)/.exec(readStatus(Number(entry)) ?? '')?.[1];
    if (ppid !== undefined) parent.set(Number(entry), Number(ppid));
  }
  const found: number[] = [];
  for (const [child] of parent) {
    let p = parent.get(child);
    for (let hops = 0; p !== undefined && hops < 64; hops++) {
      if (p === pid) {
        found.push(child);
        break;
      }
      p = parent.get(p);
    }
  }
  return found;
}

/** treeRss sums VmRSS over each pid and all its descendants. */
export function treeRss(pids: number[]): number {
  let total = 0;
  for (const pid of pids) for (const p of [pid, ...descendants(pid)]) total += rssBytes(p);
  return total;
}
