// run-command.ts — runs a host tool (ip, mount) and fails with the tool's own message.
import { execFile } from 'node:child_process';

/** CommandFailedError is a host command that exited non-zero; `code` is stable for callers. */
export class CommandFailedError extends Error {
  readonly code = 'TUNA_KUBELET_COMMAND_FAILED';
  constructor(readonly command: string, readonly stderr: string) {
    super(`${command}: ${stderr.trim() || 'failed'}`);
  }
}

/** runCommand runs `file args…` with a bounded time and resolves with its stdout. */
export function runCommand(file: string, args: readonly string[], timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new CommandFailedError([file, ...args].join(' '), stderr || error.message));
      else resolve(stdout);
    });
  });
}

/** runCommandQuietly runs a cleanup command whose failure (already gone) is not an error. */
export async function runCommandQuietly(file: string, args: readonly string[]): Promise<void> {
  await runCommand(file, args).catch(() => undefined);
}
