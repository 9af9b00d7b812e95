/**
 * ProcessGroup: every process the tunnel benchmark starts, bounded in time and killed together on
 * exit, SIGINT or SIGTERM, so an interrupted run leaves no frps, nginx or backend behind.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { BenchProcessError, BenchTimeoutError } from './errors.js';

/** SpawnedProcess is a long-running child with the tail of its output kept for error messages. */
export interface SpawnedProcess {
  name: string;
  child: ChildProcess;
  /** output returns the last few KiB the process wrote to stdout and stderr */
  output(): string;
  /** exited resolves with the exit code (or signal name) when the process ends */
  exited: Promise<number | string>;
}

/** RunResult is what a bounded, run-to-completion command printed. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

const outputTail = 8 * 1024;
const killGraceMs = 2000;

/** ProcessGroup owns the benchmark's children; `close()` (or any exit of this process) ends them all. */
export class ProcessGroup {
  private readonly live = new Set<ChildProcess>();
  private readonly stopping = new Set<ChildProcess>();
  /** long-running processes that ended without being stopped: "<name> exited <code>: <output>" */
  readonly unexpectedExits: string[] = [];
  private readonly onExit = () => this.killAllNow();
  private readonly onSignal = (signal: NodeJS.Signals) => {
    console.error(`tunnel bench: ${signal}, stopping children`);
    this.killAllNow();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };

  constructor() {
    process.on('exit', this.onExit);
    process.once('SIGINT', this.onSignal);
    process.once('SIGTERM', this.onSignal);
  }

  /** start spawns a long-running process that is killed after `lifetimeMs` at the latest. */
  start(name: string, command: string, args: string[], lifetimeMs: number, options: SpawnOptions = {}): SpawnedProcess {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    this.live.add(child);
    let tail = '';
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-outputTail);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const timer = setTimeout(() => this.kill(child), lifetimeMs);
    timer.unref();
    const exited = new Promise<number | string>((resolve) => {
      child.once('error', (err) => {
        tail += `\n${err.message}`;
        resolve('error');
      });
      child.once('close', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    }).then((code) => {
      clearTimeout(timer);
      this.live.delete(child);
      if (!this.stopping.delete(child)) {
        this.unexpectedExits.push(`${name} exited ${code} without being stopped: ${crashSummary(tail)}`);
        console.log(`  ${name} exited ${code} without being stopped`);
      }
      return code;
    });
    return { name, child, output: () => tail, exited };
  }

  /** run executes a command to completion within `timeoutMs`, killing it when the time is up. */
  async run(name: string, command: string, args: string[], timeoutMs: number): Promise<RunResult> {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.live.add(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.kill(child);
    }, timeoutMs);
    try {
      const code = await new Promise<number>((resolve, reject) => {
        child.once('error', (e) => reject(new BenchProcessError(name, e.message)));
        child.once('close', (c, signal) => resolve(c ?? (signal ? 128 : 1)));
      });
      if (timedOut) throw new BenchTimeoutError(`${name} ${args.join(' ')}`, timeoutMs);
      return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
    } finally {
      clearTimeout(timer);
      this.live.delete(child);
      this.stopping.delete(child);
    }
  }

  /** stop ends one process: SIGTERM, then SIGKILL after a grace period; resolves when it is gone. */
  async stop(proc: SpawnedProcess): Promise<void> {
    this.kill(proc.child);
    await proc.exited;
  }

  /** close stops every live child and removes the signal handlers. */
  async close(): Promise<void> {
    const children = [...this.live];
    children.forEach((c) => this.kill(c));
    await Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve(null) : c.once('close', resolve)))));
    process.off('exit', this.onExit);
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
  }

  private kill(child: ChildProcess): void {
    if (child.exitCode !== null || child.signalCode !== null) return;
    this.stopping.add(child);
    child.kill('SIGTERM');
    const force = setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }, killGraceMs);
    force.unref();
    child.once('close', () => clearTimeout(force));
  }

  /** killAllNow is the synchronous last resort on process exit: SIGKILL, nothing to wait for. */
  private killAllNow(): void {
    for (const child of this.live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    this.live.clear();
  }
}

/**
 * readyOrExit resolves with `ready`, or rejects with `onExit(code)` when the process ends first
 * (a misconfigured tool exits at once; its output says why).
 */
export function readyOrExit<T>(proc: SpawnedProcess, ready: Promise<T>, onExit: (code: number | string) => Error): Promise<T> {
  return Promise.race([
    ready,
    proc.exited.then((code): never => {
      throw onExit(code);
    }),
  ]);
}

/**
 * crashSummary picks the telling line of a dead process's output: the last error or assertion
 * line (Node prints the source line, the error and a stack), else the last two lines.
 */
export function crashSummary(output: string): string {
  const lines = output.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('at '));
  const telling = lines.filter((l) => /(Error\b|Assertion failed|ERR_[A-Z_]+|^error:)/.test(l));
  const picked = telling.length > 0 ? telling.slice(-1) : lines.slice(-2);
  return picked.join(' | ').slice(0, 300);
}
