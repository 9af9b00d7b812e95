import http from 'node:http';
import type { Endpoint } from './endpoints.js';
import { BackendConnectError } from './errors.js';
import type { HeaderMap } from './headers.js';
import { forwardBody } from './upstream.js';
import type { UpstreamClient, UpstreamRequest, UpstreamResponse } from './upstream.js';

/** Http1ClientOptions bound the keep-alive pool. */
export interface Http1ClientOptions {
  /** maximum sockets per endpoint (requests beyond it queue in the agent) */
  maxSocketsPerEndpoint: number;
  /** idle sockets kept per endpoint (as many as may be busy: fewer would churn connections under load) */
  maxFreeSocketsPerEndpoint: number;
}

/**
 * Http1Client speaks HTTP/1.1 to backends through one keep-alive `http.Agent`, which pools
 * sockets per endpoint. LIFO scheduling reuses the warmest socket and lets idle ones time out.
 */
export class Http1Client implements UpstreamClient {
  private readonly agent: http.Agent;

  constructor(options: Partial<Http1ClientOptions> = {}) {
    this.agent = new http.Agent({
      keepAlive: true,
      maxSockets: options.maxSocketsPerEndpoint ?? 256,
      maxFreeSockets: options.maxFreeSocketsPerEndpoint ?? 256,
      scheduling: 'lifo',
      timeout: 60_000,
    });
  }

  /**
   * send issues one request on a pooled socket. The abort signal is watched with one listener of
   * ours rather than http.request's `signal` option, whose per-request bookkeeping showed in the
   * agent's profile (docs/tunnel-performance.md); an abort destroys the request, and with it the
   * response, with the signal's reason. `request.headers` gains its `host` (the same on every attempt).
   */
  send(endpoint: Endpoint, request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamResponse> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const headers = request.headers;
      headers.host = request.authority;
      const req = http.request({
        agent: this.agent,
        host: endpoint.address,
        port: endpoint.port,
        method: request.method,
        path: request.path,
        headers: headers.expect === undefined ? headerList(headers) : headers,
        setHost: false,
      });
      const onAbort = (): void => {
        req.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      // No `{ once: true }` (an options object and its validation per request): 'abort' fires once
      // and the listener goes with the request. `on`, not `once`: 'close' and 'response' fire once.
      signal.addEventListener('abort', onAbort);
      req.on('close', () => signal.removeEventListener('abort', onAbort));
      req.on('response', (res) => {
        // Errors reach the consumer through pipeline; this keeps a late reset from being unhandled.
        res.on('error', () => undefined);
        resolve({
          status: res.statusCode ?? 502,
          headers: res.headers,
          body: res,
          isComplete: false,
          mayHaveTrailers: res.headers.trailer !== undefined,
          trailers: () => (Object.keys(res.trailers).length > 0 ? (res.trailers as HeaderMap) : undefined),
        });
      });
      req.on('error', (err) => reject(signal.aborted ? signal.reason : new BackendConnectError(`${endpoint.address}:${endpoint.port}`, err)));
      if (request.body) forwardBody(request.body, req);
      else req.end();
    });
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
