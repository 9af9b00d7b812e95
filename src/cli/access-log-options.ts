import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import * as t from 'io-ts';
import { AccessLogFormatError } from '../access-log/index.js';
import type { AccessLogWriterOptions } from '../access-log/index.js';
import { AccessLog, compileAccessLogFormat } from '../dataplane/index.js';
import { UsageError } from './errors.js';
import { decodeFlags } from './flags.js';
import type { CliIo } from './io.js';

/**
 * The access log flags of `tuna http`, `tuna run` and `tuna operator` (docs/dataplane.md
 * "Access logs") and of `tuna edge` (docs/edge.md "Access log"): off unless `--access-log` names
 * where the lines go. The destinations, formats and sampling are the same; each log has its fields.
 */

/** accessLogFlagOptions are the parseArgs options of the access log. */
export const accessLogFlagOptions = {
  'access-log': { type: 'string' },
  'access-log-format': { type: 'string' },
  'access-log-sample': { type: 'string' },
} as const;

/** accessLogFlagsHelp documents accessLogFlagOptions for --help. */
export const accessLogFlagsHelp = `Access log (one line per HTTP request; off by default; never a header, credential-like query values redacted):
  --access-log DEST         stdout, stderr, or a file to append to              ($TUNA_ACCESS_LOG)
  --access-log-format F     json (default), or a template such as
                            '$client $method $host$path $status $bytesOut $durationMs'
  --access-log-sample R     log this share of requests, 0 < R <= 1 (default 1)`;

/** SampleString decodes a share in (0, 1]. */
const SampleString = new t.Type<number, string, unknown>(
  'sample',
  (u): u is number => typeof u === 'number',
  (u, c) => {
    const n = typeof u === 'string' && /^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(u) ? Number(u) : NaN;
    return n > 0 && n <= 1 ? t.success(n) : t.failure(u, c, 'must be a share of requests above 0 and at most 1, such as 0.1');
  },
  String,
);

const AccessLogFlags = t.partial({ 'access-log': t.string, 'access-log-format': t.string, 'access-log-sample': SampleString });

/** AccessLogConfig is the validated access log flags. */
export interface AccessLogConfig {
  /** stdout, stderr, or a file path */
  readonly dest: string;
  readonly format: string;
  readonly sample: number;
}

/** AccessLogSink is a started access log: its writer (the data plane's observer, or the edge's log), and how to flush its destination at exit. */
export interface AccessLogSink<L = AccessLog> {
  readonly observer: L;
  close(): Promise<void>;
}

/**
 * resolveAccessLog validates the flags ($TUNA_ACCESS_LOG when --access-log is absent); undefined
 * when the access log is off. `checkFormat` compiles a format against the log's fields (default:
 * the data plane's), throwing AccessLogFormatError for an unknown one.
 */
export function resolveAccessLog(
  values: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
  command: string,
  checkFormat: (format: string) => unknown = compileAccessLogFormat,
): AccessLogConfig | undefined {
  const flags = decodeFlags(AccessLogFlags, values, command);
  const dest = flags['access-log'] ?? (env.TUNA_ACCESS_LOG === '' ? undefined : env.TUNA_ACCESS_LOG);
  if (dest === undefined) {
    if (flags['access-log-format'] !== undefined || flags['access-log-sample'] !== undefined) throw new UsageError(`tuna ${command}: --access-log-format and --access-log-sample need --access-log stdout|stderr|FILE`);
    return undefined;
  }
  const format = flags['access-log-format'] ?? 'json';
  try {
    checkFormat(format);
  } catch (err) {
    if (err instanceof AccessLogFormatError) throw new UsageError(`tuna ${command}: --access-log-format: ${err.message}`);
    throw err;
  }
  return { dest, format, sample: flags['access-log-sample'] ?? 1 };
}

/**
 * openAccessLog opens the destination and makes the log that writes to it (`make`; default the data
 * plane's AccessLog). A file is opened for appending, so several agent processes (`--processes`) or
 * edge workers (`--workers`) may share one: each line is one write.
 */
export async function openAccessLog(config: AccessLogConfig | undefined, io: CliIo, command: string): Promise<AccessLogSink | undefined>;
export async function openAccessLog<L>(config: AccessLogConfig | undefined, io: CliIo, command: string, make: (options: AccessLogWriterOptions) => L): Promise<AccessLogSink<L> | undefined>;
export async function openAccessLog<L>(
  config: AccessLogConfig | undefined,
  io: CliIo,
  command: string,
  make: (options: AccessLogWriterOptions) => L = (options) => new AccessLog(options) as L,
): Promise<AccessLogSink<L> | undefined> {
  if (config === undefined) return undefined;
  const { dest, format, sample } = config;
  if (dest === 'stdout' || dest === '-') return { observer: make({ write: (line) => io.out(line), format, sample }), close: async () => undefined };
  if (dest === 'stderr') return { observer: make({ write: (line) => io.err(line), format, sample }), close: async () => undefined };
  const file = createWriteStream(dest, { flags: 'a' });
  try {
    await once(file, 'open');
  } catch (err) {
    throw new UsageError(`tuna ${command}: --access-log ${dest}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  // a write error (disk full) must not stop the agent: it is reported once and later lines are dropped
  let isBroken = false;
  file.on('error', (err) => {
    if (!isBroken) io.err(`tuna ${command}: access log ${dest}: ${(err as NodeJS.ErrnoException).code ?? err.message}; access log lines are dropped from now on`);
    isBroken = true;
  });
  return {
    observer: make({ write: (line) => void (isBroken || file.write(`${line}\n`)), format, sample }),
    close: () => new Promise<void>((resolve) => file.end(() => resolve())),
  };
}
