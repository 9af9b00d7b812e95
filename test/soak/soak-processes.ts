// soak-processes.ts — the host processes of the soak that it kills and starts again: one PostgreSQL
// server (hack/postgres.sh, synchronous commits on) and the `tuna edge` nodes sharing it.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startEdgeProcess, stopEdgeProcess } from '../support/edge-process.js';
import type { EdgeProcess } from '../support/edge-process.js';
import { REPO_ROOT } from '../cluster/cluster-env.js';

const run = promisify(execFile);
const SCRIPT = path.join(REPO_ROOT, 'hack/postgres.sh');

/** descendants lists pid and every process below it (from /proc's parent links). */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      // the command may hold spaces and parentheses: the parent pid follows the last ')'
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)]);
    } catch {
      // it exited meanwhile
    }
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(parents.get(all[i]!) ?? []));
  return all;
}

/** ProcessFigures are a process tree's open descriptors and resident memory. */
export interface ProcessFigures {
  fds: number;
  rssKiB: number;
}

/** figuresOf sums the open descriptors (/proc/PID/fd) and RSS (/proc/PID/status VmRSS) of pid and its children. */
export function figuresOf(pid: number): ProcessFigures {
  let fds = 0;
  let rssKiB = 0;
  for (const p of descendants(pid)) {
    try {
      fds += readdirSync(`/proc/${p}/fd`).length;
      rssKiB += Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // exited
    }
  }
  return { fds, rssKiB };
}

/** killTree sends SIGKILL to pid and every process below it. */
export function killTree(pid: number): void {
  for (const p of descendants(pid).reverse()) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** SoakPostgres is the soak's PostgreSQL server: started once, killed with SIGKILL, started again on its data. */
export class SoakPostgres {
  private isRunning = true;
  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly url: string,
  ) {}

  /** start installs PostgreSQL if missing and starts a fresh server on `port` with synchronous commits. */
  static async start(port: number): Promise<SoakPostgres> {
    await run('bash', [SCRIPT, 'install'], { timeout: 600_000 });
    const dir = mkdtempSync(path.join(tmpdir(), 'tuna-pg-'));
    // the test runs' orphan sweep (test/support/postgres.ts) stops a server whose owner is gone
    writeFileSync(path.join(dir, 'owner.pid'), String(process.pid));
    const { stdout } = await run('bash', [SCRIPT, 'start', dir, String(port)], { timeout: 120_000, env: { ...process.env, TUNA_PG_DURABLE: '1' } });
    return new SoakPostgres(dir, port, stdout.trim());
  }

  get isUp(): boolean {
    return this.isRunning;
  }

  /** postmasterPid is the server's main process (the first line of postmaster.pid). */
  postmasterPid(): number {
    return Number(readFileSync(path.join(this.dir, 'data/postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /** kill sends SIGKILL to the postmaster and every backend: no shutdown, no checkpoint. */
  kill(): void {
    killTree(this.postmasterPid());
    this.isRunning = false;
  }

  /** restart starts the server again on its data directory (crash recovery replays the WAL). */
  async restart(): Promise<void> {
    // the backends die with the postmaster; wait until none holds the data directory
    for (let i = 0; i < 100 && holdsDir(this.dir); i++) await new Promise((r) => setTimeout(r, 100));
    await run('bash', [SCRIPT, 'restart', this.dir, String(this.port)], { timeout: 120_000, env: { ...process.env, TUNA_PG_DURABLE: '1' } });
    this.isRunning = true;
  }

  async stop(): Promise<void> {
    await run('bash', [SCRIPT, 'stop', this.dir], { timeout: 60_000 }).catch(() => undefined);
  }
}

/** holdsDir says some process still has its working directory in dir (a PostgreSQL backend does). */
function holdsDir(dir: string): boolean {
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (readlinkSync(`/proc/${name}/cwd`).startsWith(dir)) return true;
    } catch {
      // exited, or not ours to read
    }
  }
  return false;
}

/** SoakEdgeSpec is where one edge node listens: fixed ports, so a restarted node is found where it was. */
export interface SoakEdgeSpec {
  readonly name: string;
  readonly tunnelHost: string;
  readonly tunnelPort: number;
  /** httpHost is also where its tcp-port listeners bind (docs/edge.md) */
  readonly httpHost: string;
  readonly httpPort: number;
}

/** SoakEdge is one `tuna edge` node of the soak in store mode on the shared PostgreSQL. */
export class SoakEdge {
  private process: EdgeProcess | undefined;
  private readonly configFile: string;
  /** earlier runs' output, kept across kills */
  private readonly pastOutput: string[] = [];

  constructor(
    readonly spec: SoakEdgeSpec,
    dir: string,
    store: Record<string, unknown>,
  ) {
    this.configFile = path.join(dir, `${spec.name}.json`);
    const config = {
      listen: { tunnel: { host: spec.tunnelHost, port: spec.tunnelPort }, http: { host: spec.httpHost, port: spec.httpPort } },
      store,
      limits: { tunnelWaitMs: 2000 },
      workers: 1,
    };
    writeFileSync(this.configFile, JSON.stringify(config));
  }

  get isUp(): boolean {
    const child = this.process?.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.isUp ? this.process?.child.pid : undefined;
  }

  async start(): Promise<void> {
    this.process = await startEdgeProcess(['--config', this.configFile, '--workers', '1']);
  }

  /** kill sends SIGKILL to the node (and any worker it forked). */
  kill(): void {
    const pid = this.pid;
    if (pid === undefined) return;
    this.pastOutput.push(this.output());
    killTree(pid);
  }

  output(): string {
    return `${this.process?.out() ?? ''}${this.process?.stderr() ?? ''}`;
  }

  allOutput(): string {
    return [...this.pastOutput, this.output()].join('\n--- restarted\n');
  }

  async stop(): Promise<void> {
    await stopEdgeProcess(this.process);
  }
}
