import { performance } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import type { TunnelStreamContext } from '../wire/index.js';
import { DataPlaneError } from './errors.js';
import type { Downstream } from './exchange.js';
import type { HeaderMap } from './headers.js';
import type { ExchangeObserver } from './observer.js';

/**
 * Access logs (docs/dataplane.md "Access logs"): one line per HTTP exchange the data plane serves,
 * written when the exchange ends. Off unless asked for; a sampled-out exchange costs one random
 * draw. No header is ever logged (Authorization, Cookie, API keys cannot leak by construction), and
 * the values of query parameters whose names look like credentials are replaced.
 */

/** AccessLogEntry is one logged exchange; JSON lines carry these fields, templates name them. */
export interface AccessLogEntry {
  /** when the exchange ended, ISO 8601 UTC */
  time: string;
  /** the request id the edge assigned (also sent upstream as `x-request-id`) */
  requestId: string;
  binding: string;
  /** the route id that matched (`ingress/default/web/rule/0/...`), null when none did (404, 421) */
  route: string | null;
  /** the public client's address, as the edge saw it */
  client: string;
  method: string;
  host: string;
  /** path and query, with credential-like query values redacted */
  path: string;
  /** the response status; null when the exchange ended before one was sent */
  status: number | null;
  /** from the request's arrival at the data plane to the exchange's end, in milliseconds */
  durationMs: number;
  /** request body bytes read from the client */
  bytesIn: number;
  /** response body bytes written to the client */
  bytesOut: number;
  /** the client went away (reset, disconnect) before the response ended */
  aborted: boolean;
}

/** ACCESS_LOG_FIELDS are the names a template may use, in the order JSON lines list them. */
export const ACCESS_LOG_FIELDS = ['time', 'requestId', 'binding', 'route', 'client', 'method', 'host', 'path', 'status', 'durationMs', 'bytesIn', 'bytesOut', 'aborted'] as const;

/** AccessLogOptions configure an AccessLog. */
export interface AccessLogOptions {
  /** where each line goes (without its newline) */
  write(line: string): void;
  /** `json` (one object a line), or a template naming fields as `$field` or `${field}` */
  format?: string;
  /** the share of exchanges logged, in (0, 1] (default 1: every one) */
  sample?: number;
  /** a random number in [0, 1) (default Math.random; tests inject their own) */
  random?: () => number;
  /** a monotonic clock in milliseconds (default performance.now) */
  now?: () => number;
}

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

/** compileAccessLogFormat returns the function that turns an entry into a line; an unknown field in a template throws. */
export function compileAccessLogFormat(format: string): (entry: AccessLogEntry) => string {
  if (format === 'json') return (entry) => JSON.stringify(entry);
  const known = new Set<string>(ACCESS_LOG_FIELDS);
  const parts: (string | keyof AccessLogEntry)[] = [];
  const fields = new Set<string>();
  let last = 0;
  for (const m of format.matchAll(/\$\{([A-Za-z]+)\}|\$([A-Za-z]+)/g)) {
    const name = m[1] ?? m[2]!;
    if (!known.has(name)) throw new AccessLogFormatError(`unknown field $${name} in the access log format; the fields are ${ACCESS_LOG_FIELDS.join(', ')}`);
    parts.push(format.slice(last, m.index));
    parts.push(name as keyof AccessLogEntry);
    fields.add(String(parts.length - 1));
    last = m.index + m[0].length;
  }
  parts.push(format.slice(last));
  return (entry) => parts.map((p, i) => (fields.has(String(i)) ? printable(entry[p as keyof AccessLogEntry]) : p)).join('');
}

/** printable writes one field of a template line: `-` for null, control characters escaped (no forged lines). */
function printable(value: string | number | boolean | null): string {
  if (value === null) return '-';
  let out = '';
  for (const c of String(value)) {
    const code = c.charCodeAt(0);
    out += code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : c;
  }
  return out;
}

/** AccessLogFormatError: an access log template names a field that does not exist. */
export class AccessLogFormatError extends DataPlaneError {
  constructor(message: string) {
    super('TUNA_ACCESS_LOG_FORMAT', message);
  }
}

/** routes keeps an exchange's matched route id until its line is written (AccessLog.routed). */
const routes = new WeakMap<Downstream, string>();

/** AccessLog is the data plane observer that writes the access log. */
export class AccessLog implements ExchangeObserver {
  readonly #write: (line: string) => void;
  readonly #format: (entry: AccessLogEntry) => string;
  readonly #sample: number;
  readonly #random: () => number;
  readonly #now: () => number;

  constructor(options: AccessLogOptions) {
    const sample = options.sample ?? 1;
    if (!(sample > 0 && sample <= 1)) throw new RangeError(`access log sample ${sample} is not in (0, 1]`);
    this.#write = options.write;
    this.#format = compileAccessLogFormat(options.format ?? 'json');
    this.#sample = sample;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? (() => performance.now());
  }

  /** observe follows one exchange (if sampled) and writes its line when it ends. */
  observe(ds: Downstream, context: TunnelStreamContext): void {
    if (this.#sample < 1 && this.#random() >= this.#sample) return;
    const started = this.#now();
    const { method, authority, target } = ds;
    let status: number | null = null;
    const respond = ds.respond;
    ds.respond = (code: number, headers: HeaderMap, options?: Parameters<Downstream['respond']>[2]) => {
      status = code;
      respond.call(ds, code, headers, options);
    };
    const bytesIn = countRead(ds.body, ds.hasBody);
    const bytesOut = countWritten(ds.out);
    ds.onClose(() => {
      const entry: AccessLogEntry = {
        time: new Date().toISOString(),
        requestId: context.requestId,
        binding: context.bindingId,
        route: routes.get(ds) ?? null,
        client: context.clientAddress,
        method,
        host: authority,
        path: redactTarget(target),
        status,
        durationMs: Math.round((this.#now() - started) * 1000) / 1000,
        bytesIn: bytesIn.n,
        bytesOut: bytesOut.n,
        aborted: ds.isAborted,
      };
      this.#write(this.#format(entry));
    });
  }

  /** routed notes the route that matched an exchange being logged. */
  routed(ds: Downstream, routeId: string): void {
    routes.set(ds, routeId);
  }
}

/** countRead counts the body bytes every reader receives ('data' passes them all), without reading it. */
function countRead(body: Readable, hasBody: boolean): { n: number } {
  const counter = { n: 0 };
  if (!hasBody) return counter;
  const emit = body.emit;
  body.emit = function (this: Readable, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'data') counter.n += (args[0] as { length: number }).length;
    return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
  } as typeof body.emit;
  return counter;
}

/** countWritten counts what is written to the response (write and end; a callback-only end writes nothing). */
function countWritten(out: Writable): { n: number } {
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
