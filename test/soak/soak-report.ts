// soak-report.ts — what a soak run saw, as a table, and the targets and invariants as pass/fail lines.
import type { FaultRecord } from './soak-faults.js';
import type { ProcessFigures } from './soak-processes.js';
import { IDEMPOTENT, KINDS } from './soak-traffic.js';
import type { ProbeSample, Sample } from './soak-traffic.js';

/** Check is one target or invariant and whether it held. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** RoundFigures are the edge nodes' descriptors and memory after a fault settled. */
export interface RoundFigures {
  round: number;
  /** the fault (or pair) just settled */
  after: string;
  perEdge: Record<string, ProcessFigures & { pid: number }>;
  /** each operator pod's process, by pod name (the pods change with an upgrade) */
  perOperator?: Record<string, ProcessFigures & { pid: number }>;
}

/** TARGETS are the promised figures (docs/reliability.md). */
export const TARGETS = { edgeMoveMs: 5000, recoverMs: 10_000, heldAgainMs: 10_000 };

/** DETAIL_MAX is how many failed requests a check's line names one by one. */
const DETAIL_MAX = 12;

/**
 * failureDetail names each failed request (kind, node, start and end from `from`, outcome), so a
 * FAIL line says which requests failed, when and why: `h2 via A +0.12→0.13 s ERR_HTTP2_STREAM_CANCEL`.
 */
export function failureDetail(failed: readonly Sample[], from: number): string {
  const at = (ms: number) => `${ms >= from ? '+' : '-'}${(Math.abs(ms - from) / 1000).toFixed(2)}`;
  const sorted = [...failed].sort((a, b) => a.start - b.start);
  const named = sorted.slice(0, DETAIL_MAX).map((x) => `${x.kind} via ${x.edge} ${at(x.start)}→${at(x.end).replace(/^\+/, '')} s ${x.outcome}`);
  return named.join('; ') + (sorted.length > DETAIL_MAX ? `; and ${sorted.length - DETAIL_MAX} more` : '');
}

/** FD_BOUND and RSS_BOUND say how much an edge may grow from the first round to the last. */
const FD_BOUND = (first: number) => first + 50;
const RSS_BOUND = (firstKiB: number) => firstKiB * 1.5 + 20 * 1024;

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const pad = (text: string | number, width: number) => String(text).padEnd(width);
const padStart = (text: string | number, width: number) => String(text).padStart(width);

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/** longestGap is the longest time between two successive answered requests of a kind (from the first to the last request). */
function longestGap(samples: Sample[]): number {
  const ends = samples.filter((x) => x.outcome === 'ok').map((x) => x.end).sort((a, b) => a - b);
  const first = Math.min(...samples.map((x) => x.start));
  const last = Math.max(...samples.map((x) => x.end));
  let gap = 0;
  let previous = first;
  for (const end of [...ends, last]) {
    gap = Math.max(gap, end - previous);
    previous = end;
  }
  return gap;
}

/** FaultOutcome is one fault's figures from the samples of its window. */
export interface FaultOutcome {
  record: FaultRecord;
  failed: number;
  failedIdempotent: number;
  /** from the injection to the end of the last failed request of the window (0: none failed) */
  lastFailureMs: number;
  /** from the end of the recovery step until every route answered again */
  recoverMs: number;
  byCause: Map<string, number>;
  failedSamples: Sample[];
}

/**
 * faultOutcome reads a fault's window: the requests that started after its injection and ended by
 * the end of its window, and the failed ones that were in flight when it was injected. A request
 * still in flight when the next fault is injected is that fault's, not this one's.
 */
export function faultOutcome(record: FaultRecord, samples: Sample[]): FaultOutcome {
  const window = samples.filter(
    (x) =>
      (x.start >= record.injectedAt && x.start < record.windowEnd && x.end <= record.windowEnd) ||
      (x.start < record.injectedAt && x.end > record.injectedAt && x.outcome !== 'ok'),
  );
  const failed = window.filter((x) => x.outcome !== 'ok');
  const lastFailureEnd = Math.max(record.injectedAt, ...failed.map((x) => x.end));
  const byCause = new Map<string, number>();
  for (const f of failed) byCause.set(`${f.kind} ${f.outcome}`, (byCause.get(`${f.kind} ${f.outcome}`) ?? 0) + 1);
  return {
    record,
    failed: failed.length,
    failedIdempotent: failed.filter((x) => IDEMPOTENT[x.kind]).length,
    lastFailureMs: failed.length === 0 ? 0 : lastFailureEnd - record.injectedAt,
    recoverMs: Math.max(0, lastFailureEnd - record.recoveredAt),
    byCause,
    failedSamples: failed,
  };
}

/** SoakResult is everything the report prints. */
export interface SoakResult {
  minutes: number;
  startedAt: number;
  endedAt: number;
  samples: Sample[];
  probes: ProbeSample[];
  faults: FaultRecord[];
  rounds: RoundFigures[];
  /** extra invariants checked against the cluster and the store at the end */
  endChecks: Check[];
  /** the machine's load average when the traffic started and when it ended */
  loadAverageAtStart?: number[];
  loadAverage: number[];
}

/** checksOf are the targets and invariants over the run's records. */
export function checksOf(result: SoakResult): Check[] {
  const outcomes = result.faults.map((f) => faultOutcome(f, result.samples));
  const checks: Check[] = [];
  const ofKind = (prefix: string) => outcomes.filter((o) => o.record.name.startsWith(prefix));
  const operatorFaults = [...ofKind('kill -9 operator'), ...ofKind('helm upgrade')];
  const idempotentLost = operatorFaults.reduce((n, o) => n + o.failedIdempotent, 0);
  checks.push({
    name: 'target: idempotent requests across operator kills and a rolling upgrade answered',
    ok: idempotentLost === 0,
    detail: `${idempotentLost} failed in ${operatorFaults.length} fault window(s)`,
  });
  const hung = result.samples.filter((x) => x.outcome === 'timeout');
  const hungDetail = hung.map((x) => {
    const fault = [...result.faults].reverse().find((f) => f.injectedAt <= x.start);
    return `${failureDetail([x], fault?.injectedAt ?? result.startedAt)} (from ${fault?.name ?? 'the start'})`;
  });
  checks.push({ name: 'target: no request hangs (each ends with an answer or an error within 10 s)', ok: hung.length === 0, detail: `${hung.length} timed out${hung.length > 0 ? `: ${hungDetail.slice(0, DETAIL_MAX).join('; ')}` : ''}` });
  for (const o of ofKind('kill -9 edge')) {
    // the Gateway's dedicated address is bound by one node at a time on this one host (the other
    // node's bind fails with EADDRINUSE and is retried): it moves with that retry, reported apart
    const perNode = faultOutcome(o.record, result.samples.filter((x) => x.edge !== 'addr'));
    const viaAddress = faultOutcome(o.record, result.samples.filter((x) => x.edge === 'addr'));
    checks.push({
      name: `target: ${o.record.name}: traffic moved to the other node within ${s(TARGETS.edgeMoveMs)}`,
      ok: perNode.lastFailureMs <= TARGETS.edgeMoveMs,
      detail:
        `last failure ${s(perNode.lastFailureMs)} after the kill, ${perNode.failed} failed (the Gateway address: ${viaAddress.failed} failed, last ${s(viaAddress.lastFailureMs)} after)` +
        (o.failed > 0 ? `; from the kill: ${failureDetail(o.failedSamples, o.record.injectedAt)}` : ''),
    });
  }
  for (const o of [...ofKind('tunnel key revoked'), ...ofKind('reservation released')]) {
    const heldAgain = o.record.measures.heldAgainMs;
    checks.push({
      name: `target: ${o.record.name}: the operator holds the host again within ${s(TARGETS.heldAgainMs)}`,
      ok: heldAgain !== undefined && heldAgain <= TARGETS.heldAgainMs && o.record.failures.length === 0,
      detail:
        (heldAgain === undefined ? `not held again: ${o.record.failures.join('; ') || 'no figure'}` : `held again ${s(heldAgain)} after, answering through both nodes ${s(o.record.measures.answeringMs ?? 0)} after`) +
        `, ${o.failed} failed${o.failed > 0 ? `: ${failureDetail(o.failedSamples, o.record.injectedAt)}` : ''}`,
    });
  }
  for (const o of ofKind('kill -9 PostgreSQL')) {
    const down = result.samples.filter((x) => x.start >= o.record.injectedAt && x.start < o.record.recoveredAt && x.outcome !== 'ok');
    // a request that also started in an overlapping fault's window (an operator pod killed meanwhile) is that fault's
    const others = result.faults.filter((f) => f !== o.record);
    const isOthers = (x: Sample) => others.some((f) => x.start >= f.injectedAt && x.start < f.windowEnd);
    const own = down.filter((x) => !isOthers(x));
    checks.push({
      name: 'target: PostgreSQL down: existing tunnels kept serving',
      ok: own.length === 0,
      detail: `${own.length} failed while it was down${down.length > own.length ? ` (and ${down.length - own.length} in an overlapping fault's window: ${down.filter(isOthers).map((x) => `${x.kind} ${x.outcome}`).join(', ')})` : ''}`,
    });
    checks.push({ name: 'target: PostgreSQL down: a new reservation gets 503', ok: o.record.failures.length === 0, detail: o.record.failures.join('; ') || o.record.notes.join('; ') });
  }
  const slow = outcomes.filter((o) => o.recoverMs > TARGETS.recoverMs);
  checks.push({
    name: `target: after every fault all routes answered again within ${s(TARGETS.recoverMs)}`,
    ok: slow.length === 0,
    detail:
      slow.length === 0
        ? `slowest ${s(Math.max(0, ...outcomes.map((o) => o.recoverMs)))}`
        : slow.map((o) => `${o.record.name} ${s(o.recoverMs)} (from the recovery step's end: ${failureDetail(o.failedSamples.filter((x) => x.end > o.record.recoveredAt), o.record.recoveredAt)})`).join(', '),
  });
  const other = outcomes.filter((o) => o.record.failures.length > 0 && !o.record.name.startsWith('kill -9 PostgreSQL'));
  if (other.length > 0) checks.push({ name: 'faults ran', ok: false, detail: other.map((o) => `${o.record.name}: ${o.record.failures.join('; ')}`).join(' | ') });
  const wrong = result.samples.filter((x) => x.outcome === 'wrong backend' || x.outcome === 'checksum');
  checks.push({ name: 'invariant: no request answered by the wrong backend or with a wrong checksum', ok: wrong.length === 0, detail: `${wrong.length} of ${result.samples.length}` });
  checks.push(...result.endChecks);
  checks.push(...steadyState(result.rounds));
  checks.push(operatorSteadyState(result.rounds));
  return checks;
}

/**
 * operatorSteadyState is steadyState for the operator: of every operator pod's process, the one
 * seen after the most faults (the pods are killed and replaced by the faults) stays within the
 * bound, its figures named round by round (the last of each).
 */
function operatorSteadyState(rounds: RoundFigures[]): Check {
  const byPid = new Map<number, { pod: string; pid: number; round: RoundFigures; figures: ProcessFigures }[]>();
  for (const r of rounds) {
    for (const [pod, f] of Object.entries(r.perOperator ?? {})) if (f.pid !== 0) byPid.set(f.pid, [...(byPid.get(f.pid) ?? []), { pod, pid: f.pid, round: r, figures: f }]);
  }
  const points = [...byPid.values()].sort((a, b) => b.length - a.length)[0] ?? [];
  const name = 'invariant: the operator back to steady state: descriptors ≤ first + 50, RSS ≤ first × 1.5 + 20 MiB';
  const first = points[0];
  const last = points.at(-1);
  if (first === undefined || last === undefined || points.length < 2) return { name, ok: false, detail: 'fewer than two figures of one process' };
  const perRound = new Map<number, ProcessFigures>();
  for (const p of points) perRound.set(p.round.round, p.figures);
  return {
    name,
    ok: last.figures.fds <= FD_BOUND(first.figures.fds) && last.figures.rssKiB <= RSS_BOUND(first.figures.rssKiB),
    detail:
      `${first.pod} pid ${first.pid}: fds ${first.figures.fds} → ${last.figures.fds}, RSS ${(first.figures.rssKiB / 1024).toFixed(0)} → ${(last.figures.rssKiB / 1024).toFixed(0)} MiB over ${points.length} figures ` +
      `(after ${first.round.after}, round ${first.round.round} → after ${last.round.after}, round ${last.round.round}; at each round's end: ${[...perRound].map(([r, f]) => `${r}: ${f.fds} fds ${(f.rssKiB / 1024).toFixed(0)} MiB`).join(', ')})`,
  };
}

/**
 * steadyState compares, for each edge node, the first and the last figures of its longest-lived
 * process (the node is killed and started again by the faults, so earlier figures are another
 * process's): descriptors and memory after each fault settled must not grow past the bound.
 */
function steadyState(rounds: RoundFigures[]): Check[] {
  const edges = Object.keys(rounds[0]?.perEdge ?? {});
  return edges.map((edge) => {
    const byPid = new Map<number, RoundFigures[]>();
    for (const r of rounds) {
      const pid = r.perEdge[edge]?.pid ?? 0;
      if (pid !== 0) byPid.set(pid, [...(byPid.get(pid) ?? []), r]);
    }
    const points = [...byPid.values()].sort((a, b) => b.length - a.length)[0] ?? [];
    const first = points[0];
    const last = points.at(-1);
    const name = `invariant: edge ${edge} back to steady state: descriptors ≤ first + 50, RSS ≤ first × 1.5 + 20 MiB`;
    if (first === undefined || last === undefined || points.length < 2) return { name, ok: false, detail: 'fewer than two figures of one process' };
    const a = first.perEdge[edge]!;
    const b = last.perEdge[edge]!;
    return {
      name,
      ok: b.fds <= FD_BOUND(a.fds) && b.rssKiB <= RSS_BOUND(a.rssKiB),
      detail: `pid ${a.pid}: fds ${a.fds} → ${b.fds}, RSS ${(a.rssKiB / 1024).toFixed(0)} → ${(b.rssKiB / 1024).toFixed(0)} MiB over ${points.length} figures (after ${first.after}, round ${first.round} → after ${last.after}, round ${last.round})`,
    };
  });
}

/** formatReport is the printed table: requests by kind and cause, gaps, faults, probe, figures, checks. */
export function formatReport(result: SoakResult, checks: Check[]): string {
  const lines: string[] = [];
  const { samples } = result;
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  lines.push(
    `soak: ${s(result.endedAt - result.startedAt)} of traffic (--minutes ${result.minutes}), load average ${result.loadAverageAtStart === undefined ? '' : `${load(result.loadAverageAtStart)} at the start, `}${load(result.loadAverage)} at the end`,
  );
  lines.push('');
  lines.push(`${pad('kind', 9)}${padStart('sent', 7)}${padStart('answered', 10)}${padStart('failed', 8)}${padStart('p50', 9)}${padStart('p99', 9)}${padStart('longest gap', 13)}`);
  for (const kind of KINDS) {
    const mine = samples.filter((x) => x.kind === kind);
    if (mine.length === 0) continue;
    const ok = mine.filter((x) => x.outcome === 'ok');
    const latencies = ok.map((x) => x.end - x.start).sort((a, b) => a - b);
    lines.push(
      `${pad(kind, 9)}${padStart(mine.length, 7)}${padStart(ok.length, 10)}${padStart(mine.length - ok.length, 8)}` +
        `${padStart(`${percentile(latencies, 50)} ms`, 9)}${padStart(`${percentile(latencies, 99)} ms`, 9)}${padStart(s(longestGap(mine)), 13)}`,
    );
  }
  const total = samples.filter((x) => x.outcome === 'ok').length;
  lines.push(`${pad('all', 9)}${padStart(samples.length, 7)}${padStart(total, 10)}${padStart(samples.length - total, 8)}`);
  const causes = new Map<string, number>();
  for (const x of samples) if (x.outcome !== 'ok') causes.set(`${x.kind} via ${x.edge}: ${x.outcome}`, (causes.get(`${x.kind} via ${x.edge}: ${x.outcome}`) ?? 0) + 1);
  lines.push('');
  lines.push('failed by cause (kind via edge: outcome):');
  for (const [cause, n] of [...causes].sort((a, b) => b[1] - a[1])) lines.push(`  ${padStart(n, 5)}  ${cause}`);
  if (causes.size === 0) lines.push('  none');
  lines.push('');
  lines.push(`${pad('fault', 42)}${padStart('failed', 7)}${padStart('idemp.', 7)}${padStart('last failure', 14)}${padStart('all answer', 12)}  notes`);
  for (const record of result.faults) {
    const o = faultOutcome(record, samples);
    lines.push(
      `${pad(record.name, 42)}${padStart(o.failed, 7)}${padStart(o.failedIdempotent, 7)}${padStart(o.failed === 0 ? '-' : s(o.lastFailureMs), 14)}` +
        `${padStart(s(o.recoverMs), 12)}  ${record.notes.join('; ')}${o.byCause.size > 0 ? ` [${[...o.byCause].map(([c, n]) => `${n}× ${c}`).join(', ')}]` : ''}`,
    );
  }
  lines.push('  (failed: requests started in the fault window that did not get a correct answer; idemp.: of them GETs;');
  lines.push('   last failure: from the injection; all answer: from the end of the recovery step until every route answered again)');
  lines.push('');
  const acked = result.probes.filter((p) => p.status === 201).length;
  const refused = new Map<string, number>();
  for (const p of result.probes) if (p.status !== 201) refused.set(`${p.status} ${p.code}`, (refused.get(`${p.status} ${p.code}`) ?? 0) + 1);
  lines.push(`control API probe: ${result.probes.length} reserve+mint, ${acked} acknowledged${[...refused].map(([c, n]) => `, ${n}× ${c}`).join('')}`);
  lines.push('');
  lines.push('edge nodes and operator pods after each fault settled (open descriptors, RSS):');
  const fig = (f: ProcessFigures & { pid: number }) => `pid ${f.pid} ${f.fds} fds ${(f.rssKiB / 1024).toFixed(0)} MiB`;
  for (const round of result.rounds) {
    const operators = Object.entries(round.perOperator ?? {}).map(([pod, f]) => `${pod.slice(-5)} ${fig(f)}`);
    lines.push(`  round ${round.round}, after ${round.after}: ${Object.entries(round.perEdge).map(([e, f]) => `${e} ${fig(f)}`).join(', ')}${operators.length > 0 ? `; operator ${operators.join(', ')}` : ''}`);
  }
  lines.push('');
  for (const c of checks) lines.push(`${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`);
  return lines.join('\n');
}
