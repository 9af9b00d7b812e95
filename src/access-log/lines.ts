import type { Readable, Writable } from 'node:stream';
import { CodedError } from '../model/index.js';

/**
 * The access log lines both ends write (docs/dataplane.md "Access logs", docs/edge.md "Access
 * log"): the agent's data plane one per exchange it serves, the edge one per public request and
 * raw connection. This room holds what they share: the line formats (JSON, or a template naming
 * fields), sampling, the redaction of credential-like query values, and counting body bytes
 * without reading a body. Each log brings its own fields; no header is ever among them.
 */

/** LineValue is what an access log field holds. */
export type LineValue = string | number | boolean | null;

/** REDACTED replaces a credential-like query value. */
export const REDACTED = '[redacted]';

/**
 * SECRET_QUERY_NAME matches query parameter names that carry credentials: OAuth's `access_token`
 * and `code` (RFC 6749 §4.1.2, §4.2.2), signed URLs' `signature` / `X-Amz-Signature` /
 * `X-Amz-Credential`, and the usual `key`, `token`, `secret`, `password`, `auth`, `session` spellings.
 * A name that merely contains one of them (`monkey`) is redacted too: a lost value beats a leaked one.
 */
const SECRET_QUERY_NAME = /token|key|secret|passw|pwd|auth|sig|credential|session|^code$/i;

/** redactTarget replaces the values of credential-like query parameters of a request target, leaving the rest byte for byte. */
export function redactTarget(target: string): string {
  const q = target.indexOf('?');
  if (q < 0) return target;
  const pairs = target.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    let name = rawName;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      // a malformed escape: judge the raw name
    }
    return eq >= 0 && SECRET_QUERY_NAME.test(name) ? `${rawName}=${REDACTED}` : pair;
  });
  return `${target.slice(0, q)}?${pairs.join('&')}`;
}

/** AccessLogFormatError: an access log template names a field that does not exist. */
export class AccessLogFormatError extends CodedError<'TUNA_ACCESS_LOG_FORMAT'> {
  constructor(message: string) {
    super('TUNA_ACCESS_LOG_FORMAT', message);
  }
}

/**
 * compileLineFormat returns the function that turns an entry into a line: `json` (the entry as one
 * JSON object), or a template naming `fields` as `$field` or `${field}`; an unknown field throws.
 */
export function compileLineFormat<E extends { [K in F]: LineValue }, F extends string>(format: string, fields: readonly F[]): (entry: E) => string {
  if (format === 'json') return (entry) => JSON.stringify(entry);
  const known = new Set<string>(fields);
  const parts: string[] = [];
  const isField: boolean[] = [];
  let last = 0;
  for (const m of format.matchAll(/\$\{([A-Za-z]+)\}|\$([A-Za-z]+)/g)) {
    const name = m[1] ?? m[2]!;
    if (!known.has(name)) throw new AccessLogFormatError(`unknown field $${name} in the access log format; the fields are ${fields.join(', ')}`);
    parts.push(format.slice(last, m.index), name);
    isField.push(false, true);
    last = m.index + m[0].length;
  }
  parts.push(format.slice(last));
  isField.push(false);
  return (entry) => parts.map((p, i) => (isField[i] ? printable(entry[p as F]) : p)).join('');
}

/** printable writes one field of a template line: `-` for null, control characters escaped (no forged lines). */
function printable(value: LineValue): string {
  if (value === null) return '-';
  let out = '';
  for (const c of String(value)) {
    const code = c.charCodeAt(0);
    out += code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : c;
  }
  return out;
}

/** AccessLogWriterOptions configure an access log's writer. */
export interface AccessLogWriterOptions {
  /** where each line goes (without its newline) */
  write(line: string): void;
  /** `json` (one object a line), or a template naming fields as `$field` or `${field}` */
  format?: string;
  /** the share of entries logged, in (0, 1] (default 1: every one) */
  sample?: number;
  /** a random number in [0, 1) (default Math.random; tests inject their own) */
  random?: () => number;
}

/** AccessLogWriter samples and formats the entries of one access log and writes their lines. */
export class AccessLogWriter<E extends { [K in F]: LineValue }, F extends string> {
  readonly #write: (line: string) => void;
  readonly #format: (entry: E) => string;
  readonly #sample: number;
  readonly #random: () => number;

  constructor(options: AccessLogWriterOptions, fields: readonly F[]) {
    const sample = options.sample ?? 1;
    if (!(sample > 0 && sample <= 1)) throw new RangeError(`access log sample ${sample} is not in (0, 1]`);
    this.#write = options.write;
    this.#format = compileLineFormat<E, F>(options.format ?? 'json', fields);
    this.#sample = sample;
    this.#random = options.random ?? Math.random;
  }

  /** isSampled draws whether the next exchange is logged (one random draw below a sample of 1, none at 1). */
  isSampled(): boolean {
    return this.#sample >= 1 || this.#random() < this.#sample;
  }

  /** log writes one entry's line. */
  log(entry: E): void {
    this.#write(this.#format(entry));
  }
}

/** countRead counts the body bytes every reader receives ('data' passes them all), without reading it. */
export function countRead(body: Readable, hasBody = true): { n: number } {
  const counter = { n: 0 };
  if (!hasBody) return counter;
  const emit = body.emit;
  body.emit = function (this: Readable, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'data') counter.n += (args[0] as { length: number }).length;
    return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
  } as typeof body.emit;
  return counter;
}

/** countWritten counts what is written to a response (write and end; a callback-only end writes nothing). */
export function countWritten(out: Writable): { n: number } {
  const counter = { n: 0 };
  const add = (chunk: unknown): void => {
    if (typeof chunk === 'string') counter.n += Buffer.byteLength(chunk);
    else if (chunk !== null && chunk !== undefined && typeof chunk !== 'function') counter.n += (chunk as { length: number }).length;
  };
  const write = out.write;
  const end = out.end;
  out.write = function (this: Writable, chunk: unknown, ...rest: unknown[]): boolean {
    add(chunk);
    return write.apply(this, [chunk, ...rest] as Parameters<typeof write>);
  } as typeof out.write;
  out.end = function (this: Writable, chunk?: unknown, ...rest: unknown[]): Writable {
    add(chunk);
    return end.apply(this, [chunk, ...rest] as Parameters<typeof end>);
  } as typeof out.end;
  return counter;
}
