import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * crane (go-containerregistry, built by hack/crane.sh into the cache) for the image tests: an
 * in-memory OCI registry on a loopback port, and crane's commands against it.
 */

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** repoPath is a path inside this checkout. */
export function repoPath(path: string): string {
  return `${REPO}${path}`;
}

/**
 * childEnv is the test's environment without the coverage collector's variable: the image build
 * runs tsc and npm, whose coverage is no part of tuna's and would only slow them down.
 */
export function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_V8_COVERAGE;
  return env;
}

/** ensureCrane builds crane when the cache lacks it (minutes, once) and returns its path. */
export async function ensureCrane(): Promise<string> {
  const { stdout } = await run(repoPath('hack/crane.sh'), [], { timeout: 590_000, env: childEnv() });
  const bin = /^TUNA_CRANE_BIN=(.+)$/m.exec(stdout)?.[1];
  if (bin === undefined) throw new Error(`hack/crane.sh printed no TUNA_CRANE_BIN: ${stdout}`);
  return bin;
}

/** LoopbackRegistry is a running `crane registry serve` on 127.0.0.1. */
export interface LoopbackRegistry {
  /** host:port, the prefix of every reference pushed to it */
  host: string;
  stop(): Promise<void>;
}

/** startRegistry serves an in-memory registry on a loopback port the registry picks. */
export async function startRegistry(crane: string): Promise<LoopbackRegistry> {
  const child: ChildProcess = spawn(crane, ['registry', 'serve', '--address', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise<string>((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => reject(new Error(`crane registry serve reported no port: ${log}`)), 10_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const m = /serving on port (\d+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`crane registry serve exited with ${code}: ${log}`));
    });
  });
  child.stderr?.resume();
  return {
    host: `127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** craneRun runs one crane command and returns its stdout. */
export async function craneRun(crane: string, args: string[]): Promise<string> {
  const { stdout } = await run(crane, args, { timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** OciConfig is the part of an OCI image config the tests read. */
export interface OciConfig {
  os: string;
  architecture: string;
  config: {
    Env?: string[];
    User?: string;
    WorkingDir?: string;
    Entrypoint?: string[];
    Cmd?: string[];
    ExposedPorts?: Record<string, object>;
    Labels?: Record<string, string>;
  };
}

/** craneConfig reads an image's config from a registry. */
export async function craneConfig(crane: string, ref: string): Promise<OciConfig> {
  return JSON.parse(await craneRun(crane, ['config', ref])) as OciConfig;
}

/** OciManifest is an image manifest or an index, as much as the tests read. */
export interface OciManifest {
  mediaType: string;
  config?: { digest: string };
  layers?: { digest: string; size: number }[];
  manifests?: { digest: string; annotations?: Record<string, string>; platform?: { os: string; architecture: string } }[];
}

/** craneManifest reads a manifest (or an index) from a registry. */
export async function craneManifest(crane: string, ref: string): Promise<OciManifest> {
  return JSON.parse(await craneRun(crane, ['manifest', ref])) as OciManifest;
}

/** craneExport unpacks an image's flattened filesystem, pulled layer by layer, into `dir`. */
export async function craneExport(crane: string, ref: string, dir: string): Promise<void> {
  await run('bash', ['-c', 'set -euo pipefail; "$0" export "$1" - | tar -x -C "$2"', crane, ref, dir], { timeout: 120_000 });
}
