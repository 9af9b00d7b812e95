/**
 * npm run bench -- bindings: idle memory of many bindings. One edge and one
 * agent process (TunnelManager, TLS tunnel), each binding with its own key, in two modes: every
 * binding on one shared connection (protocol version 2) and one connection per binding (version
 * 1). VmRSS of both processes after a full GC with 1 and with N bindings (TUNA_BENCH_BINDINGS,
 * default 1,000), TUNA_BENCH_RUNS rounds (default 2); per extra binding = (RSS(N) − RSS(1)) / (N − 1),
 * and of it the JavaScript heap in use after the GC. TUNA_BENCH_NODE_FLAGS adds node flags to both;
 * TUNA_BENCH_MODES (default `shared,per-binding`) picks the rows.
 * Prints a Markdown table; docs/tunnel-performance.md quotes it.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { rssBytes } from '../tunnel/memory.js';

type Mode = 'shared' | 'per-binding';

interface Sample {
  edge: number;
  agent: number;
  /** JavaScript heap in use after a full GC (process.memoryUsage().heapUsed) */
  edgeHeap: number;
  agentHeap: number;
  /** the heap V8 holds from the system (heapTotal), used or not */
  edgeHeapTotal: number;
  agentHeapTotal: number;
}

const here = new URL('.', import.meta.url).pathname;

/** LineReader hands out a child's stdout lines as they come. */
class LineReader {
  readonly #lines: string[] = [];
  readonly #waiters: ((line: string | undefined) => void)[] = [];
  #isDone = false;

  constructor(child: ChildProcess) {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      const wake = this.#waiters.shift();
      if (wake !== undefined) wake(line);
      else this.#lines.push(line);
    });
    rl.on('close', () => {
      this.#isDone = true;
      for (const wake of this.#waiters.splice(0)) wake(undefined);
    });
  }

  next(timeoutMs: number): Promise<string> {
    const line = this.#lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.#isDone) return Promise.reject(new Error('the process exited'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      this.#waiters.push((l) => {
        clearTimeout(timer);
        if (l === undefined) reject(new Error('the process exited'));
        else resolve(l);
      });
    });
  }
}

function startChild(script: string, arg: string): { child: ChildProcess; lines: LineReader } {
  // TUNA_BENCH_NODE_FLAGS: extra node flags for both processes (e.g. a V8 heap setting to compare)
  const flags = (process.env['TUNA_BENCH_NODE_FLAGS'] ?? '').split(' ').filter((f) => f !== '');
  const child = spawn(process.execPath, [...flags, '--expose-gc', '--import', 'tsx', join(here, script), arg], { stdio: ['pipe', 'pipe', 'inherit'] });
  return { child, lines: new LineReader(child) };
}

function certificate(dir: string): { cert: string; key: string } {
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

async function measure(dir: string, tls: { cert: string; key: string }, mode: Mode, count: number): Promise<Sample> {
  const bindings = Array.from({ length: count }, (_, i) => ({ id: `binding/host/b${i}.bench.test`, host: `b${i}.bench.test`, key: `tuna_tk_${randomBytes(24).toString('base64url')}` }));
  const edgeFile = join(dir, `edge-${mode}-${count}.json`);
  writeFileSync(edgeFile, JSON.stringify({
    listen: { tunnel: { host: '127.0.0.1', port: 0, tls }, http: { host: '127.0.0.1', port: 0 } },
    bindings: bindings.map((b) => ({ id: b.id, kind: 'host', hostnames: [b.host], keys: [{ sha256: createHash('sha256').update(b.key).digest('hex') }] })),
  }));
  const edge = startChild('edge-child.ts', edgeFile);
  let agent: ReturnType<typeof startChild> | undefined;
  try {
    const port = Number((await edge.lines.next(60_000)).split(' ')[1]);
    const agentFile = join(dir, `agent-${mode}-${count}.json`);
    writeFileSync(agentFile, JSON.stringify({ edge: { host: '127.0.0.1', port }, ca: tls.cert, mode, bindings: bindings.map((b) => ({ id: b.id, key: b.key })) }));
    agent = startChild('agent-child.ts', agentFile);
    const state = await agent.lines.next(180_000);
    if (state !== 'open') throw new Error(`agent: ${state}`);
    edge.child.stdin!.write('count\n');
    const served = await edge.lines.next(10_000);
    if (served !== `count ${count}`) throw new Error(`edge serves ${served}, expected ${count}`);
    await new Promise((r) => setTimeout(r, 2000));
    edge.child.stdin!.write('gc\n');
    agent.child.stdin!.write('gc\n');
    const [edgeLine, agentLine] = await Promise.all([edge.lines.next(10_000), agent.lines.next(10_000)]);
    await new Promise((r) => setTimeout(r, 500));
    const field = (line: string, i: number): number => Number(line.split(' ')[i]);
    return {
      edge: rssBytes(edge.child.pid ?? 0),
      agent: rssBytes(agent.child.pid ?? 0),
      edgeHeap: field(edgeLine, 1),
      agentHeap: field(agentLine, 1),
      edgeHeapTotal: field(edgeLine, 2),
      agentHeapTotal: field(agentLine, 2),
    };
  } finally {
    agent?.child.kill('SIGKILL');
    edge.child.kill('SIGKILL');
  }
}

const kib = (bytes: number): string => (bytes / 1024).toFixed(1);
const mib = (bytes: number): string => (bytes / (1 << 20)).toFixed(1);

/**
 * measureSharedBindings is the idle RSS of edge + agent with one binding and with `count`
 * bindings, all on one shared connection (protocol version 2), each with its own key: the
 * many-bindings row of the tunnel bench's memory table.
 */
export async function measureSharedBindings(count: number): Promise<{ rssOne: number; rssMany: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'tuna-bench-bindings-'));
  try {
    const tls = certificate(dir);
    // a first pair of processes fills tsx's transpile cache; its RSS would count that work.
    await measure(dir, tls, 'shared', 1);
    const one = await measure(dir, tls, 'shared', 1);
    const many = await measure(dir, tls, 'shared', count);
    return { rssOne: one.edge + one.agent, rssMany: many.edge + many.agent };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** runBindingsBench measures and prints the table. */
export async function runBindingsBench(): Promise<void> {
  const count = Number(process.env['TUNA_BENCH_BINDINGS'] ?? 1000);
  const runs = Number(process.env['TUNA_BENCH_RUNS'] ?? 2);
  const dir = mkdtempSync(join(tmpdir(), 'tuna-bench-bindings-'));
  const rows: string[] = [];
  const load = loadavg()[0]!.toFixed(1);
  try {
    const tls = certificate(dir);
    // a first pair of processes fills tsx's transpile cache; its RSS would count that work.
    await measure(dir, tls, 'shared', 1);
    for (let run = 1; run <= runs; run++) {
      // TUNA_BENCH_MODES=shared skips the one-connection-per-binding rows (e.g. for a larger N)
      const modes = (['shared', 'per-binding'] as const).filter((m) => (process.env['TUNA_BENCH_MODES'] ?? 'shared,per-binding').split(',').includes(m));
      for (const mode of modes) {
        const one = await measure(dir, tls, mode, 1);
        const many = await measure(dir, tls, mode, count);
        const per = (side: keyof Sample): number => (many[side] - one[side]) / (count - 1);
        const label = mode === 'shared' ? `${count} bindings on one connection (version 2)` : `${count} connections, one binding each (version 1)`;
        const row = `| ${run} | ${label} | ${mib(one.edge)} → ${mib(many.edge)} | ${mib(one.agent)} → ${mib(many.agent)} | ${kib(per('edge'))} | ${kib(per('agent'))} | **${kib(per('edge') + per('agent'))}** | ${kib(per('edgeHeap'))} / ${kib(per('agentHeap'))} | ${kib(per('edgeHeapTotal'))} / ${kib(per('agentHeapTotal'))} |`;
        console.log(row);
        rows.push(row);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const flags = process.env['TUNA_BENCH_NODE_FLAGS'] ?? '';
  console.log(`\nidle RSS, TLS tunnel, each binding with its own key${flags === '' ? '' : `, node ${flags}`}; load average ${load} before, ${loadavg()[0]!.toFixed(1)} after`);
  console.log('| run | variant | edge RSS, MiB (1 → N) | agent RSS, MiB (1 → N) | edge KiB per extra binding | agent KiB | both | of it JS heap in use, edge / agent | JS heap held, edge / agent |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const row of rows) console.log(row);
}
