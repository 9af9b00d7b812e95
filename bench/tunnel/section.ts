/**
 * The markdown section the `tunnel` part writes into docs/benchmarks.md: how the run was made (so a
 * reader can judge the figures without opening docs/benchmarking.md), then the tables and notes.
 */
import { tmpdir } from 'node:os';
import { machineLine } from '../report.js';
import type { Figures } from './table.js';
import { figuresTable, memoryTable, notesList, ratiosTable } from './table.js';
import { repoRoot } from './tools.js';

/** RunFacts are the settings and circumstances of one run that the section states. */
export interface RunFacts {
  runs: number;
  seconds: number;
  transferBytes: number;
  rate: number;
  tunnels: number;
  connections: number;
  wrkThreads: number;
  latencyClients: number;
  versions: Record<string, string>;
  /** 1-minute load average before and after the run: other work on a shared machine shows here */
  load: [number, number];
  notes: string[];
  /** rows of the memory table only (tuna's bindings on one shared connection): no load figures */
  memoryOnly?: Figures[];
}

/** renderSection is the whole `tunnel` section of docs/benchmarks.md. */
export function renderSection(all: Figures[], f: RunFacts & { seconds: number }): string {
  const en = (n: number) => n.toLocaleString('en-US');
  const size = f.transferBytes === 2 ** 30 ? '1 GiB' : `${en(f.transferBytes)} bytes`;
  const lines = [
    '## tunnel: direct, nginx, frp, chisel and tuna on loopback',
    '',
    `Machine: ${machineLine()}; 1-minute load average ${f.load[0].toFixed(1)} before, ${f.load[1].toFixed(1)} after (other jobs share these cores).`,
    `Tools: ${Object.entries(f.versions).map(([k, v]) => `${k} ${v}`).join(', ')}. Method and fairness: [docs/benchmarking.md](benchmarking.md). What limits tuna, its CPU profile and the measured attempts to close each gap: [docs/tunnel-performance.md](tunnel-performance.md).`,
    '',
    `- Each figure is the median of ${f.runs} rounds; each round visits every contender in a rotated order, all of them running side by side.`,
    `- req/s: wrk, ${f.connections} keep-alive HTTP/1.1 connections, ${f.wrkThreads} threads, 1 KiB responses.`,
    `- Latency: h2load, HTTP/1.1 keep-alive, ${en(f.rate)} req/s offered (${f.latencyClients} connections × ${en(f.rate / f.latencyClients)} req/s) after 1 s of warm-up; exact percentiles over every request.`,
    `- Download / upload: one transfer of ${size} each (MB = 10⁶ bytes), curl for the download, a Node client process for the upload; the byte count is checked.`,
    '- First byte: from spawning a fresh tunnel client against the running server to the first byte of a 200 through it, process start included.',
    `- Memory: VmRSS of server + client processes, idle, with 1 and with ${en(f.tunnels)} tunnels.`,
    '',
    ...all.map((x) => `- **${x.name}**: ${x.description}`),
    '',
    figuresTable(all, f.rate, size),
    '',
    ratiosTable(all),
  ];
  const memory = memoryTable([...all, ...(f.memoryOnly ?? [])]);
  if (memory) lines.push('', memory);
  const notes = [...notesList([...all, ...(f.memoryOnly ?? [])], f.rate), ...f.notes];
  if (notes.length > 0) lines.push('', 'Notes:', '', ...notes);
  lines.push('', `Run took ${f.seconds.toFixed(0)} s.`);
  return redactPaths(lines.join('\n'));
}

/**
 * redactPaths replaces this checkout's and the temp directory's absolute paths (which reach the
 * text through a failing tool's message) with neutral names: the report names no machine path.
 */
export function redactPaths(text: string, root = repoRoot, tmp = tmpdir()): string {
  // Whole path components only: a temp dir `/t` must not eat the `/t` of `/tuna-bench-…`.
  const whole = (path: string) => new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w.-])`, 'g');
  return text.replace(whole(root), '.').replace(whole(tmp), '$$TMPDIR');
}
