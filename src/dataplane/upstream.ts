import type { IncomingHttpHeaders } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import { writeCoalescer } from '../wire/index.js';
import type { Endpoint } from './endpoints.js';
import type { HeaderMap } from './headers.js';

/** UpstreamRequest is a request to one backend endpoint, hop-by-hop headers already removed. */
export interface UpstreamRequest {
  method: string;
  /** request target: path and query */
  path: string;
  /** Host / :authority to send */
  authority: string;
  headers: HeaderMap;
  /** body to stream, or undefined for none */
  body: Readable | undefined;
}

/** UpstreamResponse is a backend's answer; `body` streams with backpressure. */
export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
  /**
   * isComplete is true when the headers ended the response (HTTP/2 END_STREAM on HEADERS): a
   * gRPC "trailers-only" answer, whose status must reach the client the same way.
   */
  isComplete: boolean;
  /** mayHaveTrailers is true when trailers can follow the body (HTTP/2, or chunked with Trailer) */
  mayHaveTrailers: boolean;
  /** trailers returns the trailers once the body has ended */
  trailers(): HeaderMap | undefined;
}

/**
 * UpstreamReceiver hears how one upstream request went: exactly one of its methods is called,
 * once, and never from within `send` itself. A receiver is a plain object with methods (the
 * proxy's exchange is one), so a request costs no promise and no closures of the caller's.
 */
export interface UpstreamReceiver {
  /** onUpstreamResponse: the response headers arrived */
  onUpstreamResponse(response: UpstreamResponse): void;
  /** onUpstreamError: no response came; `err` is a BackendConnectError, the reason given to `cancel`, or the failure to send */
  onUpstreamError(err: unknown): void;
}

/**
 * UpstreamCall is the abort handle of one request in flight: the proxy's own, in place of an
 * AbortController and its AbortSignal per request (an EventTarget, its listener map and a
 * listener record; docs/tunnel-performance.md §10).
 */
export interface UpstreamCall {
  /**
   * cancel aborts the request with `reason`. Before the response headers the receiver hears
   * `onUpstreamError(reason)`; after them the request is destroyed, and its response body with
   * it (the body's consumer sees an error). Once the request has finished it does nothing.
   */
  cancel(reason: Error): void;
}

/** UpstreamClient sends requests to endpoints over one protocol, pooling connections. */
export interface UpstreamClient {
  /** send starts one request; `receiver` hears of its response headers or of its failure (a BackendConnectError when none came) */
  send(endpoint: Endpoint, request: UpstreamRequest, receiver: UpstreamReceiver): UpstreamCall;
  /** close releases pooled connections */
  close(): void;
}

/**
 * forwardBody streams a request body to an upstream request with backpressure. Unlike
 * `pipeline`, an upstream failure does not destroy the client's stream: the data plane still has
 * to answer it (502). A client abort does destroy the upstream request.
 */
export function forwardBody(body: Readable, upstream: Writable): void {
  // registered before pipe()'s own 'data' listener: corks the upstream socket before each turn's
  // first write, so a turn's 16 KiB tunnel frames reach the backend in one writev.
  body.on('data', writeCoalescer(upstream));
  body.pipe(upstream);
  body.on('error', (err) => upstream.destroy(err));
  body.once('close', () => {
    if (!body.readableEnded) upstream.destroy();
  });
  upstream.on('error', () => body.unpipe(upstream));
}
