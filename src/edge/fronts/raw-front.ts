import { constants as h2c } from 'node:http2';
import type { OutgoingHttpHeaders } from 'node:http2';
import type { Socket } from 'node:net';
import { relay, TCP_AUTHORITY_HOST, writeStreamMeta } from '../../wire/index.js';
import type { PublicProtocol } from '../../wire/index.js';
import { findTunnel } from './front-context.js';
import type { FrontContext } from './front-context.js';

/** RawTarget says where a raw public connection goes. */
export interface RawTarget {
  bindingId: string;
  publicProtocol: Extract<PublicProtocol, 'tcp' | 'tls'>;
  port: number;
  /** the SNI name for TLS routed by SNI */
  serverName?: string;
}

/**
 * forwardRaw relays a raw TCP or TLS connection over a CONNECT stream (RFC 9113 §8.5): the
 * `:authority` is `<sni>:<port>` for TLS and `tcp.invalid:<port>` for TCP. The client's bytes wait
 * (paused socket) until the agent answers 2xx; then both directions are piped with backpressure,
 * and a half-close on either side is passed on as END_STREAM / FIN.
 */
export async function forwardRaw(ctx: FrontContext, socket: Socket, target: RawTarget): Promise<void> {
  socket.on('error', noop);
  socket.pause();
  const logged = ctx.accessLog?.begin({ protocol: target.publicProtocol, client: socket.remoteAddress ?? '', host: target.serverName ?? null });
  if (logged !== undefined) {
    logged.binding = target.bindingId;
    logged.countSocket(socket);
    socket.once('close', (hadError: boolean) => logged.end(null, hadError));
  }
  const tunnel = await findTunnel(ctx, target.bindingId);
  if (tunnel === undefined || socket.destroyed) {
    socket.destroy();
    return;
  }
  if (logged !== undefined) logged.tunnel = tunnel.connectionId;
  const headers: OutgoingHttpHeaders = {
    ':method': 'CONNECT',
    ':authority': `${target.serverName ?? TCP_AUTHORITY_HOST}:${target.port}`,
  };
  const requestId = ctx.requestId();
  if (logged !== undefined) logged.requestId = requestId;
  writeStreamMeta(headers, {
    publicPort: target.port,
    publicProtocol: target.publicProtocol,
    clientAddress: socket.remoteAddress ?? '',
    requestId,
  });
  const stream = tunnel.request(headers);
  ctx.metrics.streamsTotal++;
  ctx.metrics.streamsActive++;
  stream.on('error', noop);
  stream.once('close', () => {
    ctx.metrics.streamsActive--;
    // a reset (not a clean END_STREAM) means the far side aborted: abort the client too.
    if (stream.rstCode !== h2c.NGHTTP2_NO_ERROR) socket.destroy();
    else if (!socket.writableEnded) socket.end();
  });
  socket.once('close', () => {
    if (!stream.closed) stream.close(h2c.NGHTTP2_CANCEL);
  });
  stream.once('response', (response) => {
    const status = Number(response[':status']);
    if (status < 200 || status > 299) {
      socket.destroy();
      stream.close(h2c.NGHTTP2_CANCEL);
      return;
    }
    relay([socket, stream], noop);
    relay([stream, socket], noop);
  });
}

/**
 * watchRawTimeouts closes a raw relay (TCP, or TLS routed by SNI) on which no byte moved either
 * way `firstByteMs` after accept (a server-first protocol's banner counts: SMTP and MySQL clients
 * send nothing first), or none for `idleMs` later on (Envoy's tcp_proxy idle_timeout); `count`
 * records which. The idle deadline is the socket's own timeout: reads and writes both reset it.
 */
export function watchRawTimeouts(socket: Socket, firstByteMs: number | undefined, idleMs: number, count: (phase: 'first-byte' | 'idle') => void): void {
  const expire = (phase: 'first-byte' | 'idle'): void => {
    if (socket.destroyed) return;
    count(phase);
    socket.destroy();
  };
  if (firstByteMs !== undefined) {
    const timer = setTimeout(() => {
      if (socket.bytesRead + socket.bytesWritten === 0) expire('first-byte');
    }, firstByteMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  }
  socket.setTimeout(idleMs);
  socket.on('timeout', () => expire('idle'));
}

function noop(): void {}
