import { createHash, randomBytes } from 'node:crypto';
import { upgradeRequest } from './backend-tls.js';
import http2 from 'node:http2';
import type { ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import { relay } from '../wire/index.js';
import type { HttpRoute } from '../model/index.js';
import { chooseEndpoint } from './backend-choice.js';
import type { Downstream } from './exchange.js';
import { sendLocalResponse } from './exchange.js';
import { planForBackend, planResponseHeaders } from './request-plan.js';
import type { ForwardPlan } from './request-plan.js';
import type { ProxyDeps } from './http-proxy.js';

/** RFC 6455 §1.3: the GUID concatenated to the key to prove the server read the handshake. */
const websocketGuid = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/**
 * proxyWebSocket bridges a WebSocket that arrived as an extended CONNECT stream (RFC 8441 §4:
 * `:protocol: websocket`, answered with 200) to a backend that speaks the HTTP/1.1 Upgrade
 * handshake (RFC 6455 §4.1, answered with 101). After the handshake both sides carry raw
 * WebSocket frames, which are copied unchanged with backpressure. A backend that refuses the
 * upgrade has its answer forwarded as it is.
 */
export function proxyWebSocket(deps: ProxyDeps, route: HttpRoute, ds: Downstream, stream: ServerHttp2Stream, routePlan: ForwardPlan): void {
  const choice = chooseEndpoint(deps, route.backends);
  if (choice.kind === 'local') return sendLocalResponse(ds, choice.status, choice.body);
  const { endpoint } = choice;
  const plan = planForBackend(routePlan, choice.backend);
  const wsKey = randomBytes(16).toString('base64');
  const headers = {
    ...plan.headers,
    host: plan.authority,
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-key': wsKey,
    'sec-websocket-version': String(plan.headers['sec-websocket-version'] ?? '13'),
  };
  // A fresh socket, not the keep-alive pool: after 101 the socket belongs to the WebSocket.
  const req = upgradeRequest({ host: endpoint.address, port: endpoint.port, method: 'GET', path: plan.target, headers, setHost: false }, choice.backend, deps.tls);
  ds.onClose(() => req.destroy());
  req.once('upgrade', (res, socket: Socket, head: Buffer) => {
    const expected = createHash('sha1').update(wsKey + websocketGuid).digest('base64');
    if (res.headers['sec-websocket-accept'] !== expected) {
      socket.destroy();
      return sendLocalResponse(ds, 502, 'backend answered the WebSocket handshake wrongly\n');
    }
    if (ds.isClosed) return socket.destroy();
    const answer = planResponseHeaders(plan, res.headers);
    delete answer['sec-websocket-accept'];
    ds.respond(200, answer);
    if (head.length > 0) stream.write(head);
    bridge(stream, socket);
  });
  req.once('response', (res) => {
    if (ds.isClosed) return res.destroy();
    ds.respond(res.statusCode ?? 502, planResponseHeaders(plan, res.headers));
    relay([res, ds.out], () => undefined);
  });
  req.on('error', (err) => sendLocalResponse(ds, 502, `backend ${endpoint.address}:${endpoint.port} failed: ${(err as NodeJS.ErrnoException).code ?? err.message}\n`));
  req.end();
}

/**
 * bridge copies bytes both ways between a tunnel stream and a socket. Half-closes propagate
 * (END_STREAM ↔ FIN); a reset on either side destroys the other (RFC 9113 §8.5: a TCP error on
 * a CONNECT stream is signalled with RST_STREAM CONNECT_ERROR).
 */
export function bridge(stream: ServerHttp2Stream, socket: Socket): void {
  socket.setNoDelay(true);
  stream.pipe(socket);
  socket.pipe(stream);
  socket.on('error', () => {
    if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CONNECT_ERROR);
  });
  socket.once('close', () => {
    if (!stream.destroyed && !stream.writableEnded) stream.close(http2.constants.NGHTTP2_CONNECT_ERROR);
  });
  stream.once('close', () => {
    if (!socket.destroyed) socket.destroy();
  });
  stream.on('error', () => socket.destroy());
}
