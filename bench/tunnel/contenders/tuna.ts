/**
 * tuna: client → `tuna edge` (public HTTP listener, routes by Host) → the HTTP/2 tunnel the agent
 * dialed (TLS) → `tuna http <port>` (data plane) → backend. Both run as real processes through the
 * built CLI (`node dist/cli/main.js`, built as `npm run build` does when the run starts: tsc, then hack/bundle.js),
 * the way users run them: running `src/` through tsx would time tsx's start-up and its transpiling,
 * not tuna. If the build fails, the run falls back to tsx and says so.
 *
 * When the built CLI is not
 * there yet, or a command fails, the contender reports "not available (reason)" and the other
 * contenders' figures still come out. The command lines live in `tunaCommands` alone.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import type { BenchContext, Contender, MemoryFigure } from '../contender.js';
import { ContenderUnavailableError } from '../contender.js';
import { rssBytes } from '../memory.js';
import type { Target } from '../net.js';
import { freePort, loopback, waitForListening, waitForStatus } from '../net.js';
import type { SpawnedProcess } from '../processes.js';
import { readyOrExit } from '../processes.js';
import { repoRoot } from '../tools.js';
import { usableCpuCount } from '../../../src/cli/cpu-limit.js';

/** TunaEdgeSetup is what the edge is started with: its ports, its certificate and the hosts it serves. */
export interface TunaEdgeSetup {
  httpPort: number;
  tunnelPort: number;
  /** PEM files of the tunnel listener's self-signed certificate (the agent trusts it with --ca); absent: plaintext tunnel */
  certFile?: string;
  keyFile?: string;
  hosts: string[];
  /** SHA-256 (hex) of each host's tunnel key: the edge accepts a key for one binding only */
  keySha256: Map<string, string>;
  /** the edge's `http1Forwarding` (docs/edge.md); absent: the edge's default */
  http1Forwarding?: 'spliced' | 'per-request';
}

const cliPath = join(repoRoot, 'src', 'cli', 'main.ts');
const builtCliPath = join(repoRoot, 'dist', 'cli', 'main.js');
const tscPath = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const semiSpaceFlag = '--max-semi-space-size=16';

/** NodeCommand is how the CLI runs: node's arguments before the CLI's own. */
interface NodeCommand {
  /** node flags and the CLI script */
  prefix: string[];
  /** what the row says about it */
  label: string;
}

/** maxConnections is the most `tuna http --connections` accepts. */
const maxConnections = 999;

/** bindingIdOf is the binding `tuna http --host H` asks for (src/cli/quick-graph.ts). */
export function bindingIdOf(host: string): string {
  return `binding/host/${host}`;
}

/**
 * edgeConfig is the edge's config file (src/edge/config.ts): a TLS tunnel listener and a plain
 * HTTP public listener on loopback, and one host binding per host accepting the run's key.
 */
export function edgeConfig(setup: TunaEdgeSetup): string {
  const tls = setup.certFile && setup.keyFile ? `, tls: {certFile: "${setup.certFile}", keyFile: "${setup.keyFile}"}` : '';
  const lines = [
    ...(setup.http1Forwarding === undefined ? [] : [`http1Forwarding: ${setup.http1Forwarding}`]),
    'listen:',
    `  tunnel: {host: "${loopback}", port: ${setup.tunnelPort}${tls}}`,
    `  http: {host: "${loopback}", port: ${setup.httpPort}}`,
    'bindings:',
  ];
  for (const host of setup.hosts)
    lines.push(`  - {id: "${bindingIdOf(host)}", kind: host, hostnames: ["${host}"], keys: [{sha256: "${setup.keySha256.get(host) ?? ''}"}]}`);
  return `${lines.join('\n')}\n`;
}

/** ProcessCount is a pinned count of processes, or `auto`: no flag, the command's default (one per usable CPU). */
export type ProcessCount = number | 'auto';

/** countOf is how many processes a count starts on this machine: `auto` is the CLI's default, src/cli/cpu-limit.ts. */
export function countOf(count: ProcessCount): number {
  return count === 'auto' ? usableCpuCount() : count;
}

/** tunaCommands are the argument vectors after the CLI script (`node dist/cli/main.js`) for the edge and the agents. */
export function tunaCommands(setup: TunaEdgeSetup, configFile: string, workers: ProcessCount = 1, processes: ProcessCount = 1): { edge: string[]; http: (backendPort: number, host: string, connections?: number) => string[] } {
  const edgeFlags = setup.certFile ? ['--edge', `tls://${loopback}:${setup.tunnelPort}`, '--ca', setup.certFile] : ['--edge', `tcp://${loopback}:${setup.tunnelPort}`];
  return {
    // `--workers`: pinned rows say it (1: one edge process); the `tuna` row leaves it out, the default of one per CPU
    edge: ['edge', '--config', configFile, ...(workers === 'auto' ? [] : ['--workers', String(workers)])],
    // `--processes`: the same for the agent (each process with its own connections)
    http: (backendPort, host, connections = 1) => ['http', String(backendPort), '--host', host, '--connections', String(connections), ...(processes === 'auto' ? [] : ['--processes', String(processes)]), ...edgeFlags],
  };
}

/** TunaContender runs one edge and one `tuna http` agent; fresh tunnels are new agent processes. */
export class TunaContender implements Contender {
  readonly name: string;
  private edge: SpawnedProcess | undefined;
  private agent: SpawnedProcess | undefined;
  private setup: TunaEdgeSetup | undefined;
  private dir = '';
  private certFiles: { certFile: string; keyFile: string } | undefined;
  /** why the TLS tunnel could not be used (the row then runs a plaintext tunnel) */
  private tlsFailure: string | undefined;
  private node: NodeCommand = { prefix: ['--import', 'tsx', cliPath], label: 'tsx' };
  // Random keys, one per host, made for this run; agents get theirs through the environment (not
  // argv, so not in `ps`), the edge only their SHA-256; never printed (no secret in a log line).
  private readonly keys = new Map<string, string>();
  /** a prebuilt CLI to run instead of this checkout's (the "before" of an A/B run), if any */
  private readonly prebuiltCli: string | undefined;
  /** the edge's HTTP/1.1 forwarding mode for this row; absent: the edge's default */
  private readonly http1Forwarding: 'spliced' | 'per-request' | undefined;

  /** edge worker processes (`tuna edge --workers`; `auto`: its default) */
  private readonly workers: ProcessCount;
  /** agent processes (`tuna http --processes`; `auto`: its default) */
  private readonly processes: ProcessCount;

  /**
   * `prebuiltCli` (TUNA_BENCH_TUNA_BASELINE) runs another build side by side as row `name`;
   * `http1Forwarding` sets the edge's mode; `workers` is the edge's `--workers`, `processes` the
   * agent's `--processes`.
   */
  constructor(name = 'tuna', prebuiltCli?: string, http1Forwarding?: 'spliced' | 'per-request', workers: ProcessCount = 1, processes: ProcessCount = 1) {
    this.name = name;
    this.prebuiltCli = prebuiltCli;
    this.http1Forwarding = http1Forwarding;
    this.workers = workers;
    this.processes = processes;
  }

  private keyOf(host: string): string {
    let key = this.keys.get(host);
    if (key === undefined) this.keys.set(host, (key = randomBytes(24).toString('base64url')));
    return key;
  }

  /** describe says which path tuna's requests take. */
  describe(): string {
    const how = ` (${this.node.label})`;
    const agent = `tuna http agent (${countText(this.processes, 'process', 'processes', '--processes')})`;
    const edge = `tuna edge (${countText(this.workers, 'worker', 'workers', '--workers')}; HTTP, routes by Host)`;
    if (this.tlsFailure === undefined) return `client → ${edge} → TLS + HTTP/2 tunnel → ${agent} → backend${how}`;
    return `client → ${edge} → **plaintext** HTTP/2 tunnel → ${agent} → backend${how} (no TLS: ${this.tlsFailure}; plaintext flatters tuna against frp and chisel, which encrypt)`;
  }

  /**
   * start runs the edge and one agent, and waits until a request passes through. The tunnel is TLS,
   * as in use; if that fails, the run falls back to a plaintext tunnel (`tcp://`, meant for
   * loopback tests) so that tuna still has figures, and the row says so: plaintext flatters tuna
   * against frp and chisel, which both encrypt.
   */
  async start(ctx: BenchContext): Promise<Target> {
    if (!existsSync(cliPath)) throw new ContenderUnavailableError(this.name, 'src/cli/main.ts does not exist yet');
    // one directory per row: a baseline row beside this one must not share its certificate files
    this.dir = join(ctx.tmp, this.name.replace(/[^a-z0-9]+/gi, '-'));
    await mkdir(this.dir, { recursive: true });
    this.node = this.prebuiltCli !== undefined ? { prefix: [semiSpaceFlag, this.prebuiltCli], label: `prebuilt: node ${semiSpaceFlag} ${this.prebuiltCli}` } : await buildCli(ctx);
    if (process.env.TUNA_BENCH_TUNA_TUNNEL === 'tcp') this.tlsFailure = 'TUNA_BENCH_TUNA_TUNNEL=tcp asked for plaintext';
    else if (ctx.tools.openssl) {
      this.certFiles = await makeCertificate(ctx, this.dir);
      try {
        return await this.startPair(ctx);
      } catch (err) {
        this.tlsFailure = err instanceof ContenderUnavailableError ? err.reason : String(err);
        console.log(`  tuna: TLS tunnel failed (${this.tlsFailure}); trying a plaintext tunnel`);
        await this.stop(ctx);
      }
    } else this.tlsFailure = 'openssl is not installed';
    this.certFiles = undefined;
    return this.startPair(ctx);
  }

  private async startPair(ctx: BenchContext): Promise<Target> {
    const hosts = ['bench', ...Array.from({ length: 8 }, (_, i) => `fresh-${i}`)].map((h) => `${h}.bench.tuna.test`);
    const { edge, setup } = await this.startEdge(ctx, 'main', hosts);
    this.edge = edge;
    this.setup = setup;
    const { proc, target } = await this.startAgent(ctx, setup, hosts[0] as string, 20, true);
    this.agent = proc;
    return target;
  }

  /** firstByte starts a new agent for a host the edge knows but no agent serves yet. */
  async firstByte(ctx: BenchContext, attempt: number): Promise<number> {
    if (!this.setup) throw new Error('tuna: firstByte before start');
    const host = this.setup.hosts[1 + (attempt % (this.setup.hosts.length - 1))] as string;
    const started = performance.now();
    const { proc } = await this.startAgent(ctx, this.setup, host, 2);
    const elapsed = performance.now() - started;
    await ctx.group.stop(proc);
    return elapsed;
  }

  /**
   * idleMemory compares edge + agent RSS with 1 and with `tunnels` idle tunnel connections of one
   * binding (`tuna http --connections N`): each is its own TCP (or TLS) connection and HTTP/2
   * session on both sides, which is what an open tunnel costs. (`tuna run` with N hosts would need
   * N keys: the edge accepts a key for one binding only, and `tuna run` takes one key.)
   */
  async idleMemory(ctx: BenchContext, wanted: number): Promise<MemoryFigure> {
    // `--connections` takes at most 999; two agents would add a second Node process's baseline.
    const tunnels = Math.min(wanted, maxConnections);
    const measure = async (count: number): Promise<number> => {
      const host = `idle-${count}.bench.tuna.test`;
      const { edge, setup } = await this.startEdge(ctx, `mem-${count}`, [host]);
      const args = tunaCommands(setup, '', 1, this.processes).http(ctx.backendPort, host, count);
      const agent = ctx.group.start(`tuna-idle-${count}`, process.execPath, [...this.node.prefix, ...args], ctx.lifetimeMs, { cwd: repoRoot, env: { ...process.env, TUNA_KEY: this.keyOf(host) } });
      try {
        const binding = bindingIdOf(host);
        // the agent holds `--connections` connections to every worker of the edge (src/tunnel/tunnel-group.ts), each of its processes
        const ready = waitForTunnels(setup, binding, count * countOf(this.workers) * countOf(this.processes), 120_000);
        await readyOrExit(agent, ready, (code) => new ContenderUnavailableError(this.name, `tuna http --connections ${count} exited ${code}: ${lastLines(agent.output())}`));
        await new Promise((r) => setTimeout(r, 1000));
        return treeRssBytes(edge.child.pid ?? 0) + treeRssBytes(agent.child.pid ?? 0);
      } finally {
        await ctx.group.stop(agent);
        await ctx.group.stop(edge);
      }
    };
    const rssOne = await measure(1);
    const rssMany = await measure(tunnels);
    const workers = countOf(this.workers);
    const processes = countOf(this.processes);
    const perWorker = workers > 1 ? `, to each of the edge's ${workers} workers (${tunnels * workers} connections; "per extra tunnel" is one more connection to every worker, ${workers} connections)` : '';
    const perProcess = processes > 1 ? ` from each of ${processes} agent processes (${tunnels * processes} connections; "per extra tunnel" is one more connection from every process, ${processes} connections; the processes' RSS together)` : '';
    return { tunnels, rssOne, rssMany, note: `${tunnels} tunnel connections (one HTTP/2 session each) of one binding: \`tuna http --connections ${tunnels}\`${perWorker}${perProcess}` };
  }

  /** stop ends the agent and the edge. */
  async stop(ctx: BenchContext): Promise<void> {
    if (this.agent) await ctx.group.stop(this.agent);
    if (this.edge) await ctx.group.stop(this.edge);
  }

  private async startEdge(ctx: BenchContext, label: string, hosts: string[]): Promise<{ edge: SpawnedProcess; setup: TunaEdgeSetup }> {
    const certs = this.certFiles ?? {};
    const keySha256 = new Map(hosts.map((h) => [h, createHash('sha256').update(this.keyOf(h)).digest('hex')]));
    const setup: TunaEdgeSetup = { httpPort: await freePort(), tunnelPort: await freePort(), ...certs, hosts, keySha256 };
    if (this.http1Forwarding !== undefined) setup.http1Forwarding = this.http1Forwarding;
    const configFile = join(this.dir, `edge-${label}.yaml`);
    await writeFile(configFile, edgeConfig(setup), { mode: 0o600 });
    const args = tunaCommands(setup, configFile, this.workers).edge;
    const edge = ctx.group.start(`tuna-edge-${label}`, process.execPath, [...this.node.prefix, ...args], ctx.lifetimeMs, { cwd: repoRoot });
    await readyOrExit(edge, waitForListening({ port: setup.httpPort }, 20_000), (code) => new ContenderUnavailableError(this.name, `tuna edge exited ${code}: ${lastLines(edge.output())}`));
    return { edge, setup };
  }

  private async startAgent(ctx: BenchContext, setup: TunaEdgeSetup, host: string, pollMs: number, waitForEveryProcess = false): Promise<{ proc: SpawnedProcess; target: Target }> {
    const args = tunaCommands(setup, '', 1, this.processes).http(ctx.backendPort, host);
    const proc = ctx.group.start(`tuna-http-${host}`, process.execPath, [...this.node.prefix, ...args], ctx.lifetimeMs, { cwd: repoRoot, env: { ...process.env, TUNA_KEY: this.keyOf(host) } });
    const target: Target = { port: setup.httpPort, host };
    await readyOrExit(proc, waitForStatus(target, '/1k', 20_000, pollMs), (code) => new ContenderUnavailableError(this.name, `tuna http exited ${code}: ${lastLines(proc.output())}`));
    // the first byte is the first process's; the load runs start once every process has its tunnel
    const connections = countOf(this.processes) * countOf(this.workers);
    if (connections > 1 && waitForEveryProcess) await readyOrExit(proc, waitForTunnels(setup, bindingIdOf(host), connections, 20_000), (code) => new ContenderUnavailableError(this.name, `tuna http exited ${code}: ${lastLines(proc.output())}`));
    return { proc, target };
  }
}

/** countText says a count for the row: `2 workers: --workers 2`, or `auto (here 2 workers): one per CPU, the default`. */
function countText(count: ProcessCount, one: string, many: string, flag: string): string {
  const n = countOf(count);
  const what = `${n} ${n === 1 ? one : many}`;
  return count === 'auto' ? `the default, one per CPU: here ${what}` : `${what}: \`${flag} ${count}\``;
}

/** buildCli builds the CLI as `npm run build` does (tsc, then hack/bundle.js) and runs that; tsx when the build fails. */
async function buildCli(ctx: BenchContext): Promise<NodeCommand> {
  let res = await ctx.group.run('tsc', process.execPath, [tscPath, '-p', join(repoRoot, 'tsconfig.build.json')], 180_000);
  if (res.code === 0) res = await ctx.group.run('bundle', process.execPath, [join(repoRoot, 'hack', 'bundle.js')], 180_000);
  // A 16 MiB young generation: V8's default on a large machine grows it to 64 MiB, whose scavenges
  // of per-request garbage pause a process for 20-30 ms and set the p99; 16 MiB keeps pauses
  // near 10 ms at the same requests/s (docs/tunnel-performance.md, attempts 4 and 6). It is the
  // flag docs/tunnel-performance.md recommends for deployments, so the row says it.
  if (res.code === 0 && existsSync(builtCliPath)) return { prefix: [semiSpaceFlag, builtCliPath], label: `built: node ${semiSpaceFlag} dist/cli/main.js` };
  console.log(`  tuna: the build failed (${`${res.stdout}${res.stderr}`.trim().split('\n')[0] ?? ''}); running src/ through tsx`);
  return { prefix: ['--import', 'tsx', cliPath], label: '**tsx**: the build failed, start-up and first requests include transpiling' };
}

/** makeCertificate makes a throw-away self-signed P-256 certificate for 127.0.0.1 with openssl. */
export async function makeCertificate(ctx: BenchContext, dir: string): Promise<{ certFile: string; keyFile: string }> {
  const certFile = join(dir, 'tunnel-cert.pem');
  const keyFile = join(dir, 'tunnel-key.pem');
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', `/CN=${loopback}`, '-addext', `subjectAltName=IP:${loopback}`, '-keyout', keyFile, '-out', certFile];
  const res = await ctx.group.run('openssl', ctx.tools.openssl, args, 15_000);
  if (res.code !== 0) throw new ContenderUnavailableError('tuna', `openssl req failed: ${res.stderr.trim().split('\n')[0] ?? ''}`);
  return { certFile, keyFile };
}

/**
 * tunnelCount sums the gauge `tuna_edge_tunnels` of one binding over every series of a /metrics
 * text: an edge of several workers labels each worker's series `worker="i"` beside `binding`
 * (src/edge/metrics/metrics.ts), and its primary serves them all in one scrape.
 */
export function tunnelCount(metrics: string, binding: string): number {
  let sum = 0;
  for (const line of metrics.split('\n')) {
    const series = /^tuna_edge_tunnels\{([^}]*)\} (\d+(?:\.\d+)?)$/.exec(line);
    if (series === null) continue;
    const labels = new Map([...(series[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (labels.get('binding') === binding) sum += Number(series[2]);
  }
  return sum;
}

/**
 * waitForTunnels polls the edge's `/metrics` (served on the tunnel port, over TLS when the tunnel
 * is) until the binding's `tuna_edge_tunnels`, summed over the edge's workers, reaches `count`.
 */
async function waitForTunnels(setup: TunaEdgeSetup, binding: string, count: number, timeoutMs: number): Promise<void> {
  const ca = setup.certFile ? await readFile(setup.certFile, 'utf8') : undefined;
  const started = performance.now();
  let seen = 0;
  while (performance.now() - started < timeoutMs) {
    seen = tunnelCount(await fetchText(setup.tunnelPort, '/metrics', ca), binding);
    if (seen >= count) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new ContenderUnavailableError('tuna', `${seen} of ${count} tunnel connections came up within ${timeoutMs} ms`);
}

/** fetchText GETs a loopback path (HTTPS trusting `ca` when given) and returns the body ('' on any error). */
function fetchText(port: number, path: string, ca?: string): Promise<string> {
  return new Promise((resolve) => {
    const options = { host: loopback, port, path, agent: false, timeout: 5000 };
    const req = (ca === undefined ? request : httpsRequest)(ca === undefined ? options : { ...options, ca }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.once('end', () => resolve(Buffer.concat(parts).toString('utf8')));
      res.once('error', () => resolve(''));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(''));
    req.end();
  });
}

/** lastLines keeps the last lines of a process's output that are not stack frames, for a reason. */
function lastLines(text: string): string {
  const noise = (l: string) => l === '' || l.startsWith('at ') || /^\d+: 0x/.test(l) || l.startsWith('(Use `node') || l.includes('DeprecationWarning');
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => !noise(l));
  return lines.slice(-3).join(' | ').slice(0, 300);
}

/** treeRssBytes is the RSS of a process and its live children (the edge's workers), from /proc. */
function treeRssBytes(pid: number): number {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // gone, or no /proc: its own RSS only
  }
  return rssBytes(pid) + children.reduce((sum, child) => sum + treeRssBytes(child), 0);
}
