/**
 * The processes of the scale benchmark, run the way users run them (the built CLI, `node
 * dist/cli/main.js`): a store-mode `tuna edge` on loopback (SQLite store, TLS tunnel listener with a
 * throwaway certificate, plain public HTTP, a metrics listener) and `tuna operator` with its tunnel
 * keys in a Secret (`--keys-namespace`), as hack/conformance.sh starts them.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BenchProcessError } from '../tunnel/errors.js';
import { freePort, loopback, waitForListening } from '../tunnel/net.js';
import type { ProcessGroup, SpawnedProcess } from '../tunnel/processes.js';
import { readyOrExit } from '../tunnel/processes.js';
import { repoRoot } from '../tunnel/tools.js';

/** SCALE_BASE_DOMAIN is the edge's base domain: every benchmark host is a subdomain of it (verified at once). */
export const SCALE_BASE_DOMAIN = 'scale.test';

const cli = join(repoRoot, 'dist', 'cli', 'main.js');
/** IMAGE_NODE_FLAGS are the node flags of the images' entrypoint (Dockerfile): the bench runs both processes as they are deployed. */
export const IMAGE_NODE_FLAGS = ['--max-semi-space-size=16'];
/**
 * TUNA_BENCH_NODE_FLAGS: node flags for the edge and the operator after the image's (e.g. `--cpu-prof
 * --cpu-prof-dir=DIR` for a profile of the run; a later `--max-semi-space-size` wins over the image's)
 */
const nodeFlags = (): string[] => [...IMAGE_NODE_FLAGS, ...(process.env['TUNA_BENCH_NODE_FLAGS'] ?? '').split(' ').filter((f) => f !== '')];
const day = 24 * 3600_000;

/** ScaleEdge is the running edge and what the operator needs to reach it. */
export interface ScaleEdge {
  process: SpawnedProcess;
  tunnelPort: number;
  httpPort: number;
  metricsPort: number;
  certFile: string;
  /** an account API key with the `reservations` scope, for the operator */
  operatorKey: string;
}

/** buildCli builds the CLI as `npm run build` does (tsc, then hack/bundle.js), so the processes run what the worktree holds. */
export function buildCli(): void {
  execFileSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: repoRoot, stdio: 'inherit', timeout: 600_000 });
  execFileSync(process.execPath, [join(repoRoot, 'hack', 'bundle.js')], { cwd: repoRoot, stdio: 'inherit', timeout: 600_000 });
}

function logTo(proc: SpawnedProcess, file: string): void {
  const out = createWriteStream(file);
  proc.child.stdout?.pipe(out);
  proc.child.stderr?.pipe(out);
}

function runCli(args: string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync(process.execPath, [cli, ...args], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
}

const lastLine = (text: string): string => text.trim().split('\n').pop()?.trim() ?? '';

/** startScaleEdge writes the edge's config into `dir`, initialises its store and starts it. */
export async function startScaleEdge(group: ProcessGroup, dir: string): Promise<ScaleEdge> {
  const [tunnelPort, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const certFile = join(dir, 'tunnel.crt');
  const keyFile = join(dir, 'tunnel.key');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore', timeout: 30_000 });
  const db = join(dir, 'edge.db');
  const config = [
    'listen:',
    `  tunnel: { host: "${loopback}", port: ${tunnelPort}, tls: { certFile: "${certFile}", keyFile: "${keyFile}" } }`,
    `  http: { host: "${loopback}", port: ${httpPort} }`,
    `  metrics: { host: "${loopback}", port: ${metricsPort} }`,
    'store:',
    `  url: "${db}"`,
    `  baseDomain: ${SCALE_BASE_DOMAIN}`,
    // one account holds every host of the run: lift the default per-account quotas above the largest N
    '  quotas: { reservations: 100000, tunnelKeys: 100000 }',
    '',
  ].join('\n');
  const configFile = join(dir, 'edge.yaml');
  await writeFile(configFile, config);
  const adminKey = lastLine(runCli(['edge', 'init', '--store', db]));
  const proc = group.start('edge', process.execPath, [...nodeFlags(), cli, 'edge', '--config', configFile, '--workers', '1'], day, { cwd: repoRoot });
  logTo(proc, join(dir, 'edge.log'));
  await readyOrExit(proc, waitForListening({ port: httpPort }, 30_000), (code) => new BenchProcessError('edge', `exited ${code}`, proc.output()));
  const env = { TUNA_API_KEY: adminKey, TUNA_EDGE: `${loopback}:${tunnelPort}` };
  const operatorKey = lastLine(runCli(['keys', 'create', '--scope', 'reservations', '--name', 'scale-operator', '--ca', certFile], env));
  return { process: proc, tunnelPort, httpPort, metricsPort, certFile, operatorKey };
}

/**
 * startScaleOperator runs `tuna operator` against the cluster with its keys in a Secret of
 * `namespace`, its probes and /metrics on loopback `healthPort`.
 */
export function startScaleOperator(group: ProcessGroup, edge: ScaleEdge, kubeconfig: string, namespace: string, dir: string, healthPort: number): SpawnedProcess {
  const args = [...nodeFlags(), cli, 'operator', '--key', edge.operatorKey, '--ca', edge.certFile, '--keys-namespace', namespace, '--cluster-id', 'scale-bench', '--health-addr', `${loopback}:${healthPort}`];
  const env = { ...process.env, KUBECONFIG: kubeconfig, TUNA_EDGE: `${loopback}:${edge.tunnelPort}` };
  const proc = group.start('operator', process.execPath, args, day, { cwd: repoRoot, env });
  logTo(proc, join(dir, 'operator.log'));
  return proc;
}
