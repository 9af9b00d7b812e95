/**
 * The tunnel benchmark's report: per-contender figures (medians over rounds), ratios to direct and
 * to frp, idle memory per tunnel, and the contenders that could not run. Pure formatting.
 */
import type { MemoryFigure } from './contender.js';
import { median } from '../report.js';

/** Figures collects one contender's samples over the rounds of a run. */
export interface Figures {
  name: string;
  description: string;
  /** set when the contender could not start: the reason is reported instead of figures */
  unavailable?: string;
  rps: number[];
  p50: number[];
  p99: number[];
  achievedRate: number[];
  download: number[];
  upload: number[];
  firstByte: number[];
  memory?: MemoryFigure;
  /** failures of single measurements ("upload round 2: ..."), reported under the table */
  failures: string[];
  /** requests that failed inside otherwise valid load runs (non-2xx, socket errors) */
  requestErrors: number;
}

/** emptyFigures starts a contender's record. */
export function emptyFigures(name: string, description: string): Figures {
  return { name, description, rps: [], p50: [], p99: [], achievedRate: [], download: [], upload: [], firstByte: [], failures: [], requestErrors: 0 };
}

/** medianOf is the median of the samples, or undefined when there are none. */
export function medianOf(samples: number[]): number | undefined {
  return samples.length > 0 ? median(samples) : undefined;
}

const dash = '—';
const grouped = (n: number) => Math.round(n).toLocaleString('en-US');

/** formatNumber renders a figure with its unit, or a dash when it is missing. */
export function formatNumber(value: number | undefined, unit: 'req/s' | 'ms' | 'MB/s' | 'KiB' | 'MiB'): string {
  if (value === undefined || !Number.isFinite(value)) return dash;
  switch (unit) {
    case 'req/s':
      return grouped(value);
    case 'ms':
      return `${value < 10 ? value.toFixed(2) : grouped(value)} ms`;
    case 'MB/s':
      return `${grouped(value)} MB/s`;
    case 'KiB':
      return `${value.toFixed(1)} KiB`;
    case 'MiB':
      return `${(value / 2 ** 20).toFixed(1)} MiB`;
  }
}

/** formatRatio renders a / b as "0.42×", or a dash when either is missing. */
export function formatRatio(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return dash;
  return `${(a / b).toFixed(2)}×`;
}

/** formatAdded renders a − b in milliseconds with a sign. */
export function formatAdded(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined) return dash;
  const d = a - b;
  return `${d >= 0 ? '+' : '−'}${Math.abs(d).toFixed(2)} ms`;
}

function row(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function table(head: string[], rows: string[][]): string {
  return [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');
}

/** figuresTable is the main table: one row per contender that ran; `size` names the transfer (e.g. "1 GiB"). */
export function figuresTable(all: Figures[], rate: number, size = '1 GiB'): string {
  const ran = all.filter((f) => !f.unavailable);
  return table(
    ['contender', 'req/s, 64 conns, 1 KiB', `p50 @ ${grouped(rate)} req/s`, `p99 @ ${grouped(rate)} req/s`, `download ${size}`, `upload ${size}`, 'first byte, fresh tunnel'],
    ran.map((f) => [
      f.name,
      formatNumber(medianOf(f.rps), 'req/s'),
      formatNumber(medianOf(f.p50), 'ms'),
      formatNumber(medianOf(f.p99), 'ms'),
      formatNumber(medianOf(f.download), 'MB/s'),
      formatNumber(medianOf(f.upload), 'MB/s'),
      formatNumber(medianOf(f.firstByte), 'ms'),
    ]),
  );
}

/** ratiosTable compares every contender with direct and with frp (the two yardsticks). */
export function ratiosTable(all: Figures[]): string {
  const find = (name: string) => all.find((f) => f.name === name && !f.unavailable);
  const direct = find('direct');
  const frp = find('frp');
  const m = (f: Figures | undefined, key: 'rps' | 'p99' | 'download' | 'upload') => (f ? medianOf(f[key]) : undefined);
  return table(
    ['contender', 'req/s ÷ direct', 'req/s ÷ frp', 'p99 added over direct', 'download ÷ direct', 'download ÷ frp', 'upload ÷ direct', 'upload ÷ frp'],
    all
      .filter((f) => !f.unavailable)
      .map((f) => [
        f.name,
        formatRatio(m(f, 'rps'), m(direct, 'rps')),
        formatRatio(m(f, 'rps'), m(frp, 'rps')),
        formatAdded(m(f, 'p99'), m(direct, 'p99')),
        formatRatio(m(f, 'download'), m(direct, 'download')),
        formatRatio(m(f, 'download'), m(frp, 'download')),
        formatRatio(m(f, 'upload'), m(direct, 'upload')),
        formatRatio(m(f, 'upload'), m(frp, 'upload')),
      ]),
  );
}

/** memoryTable shows idle RSS with one and with many tunnels, and the cost of each extra tunnel. */
export function memoryTable(all: Figures[]): string | undefined {
  const measured = all.filter((f) => f.memory);
  if (measured.length === 0) return undefined;
  return table(
    ['contender', 'RSS, 1 tunnel', 'RSS, many tunnels', 'per extra tunnel', 'how'],
    measured.map((f) => {
      const mem = f.memory as MemoryFigure;
      const perTunnel = (mem.rssMany - mem.rssOne) / Math.max(1, mem.tunnels - 1) / 1024;
      return [f.name, formatNumber(mem.rssOne, 'MiB'), `${formatNumber(mem.rssMany, 'MiB')} (${grouped(mem.tunnels)})`, formatNumber(perTunnel, 'KiB'), mem.note];
    }),
  );
}

/** notesList reports unavailable contenders, failed measurements, request errors and missed rates. */
export function notesList(all: Figures[], rate: number): string[] {
  const notes: string[] = [];
  for (const f of all) {
    if (f.unavailable) notes.push(`- ${f.name}: not available (${f.unavailable})`);
    for (const failure of groupFailures(f.failures)) notes.push(`- ${f.name}: ${failure}`);
    if (f.requestErrors > 0) notes.push(`- ${f.name}: ${grouped(f.requestErrors)} failed requests during load runs (figures suspect)`);
    const achieved = medianOf(f.achievedRate);
    if (achieved !== undefined && achieved < 0.95 * rate) notes.push(`- ${f.name}: the fixed-rate run reached only ${grouped(achieved)} of ${grouped(rate)} req/s (latency figures include queueing)`);
  }
  return notes;
}

/**
 * groupFailures folds "<figure> round <n>: <message>" lines that differ only in the round into
 * "<figure> rounds 1, 2, 3: <message>", so a contender that died reads as one line per figure.
 */
export function groupFailures(failures: string[]): string[] {
  const groups = new Map<string, string[]>();
  const out: string[] = [];
  for (const line of failures) {
    const m = /^(.*) round (\d+): (.*)$/.exec(line);
    if (!m) {
      out.push(line);
      continue;
    }
    const key = `${m[1]}\u0000${m[3]}`;
    const rounds = groups.get(key);
    if (rounds) rounds.push(m[2] as string);
    else {
      groups.set(key, [m[2] as string]);
      out.push(key);
    }
  }
  return out.map((entry) => {
    const rounds = groups.get(entry);
    if (!rounds) return entry;
    const [figure, message] = entry.split('\u0000');
    return `${figure} round${rounds.length > 1 ? 's' : ''} ${rounds.join(', ')}: ${message}`;
  });
}
