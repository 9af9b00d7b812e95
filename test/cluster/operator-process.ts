// operator-process.ts — `tuna operator` as a child process, as users run it, for the cluster tests
// that need the command's own wiring (flags, leader election, signals, output).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, waitFor } from './cluster-env.js';

/** OperatorProcess is one running `tuna operator` and everything it printed. */
export interface OperatorProcess {
  child: ChildProcess;
  /** stdout and stderr as they arrived, interleaved */
  output(): string;
  /** resolves with the exit code once the process exited */
  exited: Promise<number | null>;
}

/** startOperatorProcess runs `tuna operator --edge tcp://127.0.0.1:<controlPort> ...args` with the API key in TUNA_KEY. */
export function startOperatorProcess(controlPort: number, apiKey: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): OperatorProcess {
  const argv = ['--import', 'tsx', path.join(REPO_ROOT, 'src/cli/main.ts'), 'operator', '--edge', `tcp://127.0.0.1:${controlPort}`, ...args];
  const child = spawn(process.execPath, argv, { cwd: REPO_ROOT, env: { ...process.env, ...env, TUNA_KEY: apiKey }, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout?.on('data', (b: Buffer) => (text += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (text += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => text, exited };
}

/** waitUntilWatching waits for the line the command prints once its first sync is done. */
export async function waitUntilWatching(operator: OperatorProcess, timeoutMs = 60_000): Promise<void> {
  await waitFor('the operator to watch the cluster', timeoutMs, async () => {
    if (operator.child.exitCode !== null) throw new Error(`the operator exited with ${operator.child.exitCode}: ${operator.output()}`);
    return operator.output().includes('tuna operator: watching the cluster') ? true : undefined;
  });
}
