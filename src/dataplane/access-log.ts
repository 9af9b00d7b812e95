import { performance } from 'node:perf_hooks';
import type { TunnelStreamContext } from '../wire/index.js';
import { AccessLogWriter, compileLineFormat, countRead, countWritten, redactTarget } from '../access-log/index.js';
import type { AccessLogWriterOptions } from '../access-log/index.js';
import type { Downstream } from './exchange.js';
import type { HeaderMap } from './headers.js';
import type { ExchangeObserver } from './observer.js';

/**
 * Access logs (docs/dataplane.md "Access logs"): one line per HTTP exchange the data plane serves,
 * written when the exchange ends. Off unless asked for; a sampled-out exchange costs one random
 * draw. No header is ever logged (Authorization, Cookie, API keys cannot leak by construction), and
 * the values of query parameters whose names look like credentials are replaced. The formats,
 * sampling, redaction and byte counting are the access-log room's, shared with the edge's log.
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

/** AccessLogOptions configure an AccessLog: the shared writer's (where lines go, format, sample), and a clock. */
export interface AccessLogOptions extends AccessLogWriterOptions {
  /** a monotonic clock in milliseconds (default performance.now) */
  now?: () => number;
}

/** compileAccessLogFormat returns the function that turns an entry into a line; an unknown field in a template throws. */
export function compileAccessLogFormat(format: string): (entry: AccessLogEntry) => string {
  return compileLineFormat<AccessLogEntry, AccessLogField>(format, ACCESS_LOG_FIELDS);
}

type AccessLogField = (typeof ACCESS_LOG_FIELDS)[number];

/** routes keeps an exchange's matched route id until its line is written (AccessLog.routed). */
const routes = new WeakMap<Downstream, string>();

/** AccessLog is the data plane observer that writes the access log. */
export class AccessLog implements ExchangeObserver {
  readonly #writer: AccessLogWriter<AccessLogEntry, AccessLogField>;
  readonly #now: () => number;

  constructor(options: AccessLogOptions) {
    this.#writer = new AccessLogWriter<AccessLogEntry, AccessLogField>(options, ACCESS_LOG_FIELDS);
    this.#now = options.now ?? (() => performance.now());
  }

  /** observe follows one exchange (if sampled) and writes its line when it ends. */
  observe(ds: Downstream, context: TunnelStreamContext): void {
    if (!this.#writer.isSampled()) return;
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
      this.#writer.log({
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
      });
    });
  }

  /** routed notes the route that matched an exchange being logged. */
  routed(ds: Downstream, routeId: string): void {
    routes.set(ds, routeId);
  }
}
