import * as t from 'io-ts';
import { startTracing } from '../dataplane/index.js';
import type { TracingHandle } from '../dataplane/index.js';
import { UsageError } from './errors.js';
import { decodeFlags } from './flags.js';
import type { Logger } from './log.js';

/**
 * The trace flags of `tuna http`, `tuna run` and `tuna operator` (docs/dataplane.md "Traces"):
 * off unless an OTLP endpoint is named, by `--trace-endpoint` or OpenTelemetry's own variables
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` plus `/v1/traces`).
 * Off, nothing of the OpenTelemetry SDK is loaded.
 */

/** traceFlagOptions are the parseArgs options of tracing. */
export const traceFlagOptions = {
  'trace-endpoint': { type: 'string' },
  'trace-sample': { type: 'string' },
} as const;

/** traceFlagsHelp documents traceFlagOptions for --help. */
export const traceFlagsHelp = `Traces (OpenTelemetry, OTLP/HTTP; off by default; a request's W3C traceparent always reaches the backend):
  --trace-endpoint URL      send a span per HTTP request to this OTLP/HTTP traces URL, such as
                            http://collector:4318/v1/traces   ($OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
                            or $OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; $OTEL_EXPORTER_OTLP_HEADERS)
  --trace-sample R          sample this share of new traces, 0 <= R <= 1 (default 1); a request
                            that brings a traceparent keeps its caller's decision`;

/** ShareString decodes a share in [0, 1]. */
const ShareString = new t.Type<number, string, unknown>(
  'share',
  (u): u is number => typeof u === 'number',
  (u, c) => {
    const n = typeof u === 'string' && /^(\d+(\.\d+)?|\.\d+)$/.test(u) ? Number(u) : NaN;
    return n >= 0 && n <= 1 ? t.success(n) : t.failure(u, c, 'must be a share of traces from 0 to 1, such as 0.1');
  },
  String,
);

const TraceFlags = t.partial({ 'trace-endpoint': t.string, 'trace-sample': ShareString });

/** TraceConfig is the validated trace flags. */
export interface TraceConfig {
  readonly endpoint: string;
  readonly sample: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
}

/** resolveTracing validates the flags and OpenTelemetry's variables; undefined when tracing is off. */
export function resolveTracing(values: Record<string, unknown>, env: NodeJS.ProcessEnv, command: string): TraceConfig | undefined {
  const flags = decodeFlags(TraceFlags, values, command);
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const endpoint = flags['trace-endpoint'] ?? nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (endpoint === undefined) {
    if (flags['trace-sample'] !== undefined) throw new UsageError(`tuna ${command}: --trace-sample needs --trace-endpoint URL`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new UsageError(`tuna ${command}: the trace endpoint ${JSON.stringify(endpoint)} is not a URL; give the OTLP/HTTP traces URL, such as http://collector:4318/v1/traces`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`tuna ${command}: the trace endpoint must be an http:// or https:// URL (OTLP/HTTP), not ${url.protocol}`);
  if (url.username !== '' || url.password !== '') throw new UsageError(`tuna ${command}: the trace endpoint must not hold credentials; put them in $OTEL_EXPORTER_OTLP_HEADERS`);
  return {
    endpoint: url.href,
    sample: flags['trace-sample'] ?? 1,
    headers: otlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS, command),
    serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? `tuna-${command}`,
  };
}

/** otlpHeaders reads OpenTelemetry's `key=value,key2=value2` header list (values percent-decoded); a malformed entry is a usage error that does not print its value. */
function otlpHeaders(text: string | undefined, command: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? '').split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim();
    if (eq < 1 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`tuna ${command}: $OTEL_EXPORTER_OTLP_HEADERS: each entry must be name=value (entry ${JSON.stringify(name)} is not)`);
    try {
      out[name.toLowerCase()] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw new UsageError(`tuna ${command}: $OTEL_EXPORTER_OTLP_HEADERS: the value of ${name} has a malformed percent escape`);
    }
  }
  return out;
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}

/** openTracing starts the tracer (loading the SDK) when tracing is on; a failed export is logged once per minute at most, and never stops the agent. */
export async function openTracing(config: TraceConfig | undefined, log: Logger, now: () => number = Date.now): Promise<TracingHandle | undefined> {
  if (config === undefined) return undefined;
  let lastReport = -Infinity;
  let lost = 0;
  const onExportError = (err: Error): void => {
    lost++;
    if (now() - lastReport < 60_000) return;
    lastReport = now();
    log.warn(`tracing: spans could not be sent to ${config.endpoint} (${lost} batch${lost === 1 ? '' : 'es'} lost so far); requests are served as before`, { err, traceEndpoint: config.endpoint });
  };
  const handle = await startTracing({ endpoint: config.endpoint, serviceName: config.serviceName, sample: config.sample, headers: config.headers, onExportError });
  log.info(`tracing: spans go to ${config.endpoint} (sampling ${config.sample} of new traces)`, { traceEndpoint: config.endpoint, traceSample: config.sample });
  return handle;
}
