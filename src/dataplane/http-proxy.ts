import { PassThrough } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { relay } from '../wire/index.js';
import type { BackendProtocol, HttpRoute, ServiceBackend } from '../model/index.js';
import { chooseEndpoint } from './backend-choice.js';
import type { Random } from './balancer.js';
import type { EndpointPicker, EndpointResolver } from './endpoints.js';
import { BackendConnectError, BackendTimeoutError } from './errors.js';
import { sendLocalResponse } from './exchange.js';
import type { Downstream } from './exchange.js';
import type { MirrorSender } from './mirror.js';
import { planForBackend, planResponseHeaders } from './request-plan.js';
import type { ForwardPlan } from './request-plan.js';
import type { UpstreamClient, UpstreamResponse } from './upstream.js';

/** ProxyDeps are the long-lived parts every forwarded request uses. */
export interface ProxyDeps {
  endpoints: EndpointResolver;
  picker: EndpointPicker;
  random: Random;
  clientFor(protocol: BackendProtocol): UpstreamClient;
  mirror: MirrorSender;
}

/** Methods that RFC 9110 §9.2.2 makes idempotent: the only ones retried. */
const idempotentMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const maxRetries = 5;

/** AttemptOutcome is one try at a backend: a response (with the plan as sent to that backend), or a local answer to give. */
type AttemptOutcome = { kind: 'response'; response: UpstreamResponse; sent: ForwardPlan } | { kind: 'local'; status: number; body: string };

/** ClientClosedError aborts the upstream side of an exchange whose client went away. */
class ClientClosedError extends Error {
  constructor() {
    super('client closed the stream');
  }
}
// One instance: the abort reason is never shown, and a stack per request would cost for nothing.
const clientClosed = new ClientClosedError();

/**
 * forwardRequest sends a planned request to one of the route's backends and streams the answer
 * back. Retries (Gateway API HTTPRouteRetry) only idempotent requests without a body, only on the
 * listed codes (a refused or reset connection counts as 502, no endpoint as 503), at most
 * `maxRetries` times. `timeouts.request` bounds the whole exchange, `backendRequest` each attempt;
 * either expiring before the response headers gives 504.
 */
export async function forwardRequest(deps: ProxyDeps, route: HttpRoute, ds: Downstream, plan: ForwardPlan): Promise<void> {
  const whole = new AbortController();
  let isDone = false;
  // Only a client that left before the whole response was written aborts the upstream side (the
  // stream's 'close' can come before our pipeline's end; a finished exchange has nothing to cancel).
  ds.onClose(() => {
    if (!isDone && ds.isAborted) whole.abort(clientClosed);
  });
  // 0 disables a timeout (Gateway API HTTPRouteTimeouts: a zero duration means no timeout).
  const requestMs = route.timeouts?.requestMs;
  const requestTimer = !requestMs ? undefined : setTimeout(() => whole.abort(new BackendTimeoutError('request', requestMs)), requestMs);
  try {
    const body = ds.hasBody ? takeBody(deps, ds, plan) : undefined;
    if (!ds.hasBody) sendMirrors(deps, plan, undefined);
    const isRetryable = route.retry !== undefined && idempotentMethods.has(plan.method) && body === undefined;
    const retries = isRetryable ? Math.min(route.retry?.attempts ?? 0, maxRetries) : 0;
    for (let attempt = 0; ; attempt++) {
      const outcome = await attemptOnce(deps, route, plan, body, whole.signal);
      const status = outcome.kind === 'response' ? outcome.response.status : outcome.status;
      const retry = attempt < retries && route.retry?.codes.includes(status) === true && !whole.signal.aborted;
      if (retry) {
        if (outcome.kind === 'response') outcome.response.body.destroy();
        await delay(backoffMs(route, attempt), undefined, { signal: whole.signal }).catch(() => undefined);
        if (!whole.signal.aborted) continue;
        sendLocalResponse(ds, 504, `${errorText(whole.signal.reason)}\n`);
        return;
      }
      if (outcome.kind === 'local') sendLocalResponse(ds, outcome.status, outcome.body);
      else await streamResponse(ds, outcome.sent, outcome.response, requestTimer === undefined && !route.timeouts?.backendRequestMs ? undefined : whole.signal);
      return;
    }
  } finally {
    isDone = true;
    if (requestTimer) clearTimeout(requestTimer);
  }
}

function backoffMs(route: HttpRoute, attempt: number): number {
  return Math.min((route.retry?.backoffMs ?? 25) * 2 ** attempt, 2_000);
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

/** attemptOnce picks a backend and endpoint and sends the request once, with that backend's filters applied. */
async function attemptOnce(
  deps: ProxyDeps,
  route: HttpRoute,
  plan: ForwardPlan,
  body: Downstream['body'] | undefined,
  whole: AbortSignal,
): Promise<AttemptOutcome> {
  const choice = chooseEndpoint(deps, route.backends);
  if (choice.kind === 'local') return choice;
  const { endpoint, backend, target } = choice;
  const sent = planForBackend(plan, backend);
  // Without a per-attempt timeout the exchange's own signal is enough (no extra controller).
  const backendMs = route.timeouts?.backendRequestMs;
  const attempt = !backendMs ? undefined : attemptSignal(whole, backendMs);
  const signal = attempt?.signal ?? whole;
  try {
    const request = { method: sent.method, path: sent.target, authority: sent.authority, headers: sent.headers, body };
    const response = await clientOf(deps, backend).send(endpoint, request, signal);
    if (attempt) response.body.once('close', attempt.cleanup);
    return { kind: 'response', response, sent };
  } catch (err) {
    attempt?.cleanup();
    if (err instanceof BackendTimeoutError) return { kind: 'local', status: 504, body: `${err.message}\n` };
    if (signal.aborted && signal.reason instanceof BackendTimeoutError) return { kind: 'local', status: 504, body: `${signal.reason.message}\n` };
    const message = err instanceof BackendConnectError ? err.message : `backend ${target} failed`;
    return { kind: 'local', status: 502, body: `${message}\n` };
  }
}

/** attemptSignal is aborted by the exchange's signal or after `ms` (backendRequest timeout). */
function attemptSignal(whole: AbortSignal, ms: number): { signal: AbortSignal; cleanup: () => void } {
  const abort = new AbortController();
  const onWhole = (): void => abort.abort(whole.reason);
  whole.addEventListener('abort', onWhole, { once: true });
  const timer = setTimeout(() => abort.abort(new BackendTimeoutError('backendRequest', ms)), ms);
  return {
    signal: abort.signal,
    cleanup: () => {
      clearTimeout(timer);
      whole.removeEventListener('abort', onWhole);
    },
  };
}

function clientOf(deps: ProxyDeps, backend: ServiceBackend): UpstreamClient {
  return deps.clientFor(backend.protocol === 'h2c' || backend.protocol === 'h2' ? backend.protocol : 'http');
}

/**
 * streamResponse sends the backend's status and headers, then pipes the body with backpressure.
 * A failure mid-body resets the client's stream: a truncated response must not look complete.
 * `signal` is given when a timeout may still cut the body; a client that leaves needs none,
 * since the relay tears down both sides when its destination closes early.
 */
function streamResponse(ds: Downstream, plan: ForwardPlan, res: UpstreamResponse, signal: AbortSignal | undefined): Promise<void> {
  if (ds.isClosed) {
    res.body.destroy();
    return Promise.resolve();
  }
  const headers = planResponseHeaders(plan, res.headers);
  const isBodyless = plan.method === 'HEAD' || res.status === 204 || res.status === 304;
  const hasTrailers = res.mayHaveTrailers && !isBodyless && !res.isComplete;
  const endStream = res.isComplete || (isBodyless && !res.mayHaveTrailers);
  ds.respond(res.status, headers, { trailers: hasTrailers ? res.trailers : undefined, endStream });
  if (endStream) {
    res.body.resume();
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    if (signal === undefined) return relay([res.body, ds.out], () => resolve());
    const onAbort = (): void => {
      res.body.destroy(signal.reason instanceof Error ? signal.reason : undefined);
    };
    signal.addEventListener('abort', onAbort);
    relay([res.body, ds.out], () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

function errorText(reason: unknown): string {
  return reason instanceof Error ? reason.message : 'request aborted';
}
