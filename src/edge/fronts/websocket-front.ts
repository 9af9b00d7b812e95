import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { constants as h2c } from 'node:http2';
import type { IncomingHttpHeaders } from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { relay } from '../../wire/index.js';
import { REPLY, countReply, findTunnel, forwardInfo, resolveHttpBinding } from './front-context.js';
import type { ConnectionInfo, FrontContext } from './front-context.js';
import type { LoggedExchange } from './access-log.js';
import { hostWithoutPort, http1RequestHeaders, http1ResponseHead } from './request-headers.js';

// RFC 6455 §1.3: the GUID the server appends to Sec-WebSocket-Key.
const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function writeSimpleResponse(ctx: FrontContext, socket: Duplex, reply: readonly [number, string], logged: LoggedExchange | undefined): void {
  countReply(ctx, reply, socket, 'websocket');
  if (logged !== undefined) logged.status = reply[0];
  socket.end(
    `HTTP/1.1 ${reply[0]} ${reply[0] === 404 ? 'Not Found' : 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(reply[1])}\r\nConnection: close\r\n\r\n${reply[1]}`,
  );
}

/**
 * forwardWebSocket turns a public HTTP/1.1 WebSocket upgrade into an extended CONNECT stream
 * (RFC 8441 §5): `:protocol: websocket`, the same path and authority, no Sec-WebSocket-Key. When
 * the agent answers 200 the edge completes the HTTP/1.1 handshake itself (computing
 * Sec-WebSocket-Accept from the client's key) and then relays frames as opaque bytes.
 */
export async function forwardWebSocket(ctx: FrontContext, info: ConnectionInfo, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  ctx.metrics.beginRequest(socket);
  socket.on('error', noop);
  const logged = ctx.accessLog?.begin({ protocol: 'websocket', client: info.clientAddress, host: req.headers.host ?? null, method: req.method ?? '', target: req.url ?? '' });
  if (logged !== undefined) {
    logged.countSocket(req.socket);
    req.socket.once('close', (hadError: boolean) => logged.end(logged.status, hadError));
  }
  // a WebSocket may be quiet for long stretches; the HTTP idle timeout no longer applies.
  (socket as Partial<Socket>).setTimeout?.(0);
  const key = req.headers['sec-websocket-key'];
  if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket' || typeof key !== 'string' || req.method !== 'GET') {
    return writeSimpleResponse(ctx, socket, REPLY.notImplemented, logged);
  }
  const authority = req.headers.host ?? '';
  const host = hostWithoutPort(authority);
  const binding = resolveHttpBinding(ctx, info, host);
  if (binding === undefined) return writeSimpleResponse(ctx, socket, REPLY.unknownHost, logged);
  if (logged !== undefined) logged.binding = binding.id;
  const tunnel = await findTunnel(ctx, binding.id);
  if (tunnel === undefined || socket.destroyed) return writeSimpleResponse(ctx, socket, REPLY.noTunnel, logged);
  const requestId = ctx.requestId();
  if (logged !== undefined) {
    logged.requestId = requestId;
    logged.tunnel = tunnel.connectionId;
  }
  const headers = http1RequestHeaders(
    req,
    forwardInfo(info, host, requestId),
    { ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': info.publicProtocol, ':authority': authority || host, ':path': req.url ?? '/' },
  );
  delete headers['sec-websocket-key'];
  const stream = tunnel.request(headers);
  ctx.metrics.streamsTotal++;
  ctx.metrics.streamsActive++;
  stream.on('error', noop);
  let hasResponse = false;
  stream.once('close', () => {
    ctx.metrics.streamsActive--;
    if (!hasResponse) writeSimpleResponse(ctx, socket, REPLY.tunnelFailed, logged);
    else socket.destroy();
  });
  socket.once('close', () => {
    if (!stream.closed) stream.close(h2c.NGHTTP2_CANCEL);
  });
  stream.once('response', (response: IncomingHttpHeaders) => {
    hasResponse = true;
    const status = Number(response[':status']);
    ctx.metrics.countRequest(status === 200 ? 101 : status, socket, 'websocket');
    if (logged !== undefined) logged.status = status === 200 ? 101 : status;
    const raw = http1ResponseHead(response);
    let text = '';
    for (let i = 0; i < raw.length; i += 2) text += `${raw[i]}: ${raw[i + 1]}\r\n`;
    if (status < 200 || status > 299) {
      // the service refused the upgrade: pass its answer on as a plain response, then close.
      socket.write(`HTTP/1.1 ${status} Upgrade Refused\r\n${text}Connection: close\r\n\r\n`);
      relay([stream, socket], noop);
      return;
    }
    const accept = createHash('sha1').update(key + WEBSOCKET_GUID).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n${text}\r\n`);
    if (head.length > 0) stream.write(head);
    relay([socket, stream], noop);
    relay([stream, socket], noop);
  });
}

function noop(): void {}
