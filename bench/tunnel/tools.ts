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

/** findTools runs `hack/bench-tools.sh --check` (installs nothing) and returns what is present. */
export function findTools(): BenchTools {
  const out = execFileSync('bash', [join(repoRoot, 'hack', 'bench-tools.sh'), '--check'], { encoding: 'utf8', timeout: 30_000 });
  return parseToolPaths(out);
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
