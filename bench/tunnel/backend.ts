/**
 * The benchmark backend as a child process (bench/tunnel/backend-server.ts), started once and
 * shared by every contender.
 */
import { join } from 'node:path';
import type { ProcessGroup, SpawnedProcess } from './processes.js';
import { BenchProcessError, BenchTimeoutError } from './errors.js';

/** Backend is the running backend process and its port on 127.0.0.1. */
export interface Backend {
  port: number;
  process: SpawnedProcess;
}

/** startBackend spawns the backend with this Node (types stripped natively) and reads its port. */
export async function startBackend(group: ProcessGroup, lifetimeMs: number, timeoutMs = 10_000): Promise<Backend> {
  const script = join(import.meta.dirname, 'backend-server.ts');
  const proc = group.start('backend', process.execPath, ['--no-warnings', script], lifetimeMs);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new BenchTimeoutError('backend start', timeoutMs)), timeoutMs);
    let buffered = '';
    proc.child.stdout?.on('data', (b: Buffer) => {
      buffered += b.toString('utf8');
      const m = /\{"port":(\d+)\}/.exec(buffered);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    void proc.exited.then((code) => {
      clearTimeout(timer);
      reject(new BenchProcessError('backend', `exited ${code}`, proc.output()));
    });
  });
  return { port, process: proc };
}
