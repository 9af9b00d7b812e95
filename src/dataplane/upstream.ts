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

/** UpstreamClient sends requests to endpoints over one protocol, pooling connections. */
export interface UpstreamClient {
  /** send resolves with the response headers; rejects with BackendConnectError when none came */
  send(endpoint: Endpoint, request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamResponse>;
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
