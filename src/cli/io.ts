import { dirname, resolve } from 'node:path';

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

/** NPM_SCRIPTS are this package's npm scripts that run the CLI (`npm run tuna -- …`, `npm run demo`). */
const NPM_SCRIPTS = new Set(['tuna', 'demo']);

/**
 * userDirectory is the directory the user typed the command in, against which every relative path
 * (flags, config files, KUBECONFIG) resolves. That is the working directory, except under
 * `npm run tuna`: npm starts scripts in the package root and keeps the user's directory in
 * INIT_CWD. Only this package's own scripts qualify, so a tuna started by another project's
 * script (which may `cd` first) keeps its working directory.
 */
export function userDirectory(env: NodeJS.ProcessEnv, cwd: string): string {
  const { INIT_CWD: initCwd, npm_package_name: pkg, npm_package_json: pkgJson, npm_lifecycle_event: script } = env;
  if (initCwd === undefined || initCwd === '' || pkgJson === undefined || pkg !== 'tuna' || script === undefined || !NPM_SCRIPTS.has(script)) return cwd;
  return resolve(dirname(pkgJson)) === resolve(cwd) ? resolve(initCwd) : cwd;
}
