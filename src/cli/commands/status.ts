import * as t from 'io-ts';
import { controlFlagOptions, parseControlUrl, resolveControlContext } from '../control-options.js';
import { statusHelp } from '../control-help.js';
import { UsageError } from '../errors.js';
import { HostnameString, decodeFlags, parseFlags } from '../flags.js';
import type { CliIo } from '../io.js';
import { collectEdgeStatus } from '../status-edge.js';
import type { MetricsSource } from '../status-edge.js';
import { renderStatusJson, renderStatusTable } from '../status-report.js';
import type { StatusReport } from '../status-report.js';
import { pick } from './http.js';

const options = {
  ...controlFlagOptions,
  output: { type: 'string', short: 'o' },
  metrics: { type: 'string' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'base-domain': { type: 'string' },
} as const;

const StatusFlags = t.partial({ output: t.keyof({ table: null, json: null }), metrics: t.string, kubeconfig: t.string, context: t.string, 'base-domain': HostnameString });

/**
 * statusCommand is `tuna status`: every binding with its addresses, where it came from, its
 * tunnels, what holds it back and its last error, as a table or JSON (`-o json`). `--edge` (or
 * TUNA_EDGE) reads the edge's view through its control API; `--kubeconfig` the operator's view,
 * from what it wrote on the cluster's objects.
 */
export async function statusCommand(args: string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(args, options, 'status');
  if (parsed.values.help === true) return (io.out(statusHelp), 0);
  if (parsed.positionals.length > 0) throw new UsageError(`tuna status: unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
  const flags = decodeFlags(StatusFlags, pick(parsed.values, ['output', 'metrics', 'kubeconfig', 'context', 'base-domain']), 'status');
  const isJson = flags.output === 'json' || parsed.values.json === true;
  let report: StatusReport;
  if (flags.kubeconfig !== undefined || flags.context !== undefined || flags['base-domain'] !== undefined) {
    const edgeFlags = Object.keys(controlFlagOptions).filter((k) => k !== 'json' && parsed.values[k] !== undefined);
    if (edgeFlags.length > 0 || flags.metrics !== undefined) throw new UsageError(`tuna status: --kubeconfig reads the cluster and excludes --${[...edgeFlags, ...(flags.metrics !== undefined ? ['metrics'] : [])].join(', --')}`);
    // the operator learns the base domain from its edge (GET /v1/edge); generated hostnames depend on it
    if (flags['base-domain'] === undefined) throw new UsageError('tuna status: the cluster view needs --base-domain, the edge\'s base domain (the operator learns it from its edge; tuna status --edge -o json prints it)');
    const { collectClusterStatus } = await import('../status-cluster-read.js');
    report = await collectClusterStatus(flags.kubeconfig, flags.context, flags['base-domain']);
  } else {
    const ctx = await resolveControlContext(pick(parsed.values, Object.keys(controlFlagOptions)), io.env, 'status');
    const metrics: MetricsSource =
      flags.metrics !== undefined
        ? { url: metricsUrl(flags.metrics), ...(ctx.endpoint.ca !== undefined ? { ca: ctx.endpoint.ca } : {}) }
        : { url: new URL('/metrics', ctx.endpoint.url), apiKey: ctx.apiKey, ...(ctx.endpoint.ca !== undefined ? { ca: ctx.endpoint.ca } : {}) };
    try {
      report = await collectEdgeStatus(ctx.client, ctx.endpoint.url.origin, metrics);
    } finally {
      ctx.client.close();
    }
  }
  io.out(isJson ? renderStatusJson(report) : renderStatusTable(report));
  if (!isJson) for (const note of report.notes) io.err(`note: ${note}`);
  return 0;
}

/** metricsUrl reads `--metrics`: the edge's `listen.metrics` listener, HOST:PORT or a URL (path /metrics unless given). */
function metricsUrl(text: string): URL {
  const path = /^[a-z]+:\/\/[^/]+(\/.+)$/.exec(text.trim())?.[1];
  try {
    return new URL(path ?? '/metrics', parseControlUrl(path === undefined ? text : text.trim().slice(0, -path.length)));
  } catch {
    throw new UsageError(`tuna status: --metrics ${JSON.stringify(text)} is not a URL such as http://HOST:PORT (the edge's listen.metrics listener)`);
  }
}
