/**
 * Resident memory of benchmark processes, read from /proc (Linux): VmRSS of a process, in bytes.
 */
import { readFileSync } from 'node:fs';

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
