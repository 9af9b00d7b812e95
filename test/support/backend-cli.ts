import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

/** Helpers to run `tuna` commands in-process against a real edge, for CLI end-to-end tests. */

/** CliRun is a command running in this process with captured output. */
export interface CliRun {
  out: string[];
  err: string[];
  /** exit resolves with the command's exit status */
  exit: Promise<number>;
  /** stop plays Ctrl-C */
  stop(): void;
  /** waitForOut resolves once a stdout line contains `text` (rejects if the command ends first) */
  waitForOut(text: string, timeoutMs?: number): Promise<string>;
}

/**
 * startCli runs `tuna <argv>` with an in-memory terminal. The request inspector is off
 * (`TUNA_INSPECT=false`) unless `env` or an `--inspect` flag says otherwise: tests must not take
 * the fixed port 4040 (tests of the inspector pass `--inspect 127.0.0.1:0`). An agent runs one
 * process (`TUNA_PROCESSES=1`) unless `env` or `--processes` says otherwise: the others would
 * write to the real terminal, not this one (test/e2e/cli-http-processes.test.ts runs several).
 */
export function startCli(argv: string[], env: NodeJS.ProcessEnv = {}): CliRun {
  const out: string[] = [];
  const err: string[] = [];
  let stop: (s: string) => void = () => undefined;
  const waiters: (() => void)[] = [];
  const io: CliIo = {
    out: (l) => (out.push(l), waiters.splice(0).forEach((w) => w())),
    err: (l) => (err.push(l), waiters.splice(0).forEach((w) => w())),
    env: { TUNA_INSPECT: 'false', TUNA_PROCESSES: '1', ...env },
    stopSignal: new Promise<string>((r) => (stop = r)),
  };
  const exit = runCli(argv, io);
  let isDone = false;
  void exit.finally(() => ((isDone = true), waiters.splice(0).forEach((w) => w())));
  return {
    out,
    err,
    exit,
    stop: () => stop('SIGTERM'),
    async waitForOut(text, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const line = out.find((l) => l.includes(text));
        if (line !== undefined) return line;
        if (isDone) throw new Error(`command ended (${String(await exit)}) before printing ${JSON.stringify(text)}; stderr: ${err.join('\n')}`);
        if (Date.now() > deadline) throw new Error(`no ${JSON.stringify(text)} within ${timeoutMs} ms; stdout: ${out.join('\n')}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    },
  };
}

/**
 * CliRuns starts commands for a test and stops them all after it: `start` is startCli that
 * remembers the run, `stopAll` (an afterEach) sends each a stop, last started first, and waits.
 */
export class CliRuns {
  private runs: CliRun[] = [];

  start(argv: string[], env: NodeJS.ProcessEnv = {}): CliRun {
    const run = startCli(argv, env);
    this.runs.push(run);
    return run;
  }

  async stopAll(): Promise<void> {
    const runs = this.runs.reverse();
    this.runs = [];
    for (const r of runs) r.stop();
    await Promise.all(runs.map((r) => r.exit.catch(() => 0)));
  }
}

/** newKey returns a random tunnel key and the SHA-256 digest the edge config holds. */
export function newKey(): { key: string; sha256: string } {
  // A prefix, as real keys have: a bare base64url token may start with '-', which a command line
  // (`--key -abc`) reads as another option.
  const key = `tuna_test_${randomBytes(24).toString('base64url')}`;
  return { key, sha256: createHash('sha256').update(key).digest('hex') };
}

/** getVia sends GET `path` to the edge's public HTTP port with a Host header, as curl -H would. */
export function getVia(port: number, host: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { host }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject);
  });
}
