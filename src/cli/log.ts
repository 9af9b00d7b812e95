import * as t from 'io-ts';
import { decodeFlags } from './flags.js';
import type { CliIo } from './io.js';
import { errorLine } from '../model/index.js';

/**
 * The one logger of the long-running commands (`tuna edge`, `operator`, `run`, `http`, `tcp`,
 * `demo`): one line per event, so an operator's first hour reads without surprises.
 *
 * - `text` (the default) writes the message as the commands always have: what the command reports
 *   (`info`) on stdout, notes about the process itself and problems on stderr; an error field is
 *   appended in one line (`: HTTP 429: storage is (re)initializing`), never as a raw HTTP dump.
 * - `json` writes one JSON object a line on stdout — `time`, `level`, `msg`, then the fields — for
 *   log collectors (`kubectl logs`, journald). A message of several lines (a summary) keeps its
 *   first line as `msg` and the others in `detail`.
 */

/** LogFormat is the value of `--log-format`. */
export type LogFormat = 'text' | 'json';

/** LogFields are an event's structured data; `err` is rendered by describeError. */
export type LogFields = Record<string, unknown>;

/** Logger writes one event per line. */
export interface Logger {
  /** info is what the command reports (text: stdout): a banner, what is published, a sync */
  info(msg: string, fields?: LogFields): void;
  /** notice is a normal event about the process (text: stderr): a signal, a tunnel up or down; level info in JSON */
  notice(msg: string, fields?: LogFields): void;
  /** warn is a problem the command rides out (text: stderr) */
  warn(msg: string, fields?: LogFields): void;
  /** error is a failure (text: stderr) */
  error(msg: string, fields?: LogFields): void;
}

/** logFlagOptions is the parseArgs option every long-running command takes. */
export const logFlagOptions = { 'log-format': { type: 'string' } } as const;

/** logFlagsHelp documents logFlagOptions for --help. */
export const logFlagsHelp = `  --log-format F     text (default) or json: one JSON object a line on stdout  ($TUNA_LOG_FORMAT)`;

const LogFormatCodec = t.keyof({ text: null, json: null }, 'text or json');
const LogFlags = t.partial({ 'log-format': LogFormatCodec });

/** resolveLogFormat validates `--log-format`, falling back to TUNA_LOG_FORMAT, then text. */
export function resolveLogFormat(values: Record<string, unknown>, env: NodeJS.ProcessEnv, command: string): LogFormat {
  const given = values['log-format'] ?? (env.TUNA_LOG_FORMAT === '' ? undefined : env.TUNA_LOG_FORMAT);
  if (given === undefined) return 'text';
  return decodeFlags(LogFlags, { 'log-format': given }, command)['log-format'] ?? 'text';
}

/**
 * peekLogFormat reads the format from a raw command line before the command parses it, so that a
 * failure of a long-running command started with `--log-format json` is a JSON line too.
 */
export function peekLogFormat(args: readonly string[], env: NodeJS.ProcessEnv): LogFormat {
  let given = env.TUNA_LOG_FORMAT;
  args.forEach((arg, i) => {
    if (arg === '--log-format') given = args[i + 1];
    else if (arg.startsWith('--log-format=')) given = arg.slice('--log-format='.length);
  });
  return given === 'json' ? 'json' : 'text';
}

type Level = 'info' | 'warn' | 'error';

/** createLogger builds the logger of one command over its terminal. */
export function createLogger(io: Pick<CliIo, 'out' | 'err'>, format: LogFormat, now: () => Date = () => new Date()): Logger {
  const write = (level: Level, toStderr: boolean, msg: string, fields: LogFields = {}): void => {
    if (format === 'text') {
      const line = fields.err === undefined ? msg : `${msg}: ${describeError(fields.err)}`;
      (toStderr ? io.err : io.out)(line);
      return;
    }
    const [first = '', ...rest] = msg
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    const event: LogFields = { time: now().toISOString(), level, msg: first };
    if (rest.length > 0) event.detail = rest;
    for (const [key, value] of Object.entries(fields)) {
      if (key === 'time' || key === 'level' || key === 'msg') continue;
      event[key] = key === 'err' ? describeError(value) : value;
    }
    const code = errorCode(fields.err);
    if (code !== undefined && event.code === undefined) event.code = code;
    io.out(JSON.stringify(event));
  };
  return {
    info: (msg, fields) => write('info', false, msg, fields),
    notice: (msg, fields) => write('info', true, msg, fields),
    warn: (msg, fields) => write('warn', true, msg, fields),
    error: (msg, fields) => write('error', true, msg, fields),
  };
}

/**
 * describeError says what went wrong in one line: a Kubernetes API error by its status code and
 * the API's reason (errorLine of src/model: never the headers or body the client library puts
 * in its message), anything else by its message.
 */
export function describeError(err: unknown): string {
  if (err instanceof Error && err.message === '') return err.name;
  return errorLine(err);
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
