import http2 from 'node:http2';
import type { ServerHttp2Stream } from 'node:http2';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Backend } from '../model/index.js';
import { chooseEndpoint } from './backend-choice.js';
import type { ProxyDeps } from './http-proxy.js';
import { bridge } from './websocket-proxy.js';

/**
 * proxyTcp connects a CONNECT stream of raw bytes (a TCP port, or TLS passed through) to a
 * backend endpoint. The stream is answered 200 only once the backend accepted the connection,
 * so the client sees a refused backend as 502 rather than as an open-then-closed socket
 * (RFC 9113 §8.5).
 */
export function proxyTcp(deps: ProxyDeps, stream: ServerHttp2Stream, backends: readonly Backend[]): void {
  const choice = chooseEndpoint(deps, backends);
  if (choice.kind === 'local') return refuse(stream, choice.status === 500 ? 503 : choice.status);
  const { endpoint } = choice;
  const socket = net.connect({ host: endpoint.address, port: endpoint.port });
  const onEarlyClose = (): void => {
    socket.destroy();
  };
  stream.once('close', onEarlyClose);
  socket.once('connect', () => {
    stream.off('close', onEarlyClose);
    if (stream.destroyed || stream.closed) return socket.destroy();
    stream.respond({ ':status': 200 });
    bridge(stream, socket);
  });
  socket.on('error', () => {
    if (!stream.headersSent) refuse(stream, 502);
  });
}

function refuse(stream: ServerHttp2Stream, status: number): void {
  if (stream.destroyed || stream.closed) return;
  if (stream.headersSent) {
    stream.close(http2.constants.NGHTTP2_CONNECT_ERROR);
    return;
  }
  stream.respond({ ':status': status }, { endStream: true });
}

/**
 * proxyDecrypted forwards the plaintext of TLS terminated in the cluster to a backend (Gateway
 * API TLSRoute on a listener in Terminate mode): bytes both ways, half-closes passed on, an error
 * on either side closes both.
 */
export function proxyDecrypted(deps: ProxyDeps, decrypted: Duplex, backends: readonly Backend[]): void {
  decrypted.on('error', () => undefined);
  const choice = chooseEndpoint(deps, backends);
  if (choice.kind === 'local') return void decrypted.destroy();
  const socket = net.connect({ host: choice.endpoint.address, port: choice.endpoint.port });
  socket.on('error', () => decrypted.destroy());
  socket.once('connect', () => {
    socket.setNoDelay(true);
    decrypted.pipe(socket);
    socket.pipe(decrypted);
  });
  socket.once('close', () => decrypted.destroy());
  decrypted.once('close', () => socket.destroy());
}
