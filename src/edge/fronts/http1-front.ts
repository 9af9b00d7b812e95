import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants as h2c } from 'node:http2';
import type { ClientHttp2Stream, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import { relay } from '../../wire/index.js';
import type { EdgeTunnel } from '../tunnels/index.js';
import type { LoggedExchange } from './access-log.js';
import { REPLY, findTunnel, forwardInfo, mayRetryElsewhere, openTunnelStream, retryFailedReply, replyHttp1, resolveHttpBinding, retryTunnel } from './front-context.js';
import type { ConnectionInfo, FrontContext } from './front-context.js';
import { http1HostProblem } from './host-header.js';
import { cancelUpstream } from './tunnel-cancels.js';
import { hostWithoutPort, http1RequestHeaders, http1ResponseHead } from './request-headers.js';

/**
 * forwardHttp1 relays one public HTTP/1.1 request over a tunnel stream: the request body is
 * piped into the stream, the response back with backpressure on both (stream.pipeline), trailers
 * are kept when the response is chunked.
 */
export async function forwardHttp1(ctx: FrontContext, info: ConnectionInfo, req: IncomingMessage, res: ServerResponse): Promise<void> {
  ctx.metrics.beginRequest(res);
  const logged = ctx.accessLog?.begin({ protocol: 'http1', client: info.clientAddress, host: req.headers.host ?? null, method: req.method ?? '', target: req.url ?? '' });
  if (logged !== undefined) {
    logged.countBodies(req, res);
    res.once('close', () => logged.end(res.headersSent ? res.statusCode : null, !res.writableFinished));
  }
  const hostProblem = http1HostProblem(req.rawHeaders);
  if (hostProblem !== undefined) return replyHttp1(ctx, res, hostProblem, true);
  const authority = req.headers.host ?? '';
  const host = hostWithoutPort(authority);
  const binding = resolveHttpBinding(ctx, info, host);
  if (binding === undefined) return replyHttp1(ctx, res, REPLY.unknownHost);
  if (logged !== undefined) logged.binding = binding.id;
  const target = req.url ?? '';
  // only origin-form (and OPTIONS *) can become an HTTP/2 :path (RFC 9112 §3.2, RFC 9113 §8.3.1).
  if (!(target.startsWith('/') || (target === '*' && req.method === 'OPTIONS'))) return replyHttp1(ctx, res, REPLY.badTarget, true);
  const declared = req.headers['content-length'];
  const limit = ctx.limits.maxRequestBodyBytes;
  if (limit !== undefined && declared !== undefined && Number(declared) > limit) return replyHttp1(ctx, res, REPLY.tooLarge, true);
  const release = ctx.fairness.acquire(binding.id, info.clientAddress);
  if (release === undefined) return replyHttp1(ctx, res, REPLY.clientBusy);
  res.once('close', release);
  const tunnel = await findTunnel(ctx, binding.id);
  // the client left while the request waited for a tunnel: its 'close' came before send() could
  // listen for it, so a stream opened now would never be cancelled (a body that never ends keeps
  // it open), and its request would reach a backend for nobody.
  if (res.destroyed) return;
  if (tunnel === undefined) return replyHttp1(ctx, res, REPLY.noTunnel);
  const isBodyless = (declared === undefined || declared === '0') && req.headers['transfer-encoding'] === undefined;
  const requestId = ctx.requestId();
  if (logged !== undefined) logged.requestId = requestId;
  const headers = http1RequestHeaders(
    req,
    forwardInfo(info, host, requestId),
    { ':method': req.method ?? 'GET', ':scheme': info.publicProtocol, ':authority': authority || host, ':path': target },
  );
  // the edge already answered `100 Continue` itself (Node's default), so the agent must not wait for one.
  delete headers.expect;
  send(ctx, tunnel, req, res, headers, isBodyless, binding.id, 0, logged);
}

function send(
  ctx: FrontContext,
  tunnel: EdgeTunnel,
  req: IncomingMessage,
  res: ServerResponse,
  headers: OutgoingHttpHeaders,
  isBodyless: boolean,
  bindingId: string,
  attempt: number,
  logged: LoggedExchange | undefined,
): void {
  if (logged !== undefined) logged.tunnel = tunnel.connectionId;
  const { upstream: stream, limiter } = openTunnelStream(ctx, tunnel, headers, isBodyless);
  let hasResponse = false;
  stream.once('response', (responseHeaders: IncomingHttpHeaders) => {
    hasResponse = true;
    relayResponse(ctx, tunnel, stream, res, responseHeaders);
  });
  stream.once('close', () => {
    ctx.metrics.streamsActive--;
    if (hasResponse || res.writableEnded) return;
    if (limiter?.isExceeded === true) return replyHttp1(ctx, res, REPLY.tooLarge, true);
    if (!mayRetryElsewhere(stream, tunnel, req.method ?? 'GET', isBodyless, attempt)) return replyHttp1(ctx, res, REPLY.tunnelFailed);
    void retryTunnel(ctx, bindingId, tunnel).then((next) => {
      if (res.destroyed) return;
      if (next === undefined) return replyHttp1(ctx, res, retryFailedReply(stream));
      send(ctx, next, req, res, headers, isBodyless, bindingId, 1, logged);
    });
  });
  res.once('close', () => {
    if (!res.writableFinished) cancelUpstream(tunnel, stream);
  });
  if (isBodyless) return;
  const onUploadDone = (err: Error | null | undefined): void => {
    if (err !== undefined && err !== null && !stream.closed) stream.close(h2c.NGHTTP2_CANCEL);
  };
  relay(limiter === undefined ? [req, stream] : [req, limiter, stream], onUploadDone);
}

function relayResponse(ctx: FrontContext, tunnel: EdgeTunnel, stream: ClientHttp2Stream, res: ServerResponse, headers: IncomingHttpHeaders): void {
  // the client may have left while this answer was queued (the 'response' event is emitted on a
  // later tick than its frame): nothing to relay to, so free the stream, body and all.
  if (res.destroyed) return cancelUpstream(tunnel, stream);
  const status = Number(headers[':status']);
  // while the edge drains, let keep-alive clients go after this response (RFC 9112 §9.6).
  if (ctx.isClosing()) res.shouldKeepAlive = false;
  try {
    res.writeHead(status, http1ResponseHead(headers));
  } catch {
    stream.close(h2c.NGHTTP2_PROTOCOL_ERROR);
    replyHttp1(ctx, res, REPLY.tunnelFailed);
    return;
  }
  ctx.metrics.countRequest(status, res, 'http1');
  stream.on('trailers', (trailers: IncomingHttpHeaders) => res.addTrailers(trailers));
  relay([stream, res], (err) => {
    if (err !== undefined && err !== null && !stream.closed) stream.close(h2c.NGHTTP2_CANCEL);
  });
}

