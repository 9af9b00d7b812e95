import http from 'node:http';
import { upgradeRequest } from './backend-tls.js';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { HttpRoute } from '../model/index.js';
import { chooseEndpoint } from './backend-choice.js';
import { hopByHopHeaders } from './headers.js';
import type { HeaderMap } from './headers.js';
import type { ProxyDeps } from './http-proxy.js';
import { planForBackend } from './request-plan.js';
import type { ForwardPlan, LocalAnswer } from './request-plan.js';

/**
 * proxyHttp1Upgrade bridges an HTTP/1.1 WebSocket Upgrade that arrived inside TLS terminated in
 * the cluster to the backend's own HTTP/1.1 Upgrade (RFC 6455 §4.1). Both ends speak HTTP/1.1, so
 * the client's Sec-WebSocket-Key goes through and the backend's 101 (with its Accept) comes back
 * unchanged; after it, bytes are copied both ways.
 */
export function proxyHttp1Upgrade(deps: ProxyDeps, route: HttpRoute, plan: ForwardPlan, req: IncomingMessage, client: Duplex, head: Buffer): void {
  client.on('error', () => undefined);
  const choice = chooseEndpoint(deps, route.backends);
  if (choice.kind === 'local') return writeLocal(client, { kind: 'local', status: choice.status, body: choice.body, headers: {} });
  const headers: HeaderMap = {
    ...planForBackend(plan, choice.backend).headers,
    host: plan.authority,
    connection: 'Upgrade',
    upgrade: String(req.headers.upgrade ?? 'websocket'),
  };
  const upstream = upgradeRequest({ host: choice.endpoint.address, port: choice.endpoint.port, method: req.method, path: plan.target, headers, setHost: false }, choice.backend, deps.tls);
  client.once('close', () => upstream.destroy());
  upstream.once('upgrade', (res, socket: Socket, upstreamHead: Buffer) => {
    socket.on('error', () => client.destroy());
    client.write(responseHead(101, res.statusMessage, res.rawHeaders, false));
    if (upstreamHead.length > 0) client.write(upstreamHead);
    if (head.length > 0) socket.write(head);
    socket.pipe(client);
    client.pipe(socket);
    client.once('close', () => socket.destroy());
    socket.once('close', () => client.destroy());
  });
  upstream.once('response', (res) => {
    client.write(responseHead(res.statusCode ?? 502, res.statusMessage, res.rawHeaders, true));
    res.pipe(client);
  });
  upstream.on('error', () => writeLocal(client, { kind: 'local', status: 502, body: `backend ${choice.endpoint.address}:${choice.endpoint.port} failed\n`, headers: {} }));
  upstream.end();
}

/** writeLocal answers on the raw socket and closes it (the connection was to be upgraded). */
export function writeLocal(client: Duplex, answer: LocalAnswer): void {
  if (client.destroyed) return;
  const body = Buffer.from(answer.body);
  const lines = [`HTTP/1.1 ${answer.status} ${http.STATUS_CODES[answer.status] ?? ''}`, 'connection: close', `content-length: ${body.length}`];
  if (body.length > 0) lines.push('content-type: text/plain; charset=utf-8');
  for (const [name, value] of Object.entries(answer.headers)) for (const v of [value].flat()) lines.push(`${name}: ${v}`);
  client.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]));
}

/**
 * responseHead renders a status line and headers. For 101 the Connection/Upgrade pair is the
 * point of the answer and is kept; otherwise hop-by-hop headers are dropped and the connection
 * closes after the body (RFC 9112 §9.6), so no length framing has to be re-derived.
 */
function responseHead(status: number, message: string | undefined, raw: string[], isFinal: boolean): string {
  const lines = [`HTTP/1.1 ${status} ${message ?? http.STATUS_CODES[status] ?? ''}`];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (isFinal && (hopByHopHeaders.has(name.toLowerCase()) || name.toLowerCase() === 'content-length')) continue;
    lines.push(`${name}: ${raw[i + 1]!}`);
  }
  if (isFinal) lines.push('connection: close');
  return `${lines.join('\r\n')}\r\n\r\n`;
}
