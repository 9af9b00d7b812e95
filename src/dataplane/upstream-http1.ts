import http from 'node:http';
import https from 'node:https';
import type tls from 'node:tls';
import type { Endpoint } from './endpoints.js';
import { BackendConnectError } from './errors.js';
import type { HeaderMap } from './headers.js';
import { forwardBody } from './upstream.js';
import type { UpstreamCall, UpstreamClient, UpstreamReceiver, UpstreamRequest, UpstreamResponse } from './upstream.js';

/** Http1ClientOptions bound the keep-alive pool. */
export interface Http1ClientOptions {
  /** maximum sockets per endpoint (requests beyond it queue in the agent) */
  maxSocketsPerEndpoint: number;
  /** idle sockets kept per endpoint (as many as may be busy: fewer would churn connections under load) */
  maxFreeSocketsPerEndpoint: number;
  /** set: HTTPS with these TLS options (a backend with a BackendTLSPolicy; backend-tls.ts) */
  tls?: tls.ConnectionOptions;
}

/**
 * Http1Client speaks HTTP/1.1 to backends through one keep-alive `http.Agent`, which pools
 * sockets per endpoint. LIFO scheduling reuses the warmest socket and lets idle ones time out.
 */
export class Http1Client implements UpstreamClient {
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;

  constructor(options: Partial<Http1ClientOptions> = {}) {
    const pool: http.AgentOptions = {
      keepAlive: true,
      maxSockets: options.maxSocketsPerEndpoint ?? 256,
      maxFreeSockets: options.maxFreeSocketsPerEndpoint ?? 256,
      scheduling: 'lifo',
      timeout: 60_000,
    };
    // An https.Agent applies its own options to every socket it opens: the TLS options live there.
    this.agent = options.tls ? new https.Agent({ ...pool, ...options.tls }) : new http.Agent(pool);
    this.request = options.tls ? https.request : http.request;
  }

  /**
   * send issues one request on a pooled socket. The call it returns is the abort handle: a
   * cancel destroys the request (and with it the response) with the given reason. No promise,
   * AbortSignal or `once` wrapper per request (docs/tunnel-performance.md §10). `request.headers`
   * gains its `host` (the same on every attempt).
   */
  send(endpoint: Endpoint, request: UpstreamRequest, receiver: UpstreamReceiver): UpstreamCall {
    const call = new Http1Call(endpoint, receiver);
    const headers = request.headers;
    headers.host = request.authority;
    let req: http.ClientRequest;
    try {
      req = this.request({
        agent: this.agent,
        host: endpoint.address,
        port: endpoint.port,
        method: request.method,
        path: request.path,
        headers: headers.expect === undefined ? headerList(headers) : headers,
        setHost: false,
      });
    } catch (err) {
      // an invalid method, path or header value: reported as a failed request, after send returns
      process.nextTick(reportError, call, err);
      return call;
    }
    call.req = req;
    // `on`, not `once`: 'response' fires once, and 'error' must stay (a late reset is not unhandled).
    req.on('response', (res) => call.onResponse(res));
    req.on('error', (err) => call.onError(err));
    if (request.body) forwardBody(request.body, req);
    else req.end();
    return call;
  }

  /** openSockets counts the agent's sockets (busy and idle) — for tests and metrics. */
  openSockets(): number {
    const count = (m: NodeJS.ReadOnlyDict<unknown[]>): number => Object.values(m).reduce((n, l) => n + (l?.length ?? 0), 0);
    return count(this.agent.sockets) + count(this.agent.freeSockets);
  }

  /** close destroys every pooled socket. */
  close(): void {
    this.agent.destroy();
  }

  /** release closes the idle sockets and keeps no socket after its request: busy ones finish their request first. */
  release(): void {
    (this.agent as unknown as { keepAlive: boolean }).keepAlive = false;
    for (const list of Object.values(this.agent.freeSockets)) for (const socket of list ?? []) socket.destroy();
  }
}

/** Http1Call is one request in flight: its abort handle, and what reports to its receiver. */
class Http1Call implements UpstreamCall {
  req: http.ClientRequest | undefined = undefined;
  private reason: Error | undefined = undefined;
  private isReported = false;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly receiver: UpstreamReceiver,
  ) {}

  cancel(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    // A finished request is already `destroyed` (Node marks it so when its socket goes back to
    // the pool), and destroy() then does nothing. Before the response this emits 'error'.
    this.req?.destroy(reason);
  }

  onResponse(res: http.IncomingMessage): void {
    // Errors reach the consumer through the relay; this keeps a late reset from being unhandled.
    res.on('error', ignore);
    this.isReported = true;
    this.receiver.onUpstreamResponse(new Http1Response(res));
  }

  onError(err: Error): void {
    this.report(this.reason ?? new BackendConnectError(`${this.endpoint.address}:${this.endpoint.port}`, err));
  }

  report(err: unknown): void {
    if (this.isReported) return;
    this.isReported = true;
    this.receiver.onUpstreamError(err);
  }
}

function reportError(call: Http1Call, err: unknown): void {
  call.report(err);
}

function ignore(): void {}

/** Http1Response is a backend's HTTP/1.1 answer (a class: its trailers() is no closure per response). */
class Http1Response implements UpstreamResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly isComplete = false;
  readonly mayHaveTrailers: boolean;

  constructor(readonly body: http.IncomingMessage) {
    this.status = body.statusCode ?? 502;
    this.headers = body.headers;
    this.mayHaveTrailers = body.headers.trailer !== undefined;
  }

  trailers(): HeaderMap | undefined {
    return Object.keys(this.body.trailers).length > 0 ? (this.body.trailers as HeaderMap) : undefined;
  }
}

/**
 * headerList flattens a header map into the `[name, value, …]` list http.request also takes: Node
 * then writes the head from it directly, where an object is first copied header by header with
 * setHeader (an entry array each; 1.6 KB per request of the agent's allocation, the largest item
 * in its heap profile after the keep-alive pool). With `Expect` present the object is passed, so
 * that Node still sends the head at once and waits for `100 Continue` as it does for an object.
 */
function headerList(headers: HeaderMap): string[] {
  const list: string[] = [];
  for (const name in headers) {
    const value = headers[name]!;
    if (typeof value === 'string') list.push(name, value);
    else for (const v of value) list.push(name, v);
  }
  return list;
}
