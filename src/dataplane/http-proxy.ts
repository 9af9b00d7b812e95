import { PassThrough } from 'node:stream';
import type { Readable } from 'node:stream';
import { relay } from '../wire/index.js';
import type { TunnelStreamContext } from '../wire/index.js';
import type { HttpRoute, ServiceBackend } from '../model/index.js';
import type { BackendTlsClients } from './backend-tls.js';
import { chooseEndpoint } from './backend-choice.js';
import type { Random } from './balancer.js';
import type { Endpoint, EndpointPicker, EndpointResolver } from './endpoints.js';
import { BackendConnectError, BackendTimeoutError } from './errors.js';
import { sendLocalResponse } from './exchange.js';
import type { Downstream } from './exchange.js';
import type { MirrorSender } from './mirror.js';
import { planForBackend, planResponseHeaders } from './request-plan.js';
import type { ForwardPlan } from './request-plan.js';
import type { UpstreamCall, UpstreamClient, UpstreamReceiver, UpstreamResponse } from './upstream.js';

/** ProxyDeps are the long-lived parts every forwarded request uses. */
export interface ProxyDeps {
  endpoints: EndpointResolver;
  picker: EndpointPicker;
  random: Random;
  /** clientFor is the pooled client of a backend: by its protocol, and its TLS settings when it has a BackendTLSPolicy */
  clientFor(backend: ServiceBackend): UpstreamClient;
  /** tls gives the TLS settings of backends with a BackendTLSPolicy (upgrades open their own connections with them) */
  tls: BackendTlsClients;
  mirror: MirrorSender;
  /** onError hears a failure of the proxy itself (the client is answered 502 `proxy error`) */
  onError(err: unknown, context: TunnelStreamContext): void;
}

/** Methods that RFC 9110 §9.2.2 makes idempotent: the only ones retried. */
const idempotentMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const maxRetries = 5;

/** ClientClosedError aborts the upstream side of an exchange whose client went away. */
class ClientClosedError extends Error {
  constructor() {
    super('client closed the stream');
  }
}
// One instance: the abort reason is never shown, and a stack per request would cost for nothing.
const clientClosed = new ClientClosedError();
// The reason an upstream request is cancelled with when the proxy itself failed (never shown either).
const proxyFailed = new Error('proxy error');

/**
 * forwardRequest sends a planned request to one of the route's backends and streams the answer
 * back. Retries (Gateway API HTTPRouteRetry) only idempotent requests without a body, only on the
 * listed codes (a refused or reset connection counts as 502, no endpoint as 503), at most
 * `maxRetries` times. `timeouts.request` bounds the whole exchange, `backendRequest` each attempt;
 * either expiring before the response headers gives 504, after them it cuts the body (the
 * client's stream is reset). A failure of the proxy itself is reported to `deps.onError` and
 * answered 502 `proxy error`.
 */
export function forwardRequest(deps: ProxyDeps, route: HttpRoute, ds: Downstream, plan: ForwardPlan, context: TunnelStreamContext): void {
  new Exchange(deps, route, ds, plan, context).start();
}

function backoffMs(route: HttpRoute, attempt: number): number {
  return Math.min((route.retry?.backoffMs ?? 25) * 2 ** attempt, 2_000);
}

/**
 * Exchange is one forwarded request, from the first attempt to the last byte of the answer: one
 * object whose methods the upstream client, the timers and the relay call back, in place of an
 * async function per step, a promise per step and an AbortController per request (the
 * per-request path: docs/tunnel-performance.md §10). Every entry point catches what it throws
 * and fails the exchange (`fail`), as the rejected promise of an async function did.
 *
 * Its phases: an attempt in flight (`call` set, no `response`), a backoff before the next one
 * (`backoffTimer` set), the answer streaming (`response` set), done (`isDone`). `cut` moves any
 * phase to done: the client left or the request timeout expired.
 */
class Exchange implements UpstreamReceiver {
  private retries = 0;
  private attempt = 0;
  private body: Readable | undefined = undefined;
  /** the plan as sent to the current attempt's backend (its filters applied) */
  private sent: ForwardPlan;
  /** the current attempt's endpoint, for the 502 text */
  private endpoint: Endpoint | undefined = undefined;
  private call: UpstreamCall | undefined = undefined;
  /** the reason the current attempt was cancelled with (a timeout's, or the cut's) */
  private cancelled: Error | undefined = undefined;
  private response: UpstreamResponse | undefined = undefined;
  /** why the exchange was cut (client gone, request timeout), once it was */
  private reason: Error | undefined = undefined;
  private requestTimer: NodeJS.Timeout | undefined = undefined;
  private backendTimer: NodeJS.Timeout | undefined = undefined;
  private backoffTimer: NodeJS.Timeout | undefined = undefined;
  private isDone = false;

  constructor(
    private readonly deps: ProxyDeps,
    private readonly route: HttpRoute,
    private readonly ds: Downstream,
    private readonly plan: ForwardPlan,
    private readonly context: TunnelStreamContext,
  ) {
    this.sent = plan;
  }

  start(): void {
    try {
      const { ds, route, plan, deps } = this;
      // Only a client that left before the whole response was written cuts the upstream side (the
      // stream's 'close' can come before the relay's end; a finished exchange has nothing to cancel).
      ds.onClose(() => {
        if (!this.isDone && ds.isAborted) this.cut(clientClosed);
      });
      // 0 disables a timeout (Gateway API HTTPRouteTimeouts: a zero duration means no timeout).
      const requestMs = route.timeouts?.requestMs;
      if (requestMs) this.requestTimer = setTimeout(onRequestTimeout, requestMs, this, requestMs);
      const body = ds.hasBody ? takeBody(deps, ds, plan) : undefined;
      if (!ds.hasBody) sendMirrors(deps, plan, undefined);
      this.body = body;
      const isRetryable = route.retry !== undefined && idempotentMethods.has(plan.method) && body === undefined;
      this.retries = isRetryable ? Math.min(route.retry?.attempts ?? 0, maxRetries) : 0;
      this.tryOnce();
    } catch (err) {
      this.fail(err);
    }
  }

  /** tryOnce picks a backend and endpoint and sends the request once, with that backend's filters applied. */
  private tryOnce(): void {
    const choice = chooseEndpoint(this.deps, this.route.backends);
    if (choice.kind === 'local') return this.settle(choice.status, undefined, choice.body);
    const { endpoint, backend } = choice;
    const sent = planForBackend(this.plan, backend);
    this.sent = sent;
    this.endpoint = endpoint;
    this.cancelled = undefined;
    const backendMs = this.route.timeouts?.backendRequestMs;
    if (backendMs) this.backendTimer = setTimeout(onBackendTimeout, backendMs, this, backendMs);
    const request = { method: sent.method, path: sent.target, authority: sent.authority, headers: sent.headers, body: this.body };
    this.call = clientOf(this.deps, backend).send(endpoint, request, this);
  }

  onUpstreamResponse(response: UpstreamResponse): void {
    try {
      if (this.isDone) return void response.body.destroy();
      // The backendRequest timeout bounds the attempt until its response body closes.
      if (this.backendTimer !== undefined) response.body.once('close', () => this.clearBackendTimer());
      this.settle(response.status, response, '');
    } catch (err) {
      this.fail(err);
    }
  }

  onUpstreamError(err: unknown): void {
    try {
      if (this.isDone) return;
      this.call = undefined;
      this.clearBackendTimer();
      const timeout = err instanceof BackendTimeoutError ? err : this.cancelled instanceof BackendTimeoutError ? this.cancelled : undefined;
      if (timeout !== undefined) return this.settle(504, undefined, `${timeout.message}\n`);
      const message = err instanceof BackendConnectError ? err.message : `backend ${this.endpoint?.address}:${this.endpoint?.port} failed`;
      this.settle(502, undefined, `${message}\n`);
    } catch (caught) {
      this.fail(caught);
    }
  }

  /** settle acts on one attempt's outcome: a retry after a backoff, a local answer, or the response streamed back. */
  private settle(status: number, response: UpstreamResponse | undefined, localBody: string): void {
    if (this.attempt < this.retries && this.route.retry?.codes.includes(status) === true && this.reason === undefined) {
      response?.body.destroy();
      this.call = undefined;
      this.clearBackendTimer();
      this.backoffTimer = setTimeout(onBackoffEnd, backoffMs(this.route, this.attempt), this);
      this.attempt++;
      return;
    }
    if (response === undefined) {
      sendLocalResponse(this.ds, status, localBody);
      return this.finish();
    }
    this.streamResponse(response);
  }

  /** afterBackoff makes the next attempt. */
  afterBackoff(): void {
    try {
      this.backoffTimer = undefined;
      this.tryOnce();
    } catch (err) {
      this.fail(err);
    }
  }

  /**
   * streamResponse sends the backend's status and headers, then relays the body with
   * backpressure. A failure mid-body resets the client's stream: a truncated response must not
   * look complete.
   */
  private streamResponse(res: UpstreamResponse): void {
    const ds = this.ds;
    if (ds.isClosed) {
      res.body.destroy();
      return this.finish();
    }
    const plan = this.sent;
    const headers = planResponseHeaders(plan, res.headers);
    const isBodyless = plan.method === 'HEAD' || res.status === 204 || res.status === 304;
    const hasTrailers = res.mayHaveTrailers && !isBodyless && !res.isComplete;
    const endStream = res.isComplete || (isBodyless && !res.mayHaveTrailers);
    ds.respond(res.status, headers, { trailers: hasTrailers ? () => res.trailers() : undefined, endStream });
    if (endStream) {
      res.body.resume();
      return this.finish();
    }
    this.response = res;
    relay([res.body, ds.out], () => this.afterRelay(res));
  }

  private afterRelay(res: UpstreamResponse): void {
    // A client's RST_STREAM ends the writable side of its stream, so the relay can finish before
    // the body's end: the rest of the upstream answer is not wanted.
    if (!res.body.readableEnded) this.cut(clientClosed);
    this.finish();
  }

  /** cut ends the exchange early with `reason`: the client left, or the request timeout expired. */
  cut(reason: Error): void {
    try {
      if (this.isDone || this.reason !== undefined) return;
      this.reason = reason;
      if (this.backoffTimer !== undefined) {
        clearTimeout(this.backoffTimer);
        this.backoffTimer = undefined;
        sendLocalResponse(this.ds, 504, `${reason.message}\n`);
        return this.finish();
      }
      // Before the response this makes the client report `reason` (onUpstreamError); after it,
      // the request and the body being relayed are destroyed, and the relay resets the client's stream.
      this.cancelCall(reason);
      this.response?.body.destroy(reason);
    } catch (err) {
      this.fail(err);
    }
  }

  /** backendTimeout cancels the current attempt (backendRequest timeout); before its response that answers 504. */
  backendTimeout(ms: number): void {
    try {
      this.backendTimer = undefined;
      this.cancelCall(new BackendTimeoutError('backendRequest', ms));
    } catch (err) {
      this.fail(err);
    }
  }

  private cancelCall(reason: Error): void {
    if (this.call === undefined) return;
    this.cancelled ??= reason;
    this.call.cancel(reason);
  }

  private clearBackendTimer(): void {
    if (this.backendTimer === undefined) return;
    clearTimeout(this.backendTimer);
    this.backendTimer = undefined;
  }

  private finish(): void {
    if (this.isDone) return;
    this.isDone = true;
    if (this.requestTimer !== undefined) clearTimeout(this.requestTimer);
    if (this.backoffTimer !== undefined) clearTimeout(this.backoffTimer);
    this.clearBackendTimer();
  }

  /** fail is a failure of the proxy itself: reported, the upstream request released, the client answered 502 (or reset). */
  private fail(err: unknown): void {
    this.finish();
    this.deps.onError(err, this.context);
    try {
      this.cancelCall(proxyFailed);
      sendLocalResponse(this.ds, 502, 'proxy error\n');
    } catch {
      this.ds.destroy();
    }
  }
}

function onRequestTimeout(exchange: Exchange, ms: number): void {
  exchange.cut(new BackendTimeoutError('request', ms));
}

function onBackendTimeout(exchange: Exchange, ms: number): void {
  exchange.backendTimeout(ms);
}

function onBackoffEnd(exchange: Exchange): void {
  exchange.afterBackoff();
}

/** takeBody returns the request body to send, teed to the mirrors when there are any. */
function takeBody(deps: ProxyDeps, ds: Downstream, plan: ForwardPlan): PassThrough | typeof ds.body {
  if (plan.mirrors.length === 0) return ds.body;
  // The main upstream may connect later than the mirror; a PassThrough holds the body (bounded by
  // its high-water mark, then backpressure) so that neither consumer misses the first bytes.
  const main = new PassThrough();
  ds.body.pipe(main);
  sendMirrors(deps, plan, ds.body);
  return main;
}

function sendMirrors(deps: ProxyDeps, plan: ForwardPlan, body: Downstream['body'] | undefined): void {
  for (const m of plan.mirrors) deps.mirror.send(m, plan, body);
}

function clientOf(deps: ProxyDeps, backend: ServiceBackend): UpstreamClient {
  return deps.clientFor(backend);
}
