/**
 * Tools: where the programs the tunnel benchmark runs are, as `hack/bench-tools.sh --check` reports
 * them (the script is the one place that knows versions and cache paths).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { BenchToolMissingError } from './errors.js';

/** repoRoot is the repository this benchmark belongs to. */
export const repoRoot = join(import.meta.dirname, '..', '..');

/** BenchTools holds an absolute path per tool, or '' when it is not installed. */
export interface BenchTools {
  nginx: string;
  wrk: string;
  h2load: string;
  curl: string;
  openssl: string;
  frps: string;
  frpc: string;
  chisel: string;
  frpVersion: string;
  chiselVersion: string;
}

/** parseToolPaths reads the `TUNA_X_BIN=path` lines hack/bench-tools.sh prints. */
export function parseToolPaths(text: string): BenchTools {
  const values = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^TUNA_([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) values.set(m[1] as string, m[2] as string);
  }
  const get = (key: string) => values.get(key) ?? '';
  return {
    nginx: get('NGINX_BIN'),
    wrk: get('WRK_BIN'),
    h2load: get('H2LOAD_BIN'),
    curl: get('CURL_BIN'),
    openssl: get('OPENSSL_BIN'),
    frps: get('FRPS_BIN'),
    frpc: get('FRPC_BIN'),
    chisel: get('CHISEL_BIN'),
    frpVersion: get('FRP_VERSION'),
    chiselVersion: get('CHISEL_VERSION'),
  };
}

/**
 * ToolScript runs hack/bench-tools.sh with `args` and returns what it prints on stdout: `--check`
 * installs nothing; no arguments installs what is missing (apt-get, Go module builds cached in
 * $TUNA_CACHE) and then prints the paths.
 */
export type ToolScript = (args: readonly string[]) => string;

/** runToolScript is the real script; its progress (apt-get, go build) goes to this process's stderr. */
export const runToolScript: ToolScript = (args) =>
  execFileSync('bash', [join(repoRoot, 'hack', 'bench-tools.sh'), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    // an install (apt-get update, two Go module downloads and builds) takes minutes on a cold cache
    timeout: args.includes('--check') ? 30_000 : 30 * 60_000,
  });

/** findTools runs `hack/bench-tools.sh --check` (installs nothing) and returns what is present. */
export function findTools(script: ToolScript = runToolScript): BenchTools {
  return parseToolPaths(script(['--check']));
}

/**
 * ensureTools returns the tools, installing first when one of `needed` is missing, as .ci/run
 * does on a fresh machine: it runs hack/bench-tools.sh (which installs only what is missing)
 * unless `install` is false (TUNA_BENCH_INSTALL=0). An install that fails is reported and the
 * tools found afterwards are returned: the caller's requireTool names what is still missing.
 */
export function ensureTools(needed: readonly (keyof BenchTools)[], options: { install?: boolean; script?: ToolScript; log?: (line: string) => void } = {}): BenchTools {
  const { install = true, script = runToolScript, log = (line: string) => console.log(line) } = options;
  const found = findTools(script);
  const missing = needed.filter((t) => !found[t]);
  if (missing.length === 0) return found;
  if (!install) {
    log(`tunnel bench: missing ${missing.join(', ')}; not installing (TUNA_BENCH_INSTALL=0)`);
    return found;
  }
  log(`tunnel bench: missing ${missing.join(', ')}: running hack/bench-tools.sh (apt-get; frp and chisel built from Go modules into $TUNA_CACHE)`);
  try {
    return parseToolPaths(script([]));
  } catch (err) {
    log(`tunnel bench: hack/bench-tools.sh failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    return findTools(script);
  }
}

/** requireTool returns the path of a tool, or throws BenchToolMissingError naming it. */
export function requireTool(tools: BenchTools, name: keyof BenchTools): string {
  const path = tools[name];
  if (!path) throw new BenchToolMissingError(name);
  return path;
}

/** toolVersions asks each installed tool for its version line, for the report's method section. */
export function toolVersions(tools: BenchTools): Record<string, string> {
  // nginx -v and wrk -v print to stderr (and wrk exits 1): read both streams, whatever the status.
  const first = (cmd: string, args: string[]): string => {
    const res = spawnSync(cmd, args, { encoding: 'utf8', timeout: 10_000 });
    return `${res.stdout ?? ''}${res.stderr ?? ''}`.split('\n')[0]?.trim() ?? '';
  };
  const versions: Record<string, string> = { node: process.version };
  if (tools.nginx) versions.nginx = first(tools.nginx, ['-v']).replace(/^nginx version: nginx\//, '');
  if (tools.wrk) versions.wrk = first(tools.wrk, ['-v']).replace(/ \[.*$/, '').replace(/^wrk /, '');
  if (tools.h2load) versions.h2load = first(tools.h2load, ['--version']).replace(/^h2load /, '');
  if (tools.curl) versions.curl = first(tools.curl, ['--version']).split(' ')[1] ?? '';
  if (tools.frps) versions.frp = `v${tools.frpVersion}`;
  if (tools.chisel) versions.chisel = `v${tools.chiselVersion}`;
  return versions;
}
