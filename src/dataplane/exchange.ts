import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { constants as h2constants } from 'node:http2';
import type { OutgoingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { Readable, Writable } from 'node:stream';
import type { HeaderMap } from './headers.js';

/**
 * Downstream is one HTTP exchange with the public client, whatever carried it: a stream on a
 * tunnel (HTTP/2), or a request decrypted in the cluster (HTTP/1.1 or HTTP/2 inside TLS). The
 * proxy is written once against this interface.
 */
export interface Downstream {
  readonly method: string;
  readonly authority: string;
  /** request target: path and query */
  readonly target: string;
  /** request headers, lowercase, pseudo-headers included for HTTP/2 */
  readonly headers: IncomingHttpHeaders;
  /** request body (ends at once when there is none) */
  readonly body: Readable;
  /** false when the request is known to carry no body (END_STREAM on HEADERS, no length) */
  readonly hasBody: boolean;
  /** where the response body is written */
  readonly out: Writable;
  /** headersSent is true once `respond` was called */
  readonly headersSent: boolean;
  /** isClosed is true once the client has gone (reset, disconnect) or the exchange ended */
  readonly isClosed: boolean;
  /**
   * isAborted is true once the client went away before the response ended: a reset stream, or a
   * connection closed under an unfinished response. It tells a cancelled exchange, whose upstream
   * request must be aborted, from one that merely closed after its last byte.
   */
  readonly isAborted: boolean;
  /**
   * respond sends the status and headers; it takes `headers` over (an HTTP/2 exchange adds its
   * `:status` to them instead of copying them once more per response). `trailers`, when given,
   * is read after the body ends and its result (possibly empty) sent as trailers (gRPC status
   * travels there).
   */
  respond(status: number, headers: HeaderMap, options?: { endStream?: boolean; trailers?: () => HeaderMap | undefined }): void;
  /** onClose registers a callback for the end of the exchange, normal or not */
  onClose(callback: () => void): void;
  /** destroy ends the exchange abruptly (RST_STREAM / socket close): the response is incomplete */
  destroy(err?: Error): void;
}

/** downstreamFromHttp2 adapts a server stream (a tunnel stream, or HTTP/2 decrypted in the cluster). */
export function downstreamFromHttp2(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): Downstream {
  return new Http2Downstream(stream, headers);
}

/**
 * Http2Downstream is one exchange per tunnel stream, so it is a class: one object per request
 * with its methods on the prototype, where an object literal of getters and closures cost seven
 * allocations and a slow-to-build shape per request (docs/tunnel-performance.md §10).
 */
class Http2Downstream implements Downstream {
  readonly method: string;
  readonly authority: string;
  readonly target: string;
  readonly body: Readable;
  readonly hasBody: boolean;
  readonly out: Writable;

  constructor(
    private readonly stream: ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
  ) {
    this.method = firstValue(headers[':method']);
    this.authority = firstValue(headers[':authority'] ?? headers.host);
    this.target = firstValue(headers[':path']);
    this.body = stream;
    this.hasBody = !stream.endAfterHeaders;
    this.out = stream;
  }

  get headersSent(): boolean {
    return this.stream.headersSent;
  }

  get isClosed(): boolean {
    return this.stream.closed || this.stream.destroyed;
  }

  get isAborted(): boolean {
    // A server stream's writable side reads as finished once it is closed, even by a reset:
    // the RST_STREAM code is what tells a cancel from a complete exchange.
    const stream = this.stream;
    return stream.aborted || (stream.rstCode !== undefined && stream.rstCode !== h2constants.NGHTTP2_NO_ERROR);
  }

  respond(status: number, responseHeaders: HeaderMap, options: { endStream?: boolean; trailers?: () => HeaderMap | undefined } = {}): void {
    const { stream } = this;
    const { trailers } = options;
    if (trailers) {
      stream.once('wantTrailers', () => {
        // An empty trailer set makes Node send an empty DATA frame with END_STREAM instead.
        try {
          stream.sendTrailers(trailers() ?? {});
        } catch {
          stream.close();
        }
      });
    }
    const out: OutgoingHttpHeaders = responseHeaders;
    out[':status'] = status;
    stream.respond(out, { endStream: options.endStream === true, waitForTrailers: trailers !== undefined && options.endStream !== true });
  }

  onClose(callback: () => void): void {
    if (this.stream.closed) queueMicrotask(callback);
    else this.stream.on('close', callback); // 'close' fires once; `once` would wrap it per request
  }

  destroy(err?: Error): void {
    this.stream.destroy(err);
  }
}

/** downstreamFromHttp1 adapts an HTTP/1.1 request decrypted in the cluster or spliced from the edge (no trailers downstream). */
export function downstreamFromHttp1(req: IncomingMessage, res: ServerResponse): Downstream {
  return new Http1Downstream(req, res);
}

/**
 * Http1Downstream is one HTTP/1.1 request and its response: a class for the reason
 * Http2Downstream is one (an object literal of getters and closures, and a `once` listener per
 * request, were the largest item of tuna's own in the agent's heap profile of spliced
 * connections). Whether the response closed is Node's own `closed` flag, set as 'close' is emitted.
 */
class Http1Downstream implements Downstream {
  readonly method: string;
  readonly authority: string;
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Readable;
  readonly hasBody: boolean;
  readonly out: Writable;

  constructor(
    req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    const headers = req.headers;
    const lengthHeader = headers['content-length'];
    this.method = req.method ?? '';
    this.authority = headers.host ?? '';
    this.target = req.url ?? '';
    this.headers = headers;
    this.body = req;
    this.hasBody = headers['transfer-encoding'] !== undefined || (lengthHeader !== undefined && lengthHeader !== '0');
    this.out = res;
  }

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  get isClosed(): boolean {
    return this.res.closed || this.res.destroyed;
  }

  get isAborted(): boolean {
    const res = this.res;
    return (res.closed || res.destroyed) && !res.writableFinished;
  }

  respond(status: number, headers: HeaderMap, options: { endStream?: boolean; trailers?: () => HeaderMap | undefined } = {}): void {
    this.res.writeHead(status, headers);
    if (options.endStream) this.res.end();
  }

  onClose(callback: () => void): void {
    if (this.res.closed) queueMicrotask(callback);
    else this.res.on('close', callback); // 'close' fires once; `once` would wrap it per request
  }

  destroy(err?: Error): void {
    this.res.destroy(err);
  }
}

/** sendLocalResponse answers from the data plane itself (errors, redirects, direct responses). */
export function sendLocalResponse(ds: Downstream, status: number, body: string, headers: HeaderMap = {}): void {
  if (ds.isClosed) return;
  if (ds.headersSent) {
    ds.destroy();
    return;
  }
  const payload = Buffer.from(body);
  const all: HeaderMap = { ...headers };
  if (payload.length > 0 && all['content-type'] === undefined) all['content-type'] = 'text/plain; charset=utf-8';
  all['content-length'] = String(payload.length);
  const isBodyless = ds.method === 'HEAD' || status === 204 || status === 304;
  ds.respond(status, isBodyless ? withoutLength(all, status) : all, { endStream: isBodyless || payload.length === 0 });
  if (!isBodyless && payload.length > 0) ds.out.end(payload);
  // Whatever request body is still arriving is no longer wanted; reading it lets the stream close.
  if (!ds.body.readableEnded) ds.body.resume();
}

function withoutLength(headers: HeaderMap, status: number): HeaderMap {
  if (status !== 204) return headers;
  const { 'content-length': _ignored, ...rest } = headers;
  return rest;
}

function firstValue(v: string | string[] | undefined): string {
  return (Array.isArray(v) ? v[0] : v) ?? '';
}
