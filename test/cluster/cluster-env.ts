// cluster-env.ts — how cluster tests reach the test cluster and run its scripts.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';

/** REPO_ROOT is the repository's top directory (scripts are run from there). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** runScript runs a repository script, streaming its progress (stderr) and resolving with stdout. */
export function runScript(script: string, timeoutMs: number, args: readonly string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(path.join(REPO_ROOT, script), args, { cwd: REPO_ROOT, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
    child.stderr?.pipe(process.stderr);
  });
}

/** clusterConfig loads the admin kubeconfig the root hook exported in KUBECONFIG. */
export function clusterConfig(): KubeConfig {
  const file = process.env.KUBECONFIG;
  if (!file) throw new Error('KUBECONFIG is not set: run cluster tests with npm run test:cluster');
  const config = new KubeConfig();
  config.loadFromFile(file);
  return config;
}

/** waitFor polls `check` until it returns a value, every intervalMs, failing after timeoutMs. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
