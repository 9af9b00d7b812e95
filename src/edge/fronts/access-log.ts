import { performance } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import { AccessLogWriter, compileLineFormat, countRead, countWritten, redactTarget } from '../../access-log/index.js';
import type { AccessLogWriterOptions } from '../../access-log/index.js';

/**
 * The edge's access log (docs/edge.md "Access log"): one line per public HTTP request (HTTP/1.1,
 * HTTP/2, a WebSocket upgrade), written when its exchange ends, and one per raw TCP or TLS
 * connection, written when it closes. Off unless asked for (`tuna edge --access-log`). Lines are
 * written by the access-log room's writer, as the agent's: no header is ever a field
 * (Authorization, Cookie and API keys cannot leak), and credential-like query values are redacted.
 */

/** EdgeProtocol is how a logged exchange reached the edge. */
export type EdgeProtocol = 'http1' | 'http2' | 'websocket' | 'tcp' | 'tls';

/** EdgeAccessLogEntry is one logged public request or connection; JSON lines carry these fields, templates name them. */
export interface EdgeAccessLogEntry {
  /** when the exchange ended, ISO 8601 UTC */
  time: string;
  /** the request id the edge assigned and sent upstream; null when the edge answered before choosing a tunnel */
  requestId: string | null;
  protocol: EdgeProtocol;
  /** the public client's address */
  client: string;
  /** the Host (`:authority`), the SNI name of TLS routed by it; null for a TCP port */
  host: string | null;
  /** the binding it was routed to; null when none matched (404) */
  binding: string | null;
  /** the tunnel connection it went to (its connection id, as both ends log it); null when none did */
  tunnel: string | null;
  /** the HTTP method; null for a raw connection */
  method: string | null;
  /** path and query, credential-like query values redacted; null for a raw connection */
  path: string | null;
  /** the response status; null when none was sent, and for a raw connection */
  status: number | null;
  /** from the request head (or the accepted connection) to the end, in milliseconds */
  durationMs: number;
  /** bytes from the client: the request body; a raw connection's or a WebSocket's bytes read */
  bytesIn: number;
  /** bytes to the client: the response body; a raw connection's or a WebSocket's bytes written */
  bytesOut: number;
  /** the client went away (reset, disconnect) before the response ended */
  aborted: boolean;
}

/** EDGE_ACCESS_LOG_FIELDS are the names a template may use, in the order JSON lines list them. */
export const EDGE_ACCESS_LOG_FIELDS = ['time', 'requestId', 'protocol', 'client', 'host', 'binding', 'tunnel', 'method', 'path', 'status', 'durationMs', 'bytesIn', 'bytesOut', 'aborted'] as const;

type EdgeAccessLogField = (typeof EDGE_ACCESS_LOG_FIELDS)[number];

/** compileEdgeAccessLogFormat checks a format against the edge's fields (an unknown one throws AccessLogFormatError). */
export function compileEdgeAccessLogFormat(format: string): (entry: EdgeAccessLogEntry) => string {
  return compileLineFormat<EdgeAccessLogEntry, EdgeAccessLogField>(format, EDGE_ACCESS_LOG_FIELDS);
}

/** EdgeAccessLogOptions configure an EdgeAccessLog: the shared writer's (where lines go, format, sample), and a clock. */
export interface EdgeAccessLogOptions extends AccessLogWriterOptions {
  /** a monotonic clock in milliseconds (default performance.now) */
  now?: () => number;
}

/** ExchangeStart is what a front knows of an exchange when it begins. */
export interface ExchangeStart {
  protocol: EdgeProtocol;
  client: string;
  host: string | null;
  method?: string;
  /** the request target as received (redacted when logged) */
  target?: string;
}

/** EdgeAccessLog writes the edge's access log; `begin` starts one exchange's line. */
export class EdgeAccessLog {
  readonly #writer: AccessLogWriter<EdgeAccessLogEntry, EdgeAccessLogField>;
  readonly #now: () => number;

  constructor(options: EdgeAccessLogOptions) {
    this.#writer = new AccessLogWriter<EdgeAccessLogEntry, EdgeAccessLogField>(options, EDGE_ACCESS_LOG_FIELDS);
    this.#now = options.now ?? (() => performance.now());
  }

  /** begin starts the line of one exchange if it is sampled (undefined when not: nothing more is done for it). */
  begin(start: ExchangeStart): LoggedExchange | undefined {
    return this.#writer.isSampled() ? new LoggedExchange(start, this.#now, (entry) => this.#writer.log(entry)) : undefined;
  }
}

/** LoggedExchange gathers one exchange's fields as the front learns them, and writes its line once, at `end`. */
export class LoggedExchange {
  /** the binding it was routed to */
  binding: string | null = null;
  /** the tunnel connection it went to (the last one, when a request was sent again on another) */
  tunnel: string | null = null;
  /** the request id sent upstream */
  requestId: string | null = null;
  /** the status sent, for a front that sets it as it answers (WebSocket) */
  status: number | null = null;
  readonly #start: ExchangeStart;
  readonly #startedAt: number;
  readonly #now: () => number;
  readonly #log: (entry: EdgeAccessLogEntry) => void;
  #bytes: () => { in: number; out: number } = () => ({ in: 0, out: 0 });
  #isEnded = false;

  constructor(start: ExchangeStart, now: () => number, log: (entry: EdgeAccessLogEntry) => void) {
    this.#start = start;
    this.#now = now;
    this.#startedAt = now();
    this.#log = log;
  }

  /** countBodies counts the request body read from `body` and the response body written to `out`. */
  countBodies(body: Readable, out: Writable): void {
    const read = countRead(body);
    const written = countWritten(out);
    this.#bytes = () => ({ in: read.n, out: written.n });
  }

  /** countSocket takes the bytes from a socket's own counters (a raw connection, a WebSocket). */
  countSocket(socket: { readonly bytesRead: number; readonly bytesWritten: number }): void {
    this.#bytes = () => ({ in: socket.bytesRead, out: socket.bytesWritten });
  }

  /** end writes the line (once): the status sent (null: none), and whether the client went away first. */
  end(status: number | null, aborted: boolean): void {
    if (this.#isEnded) return;
    this.#isEnded = true;
    const { protocol, client, host, method, target } = this.#start;
    const bytes = this.#bytes();
    this.#log({
      time: new Date().toISOString(),
      requestId: this.requestId,
      protocol,
      client,
      host,
      binding: this.binding,
      tunnel: this.tunnel,
      method: method ?? null,
      path: target === undefined ? null : redactTarget(target),
      status,
      durationMs: Math.round((this.#now() - this.#startedAt) * 1000) / 1000,
      bytesIn: bytes.in,
      bytesOut: bytes.out,
      aborted,
    });
  }
}
