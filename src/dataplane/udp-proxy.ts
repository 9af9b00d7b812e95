import dgram from 'node:dgram';
import http2 from 'node:http2';
import type { ServerHttp2Stream } from 'node:http2';
import { isIPv6 } from 'node:net';
import type { Backend } from '../model/index.js';
import { DatagramReader, MAX_DATAGRAM_BYTES, frameDatagram } from '../wire/index.js';
import { chooseEndpoint } from './backend-choice.js';
import type { ProxyDeps } from './http-proxy.js';

/**
 * The agent's end of one UDP flow (docs/protocol.md §4.6): a CONNECT stream of length-prefixed
 * datagrams from the edge, relayed through a connected `dgram` socket to one backend endpoint.
 * Entry point for any stream route whose listener speaks `udp` (the CLI's `tuna udp` now; a
 * Gateway UDPRoute or a LoadBalancer Service's UDP port reach it the same way through routeDatagram).
 */

/** DEFAULT_UDP_IDLE_TIMEOUT_MS ends a flow with no datagram either way for this long (the edge's default too). */
export const DEFAULT_UDP_IDLE_TIMEOUT_MS = 60_000;

/**
 * MAX_QUEUED_FLOW_BYTES bounds what one flow's stream may hold unsent towards the edge (its HTTP/2
 * window is full): past it a backend's datagram is dropped, as a full network queue drops one,
 * instead of buffered without bound.
 */
export const MAX_QUEUED_FLOW_BYTES = 256 << 10;

/**
 * UdpDatagramDrop is why a datagram of a flow was lost at the agent: a backend's datagram dropped
 * instead of framed onto the stream (`too-large`, `queue-full`), or one sent to the backend that
 * the backend's host refused (`backend-unreachable`: an ICMP port or host unreachable, reported on
 * the connected socket's next operation).
 */
export type UdpDatagramDrop = 'too-large' | 'queue-full' | 'backend-unreachable';

/**
 * UdpFlowRefusal is why the agent refused a flow (its stream answered non-2xx, so the edge drops
 * the datagrams it held for it): `udp-off` (UDP switched off, or not a plain CONNECT: 400),
 * `no-route` (the binding has no route on a `udp` listener of that port: 404), `no-endpoint` (no
 * backend with weight, an unavailable one, or no ready endpoint: its status), `backend-error`
 * (the socket towards the endpoint failed before it connected: 502).
 */
export type UdpFlowRefusal = 'udp-off' | 'no-route' | 'no-endpoint' | 'backend-error';

/** UdpObserver hears what the agent's UDP flows lose (the operator counts it in /metrics). */
export interface UdpObserver {
  /** dropped is called for each datagram dropped, with why */
  dropped(reason: UdpDatagramDrop): void;
  /** refused is called for each flow refused, with why */
  refused(reason: UdpFlowRefusal): void;
}

/** UdpFlowOptions tune one flow. */
export interface UdpFlowOptions {
  idleTimeoutMs: number;
  /** told of each datagram dropped and of the flow's refusal */
  observer?: UdpObserver;
  /** the open flows' enders: the data plane ends them when the agent stops (a flow never ends by itself but idle) */
  open?: Set<() => void>;
}

/**
 * proxyUdp relays one flow: the stream is answered 200 once the socket is connected to the chosen
 * endpoint (a route without a ready endpoint gets its status, as a TCP stream does); then each
 * datagram read from the stream is sent to the backend and each one the backend sends back is
 * framed onto the stream. A malformed length resets this stream alone (PROTOCOL_ERROR); an idle
 * flow ends with END_STREAM; the socket closes when the stream does.
 */
export function proxyUdp(deps: ProxyDeps, stream: ServerHttp2Stream, backends: readonly Backend[], options: UdpFlowOptions): void {
  const choice = chooseEndpoint(deps, backends);
  if (choice.kind === 'local') {
    options.observer?.refused('no-endpoint');
    return refuse(stream, choice.status === 500 ? 503 : choice.status);
  }
  const { address, port } = choice.endpoint;
  const socket = dgram.createSocket({ type: isIPv6(address) ? 'udp6' : 'udp4' });
  let isConnected = false;
  let isClosed = false;
  // END_STREAM: the edge forgets the flow; a later datagram of the client opens a new one
  const end = (): void => {
    if (!stream.destroyed && !stream.writableEnded) stream.end();
    close();
  };
  const idle = setTimeout(end, options.idleTimeoutMs);
  idle.unref();
  const close = (): void => {
    if (isClosed) return;
    isClosed = true;
    clearTimeout(idle);
    options.open?.delete(end);
    socket.close();
  };
  options.open?.add(end);
  // A connected UDP socket reports an ICMP port unreachable as ECONNREFUSED on a later send:
  // UDP promises no delivery, so the flow carries on (the backend may come back).
  socket.on('error', () => {
    if (isConnected) return options.observer?.dropped('backend-unreachable');
    options.observer?.refused('backend-error');
    refuse(stream, 502);
    close();
  });
  stream.once('close', close);
  socket.connect(port, address, () => {
    isConnected = true;
    if (stream.destroyed || stream.closed) return close();
    stream.respond({ ':status': 200 });
    relayFlow(stream, socket, options, () => idle.refresh(), close, () => isClosed);
  });
}

/** relayFlow moves datagrams both ways once the flow is open; `touch` restarts the idle deadline. */
function relayFlow(stream: ServerHttp2Stream, socket: dgram.Socket, options: UdpFlowOptions, touch: () => void, close: () => void, isClosed: () => boolean): void {
  const reader = new DatagramReader();
  const send = (d: Buffer): void => {
    // a closed socket throws on send (ERR_SOCKET_DGRAM_NOT_RUNNING): DATA may still arrive after the idle end
    if (isClosed()) return;
    touch();
    socket.send(d);
  };
  stream.on('data', (chunk: Buffer) => {
    try {
      reader.push(chunk, send);
    } catch {
      // the rest of the stream cannot be framed: end this flow only (the tunnel carries on)
      stream.close(http2.constants.NGHTTP2_PROTOCOL_ERROR);
      close();
    }
  });
  stream.once('end', () => {
    if (!stream.writableEnded) stream.end();
    close();
  });
  socket.on('message', (msg: Buffer) => {
    touch();
    // IPv6 allows payloads up to 65,527 bytes: above the framing's limit, dropped here
    if (msg.length > MAX_DATAGRAM_BYTES) return options.observer?.dropped('too-large');
    if (stream.writableLength > MAX_QUEUED_FLOW_BYTES) return options.observer?.dropped('queue-full');
    if (!stream.destroyed && !stream.writableEnded) stream.write(frameDatagram(msg));
  });
}

function refuse(stream: ServerHttp2Stream, status: number): void {
  if (stream.destroyed || stream.closed) return;
  if (stream.headersSent) return void stream.close(http2.constants.NGHTTP2_CONNECT_ERROR);
  stream.respond({ ':status': status }, { endStream: true });
}
