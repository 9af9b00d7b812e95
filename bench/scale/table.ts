/**
 * The scale benchmark's figures per number of hosts, and the markdown table docs/benchmarks.md
 * shows them in.
 */

/** OneNew is the level's "one new Ingress → 200" rounds: each round's ms, and the medians of their parts. */
export interface OneNew {
  /** rounds asked for (`--rounds`) */
  asked: number;
  /** each round that reached 200, create call to the first 200 (fewer than `asked`: a round never did, and the level stopped there) */
  rounds: number[];
  /** the create call's median */
  createMs?: number;
  /** the operator's syncs per round (medians): how many, their ms, their ms by phase */
  syncs?: { count: number; ms: number; phases: Record<string, number> };
}

/** ScaleRow is what one level of hosts measured. */
export interface ScaleRow {
  hosts: number;
  /** the last batch of the level: its size, how long its creates took, and until all its hosts answered 200 */
  batch: { added: number; createMs: number; allMs: number; pending: number; lastStatuses: Record<string, number> } | undefined;
  /** one more Ingress at a time, from its create call to the first 200 for its host */
  oneNew: OneNew;
  operator: { rssBytes: number; cpuSeconds: number; fds: number };
  edge: { rssBytes: number; cpuSeconds: number; fds: number };
  /** ESTABLISHED TCP connections to the edge's tunnel listener (the operator's tunnels and control API calls) */
  connections: number;
  /** control API calls the edge answered while the level was added */
  controlCalls: number;
  idle: { seconds: number; operatorCpuPercent: number; edgeCpuPercent: number; controlCallsPerMinute: number };
  /** a process that died during the level, and the telling line of its output */
  failure?: string;
}

const mib = (bytes: number): string => `${Math.round(bytes / 2 ** 20).toLocaleString('en-US')} MiB`;
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const int = (n: number): string => Math.round(n).toLocaleString('en-US');

function batchCell(row: ScaleRow): string {
  const b = row.batch;
  if (row.failure !== undefined) return `**failed**: ${row.failure.replace(/\|/g, '/')}`;
  if (b === undefined) return '—';
  if (b.pending > 0) {
    const statuses = Object.entries(b.lastStatuses).map(([s, n]) => `${int(n)}× ${s}`).join(', ');
    return `**never** within ${seconds(b.allMs)}: ${int(b.pending)} of +${int(b.added)} not 200 (last round: ${statuses})`;
  }
  return `${seconds(b.allMs)} (+${int(b.added)}; created in ${seconds(b.createMs)}, all 200 ${seconds(Math.max(0, b.allMs - b.createMs))} after the last create)`;
}

function oneNewCell(o: OneNew): string {
  if (o.rounds.length === 0) return o.asked > 0 ? '**never**' : '—';
  const sorted = [...o.rounds].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const never = o.rounds.length < o.asked ? `; round ${o.rounds.length + 1} **never**` : '';
  return `${int(median)} ms (${int(sorted[0]!)}–${int(sorted.at(-1)!)}, ${o.rounds.length} rounds${never})`;
}

function partsCell(o: OneNew): string {
  if (o.createMs === undefined || o.syncs === undefined) return '—';
  const p = o.syncs.phases;
  const phases = ['translate', 'admit', 'reconcile', 'apply', 'status'].map((k) => int(p[k] ?? 0)).join(' / ');
  return `create ${int(o.createMs)} ms; ${o.syncs.count} syncs ${int(o.syncs.ms)} ms (${phases})`;
}

/** renderScaleTable is the markdown table of the rows. */
export function renderScaleTable(rows: readonly ScaleRow[]): string {
  const head = [
    'hosts', 'batch → all 200', 'one new Ingress → 200: median (min–max)', 'its parts: create call; operator syncs (translate / validate / reconcile / apply / statuses)', 'operator RSS', 'edge RSS', 'operator CPU (level)', 'edge CPU (level)',
    'operator↔edge TCP', 'descriptors op / edge', 'control-API calls (level)', 'idle CPU op / edge', 'idle control-API calls/min',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of rows) {
    lines.push(
      `| ${[
        int(r.hosts),
        batchCell(r),
        oneNewCell(r.oneNew),
        partsCell(r.oneNew),
        mib(r.operator.rssBytes),
        mib(r.edge.rssBytes),
        `${r.operator.cpuSeconds.toFixed(1)} s`,
        `${r.edge.cpuSeconds.toFixed(1)} s`,
        int(r.connections),
        `${int(r.operator.fds)} / ${int(r.edge.fds)}`,
        int(r.controlCalls),
        `${r.idle.operatorCpuPercent.toFixed(1)} % / ${r.idle.edgeCpuPercent.toFixed(1)} %`,
        r.idle.controlCallsPerMinute.toFixed(1),
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}
