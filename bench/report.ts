/**
 * Benchmark reporting: each part prints its figures and replaces its own section of
 * docs/benchmarks.md (between `<!-- bench:<part> -->` markers), so parts can run separately.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

const file = join(import.meta.dirname, '..', 'docs', 'benchmarks.md');
const header = `# Benchmarks

Written by \`npm run bench\` (each part rewrites only its own section). Figures are medians of
repeated runs on a shared, noisy machine: compare ratios within one run, not absolute numbers
across runs.
`;

/** median returns the middle value (the mean of the two middle ones for even counts). */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** machineLine describes where the figures were taken. */
export function machineLine(): string {
  return `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
}

/** writeSection replaces (or appends) the section of one benchmark part in docs/benchmarks.md. */
export function writeSection(part: string, markdown: string): void {
  const begin = `<!-- bench:${part} -->`;
  const end = `<!-- /bench:${part} -->`;
  const block = `${begin}\n${markdown.trim()}\n${end}`;
  let text = existsSync(file) ? readFileSync(file, 'utf8') : header;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  text = from >= 0 && to > from ? text.slice(0, from) + block + text.slice(to + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, text);
}
