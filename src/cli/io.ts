/** CliIo is where commands write and what ends them; tests pass their own. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  /** resolves when the user asks to stop (SIGINT/SIGTERM) */
  stopSignal: Promise<string>;
}

/** processIo is the real terminal: stdout, stderr, the environment, SIGINT and SIGTERM. */
export function processIo(): CliIo {
  const stopSignal = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    stopSignal,
  };
}
