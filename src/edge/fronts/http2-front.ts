import { constants as h2c } from 'node:http2';
import type { ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { relay } from '../../wire/index.js';
import type { EdgeTunnel } from '../tunnels/index.js';
import type { LoggedExchange } from './access-log.js';
import { REPLY, findTunnel, forwardInfo, mayRetryElsewhere, openTunnelStream, retryFailedReply, replyHttp2, resolveHttpBinding, retryTunnel } from './front-context.js';
import type { ConnectionInfo, FrontContext } from './front-context.js';
import { http2HostProblem } from './host-header.js';
import { cancelUpstream } from './tunnel-cancels.js';
import { hostWithoutPort, http2RequestHeaders, http2ResponseHeaders } from './request-headers.js';

/** headerListSize computes the RFC 9113 §6.5.2 size of a header list (name + value + 32 per field). */
function headerListSize(headers: IncomingHttpHeaders): number {
  let size = 0;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    for (const v of [value].flat()) size += name.length + v.length + 32;
  }
  return size;
}

/**
 * forwardHttp2 relays one public HTTP/2 stream (including extended CONNECT from HTTP/2 WebSocket
 * clients) over a tunnel stream, with trailers in both the gRPC direction and back.
 */
export async function forwardHttp2(ctx: FrontContext, info: ConnectionInfo, stream: ServerHttp2Stream, headers: IncomingHttpHeaders): Promise<void> {
  ctx.metrics.beginRequest(stream);
  stream.on('error', noop);
  const logged = ctx.accessLog?.begin({ protocol: 'http2', client: info.clientAddress, host: headers[':authority'] ?? headers.host ?? null, method: headers[':method'] ?? '', target: headers[':path'] ?? '' });
  if (logged !== undefined) {
    logged.countBodies(stream, stream);
    stream.once('close', () => logged.end(stream.headersSent ? Number(stream.sentHeaders[':status']) : null, !stream.writableFinished));
  }
  const hostProblem = http2HostProblem(headers);
  if (hostProblem !== undefined) return replyHttp2(ctx, stream, hostProblem);
  const authority = headers[':authority'] ?? headers.host ?? '';
  const host = hostWithoutPort(authority);
  if (headerListSize(headers) > ctx.limits.maxHeaderBytes) return replyHttp2(ctx, stream, REPLY.headersTooLarge);
  // Plain CONNECT would ask the edge to be a TCP proxy into the binding; only extended CONNECT
  // (a WebSocket, RFC 8441) is relayed. Raw TCP reaches a binding through its own port only.
  if (headers[':method'] === 'CONNECT' && headers[':protocol'] === undefined) return replyHttp2(ctx, stream, REPLY.connectNotAllowed);
  const binding = resolveHttpBinding(ctx, info, host);
  if (binding === undefined) return replyHttp2(ctx, stream, REPLY.unknownHost);
  if (logged !== undefined) logged.binding = binding.id;
  const declared = headers['content-length'];
  const limit = ctx.limits.maxRequestBodyBytes;
  if (limit !== undefined && declared !== undefined && Number(declared) > limit) return replyHttp2(ctx, stream, REPLY.tooLarge);
  const release = ctx.fairness.acquire(binding.id, info.clientAddress);
  if (release === undefined) return replyHttp2(ctx, stream, REPLY.clientBusy);
  if (stream.destroyed) return release();
  stream.once('close', release);
  const tunnel = await findTunnel(ctx, binding.id);
  // A client that reset the stream meanwhile (HEADERS then RST_STREAM, CVE-2023-44487) gets no
  // tunnel stream: opening and cancelling one per reset would pass the flood on to the agent.
  if (stream.destroyed || stream.closed) return;
  if (tunnel === undefined) return replyHttp2(ctx, stream, REPLY.noTunnel);
  const requestId = ctx.requestId();
  if (logged !== undefined) logged.requestId = requestId;
  const out = http2RequestHeaders(headers, forwardInfo(info, host, requestId));
  send(ctx, tunnel, stream, out, stream.endAfterHeaders, binding.id, 0, logged);
}

function send(
  ctx: FrontContext,
  tunnel: EdgeTunnel,
  stream: ServerHttp2Stream,
  headers: OutgoingHttpHeaders,
  isBodyless: boolean,
  bindingId: string,
  attempt: number,
  logged: LoggedExchange | undefined,
): void {
  if (logged !== undefined) logged.tunnel = tunnel.connectionId;
  const { upstream, limiter } = openTunnelStream(ctx, tunnel, headers, isBodyless);
  let hasResponse = false;
  upstream.once('response', (responseHeaders: IncomingHttpHeaders, flags: number) => {
    hasResponse = true;
    relayResponse(ctx, tunnel, upstream, stream, responseHeaders, (flags & h2c.NGHTTP2_FLAG_END_STREAM) !== 0);
  });
  upstream.once('close', () => {
    ctx.metrics.streamsActive--;
    if (hasResponse) return;
    if (limiter?.isExceeded === true) return replyHttp2(ctx, stream, REPLY.tooLarge);
    if (!mayRetryElsewhere(upstream, tunnel, String(headers[':method']), isBodyless, attempt)) return replyHttp2(ctx, stream, REPLY.tunnelFailed);
    void retryTunnel(ctx, bindingId, tunnel).then((next) => {
      if (stream.destroyed || stream.closed) return;
      if (next === undefined) return replyHttp2(ctx, stream, retryFailedReply(upstream));
      send(ctx, next, stream, headers, isBodyless, bindingId, 1, logged);
    });
  });
  stream.once('close', () => cancelUpstream(tunnel, upstream));
  if (isBodyless) return;
  const onUploadDone = (err: Error | null | undefined): void => {
    if (err !== undefined && err !== null && !upstream.closed) upstream.close(h2c.NGHTTP2_CANCEL);
  };
  if (limiter === undefined) {
    relay([stream, upstream], onUploadDone);
    return;
  }
  // Not pipeline(): its error handling would reset the public stream, and the client is owed a
  // 413 (sent by the 'close' handler above). The rest of the body is read and dropped.
  stream.pipe(limiter).pipe(upstream);
  limiter.once('error', () => {
    stream.unpipe(limiter);
    stream.resume();
    if (!upstream.closed) upstream.close(h2c.NGHTTP2_CANCEL);
  });
  stream.once('aborted', () => {
    if (!upstream.closed) upstream.close(h2c.NGHTTP2_CANCEL);
  });
}

function relayResponse(
  ctx: FrontContext,
  tunnel: EdgeTunnel,
  upstream: ClientHttp2Stream,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  isEnded: boolean,
): void {
  // the client left while this answer was queued: free the tunnel stream, body and all.
  if (stream.destroyed) return cancelUpstream(tunnel, upstream);
  const status = Number(headers[':status']);
  ctx.metrics.countRequest(status, stream, 'http2');
  if (isEnded) {
    stream.respond(http2ResponseHeaders(headers), { endStream: true });
    return;
  }
  let trailers: IncomingHttpHeaders | undefined;
  upstream.once('trailers', (t: IncomingHttpHeaders) => (trailers = t));
  // wait for trailers so gRPC status (grpc-status in trailers) reaches the client.
  stream.respond(http2ResponseHeaders(headers), { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers(trailers === undefined ? {} : http2ResponseHeaders(trailers)));
  relay([upstream, stream], (err) => {
    if (err !== undefined && err !== null) cancelUpstream(tunnel, upstream);
  });
}

function noop(): void {}
