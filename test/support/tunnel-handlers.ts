import { connect as connectTcp } from 'node:net';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { pipeline } from 'node:stream';
import { TLSSocket } from 'node:tls';
import type { TunnelStreamContext, TunnelStreamHandler } from '../../src/wire/stream-handler.js';

/** TestHandlerOptions configures the test stream handler. */
export interface TestHandlerOptions {
  /** a WebSocket server port on 127.0.0.1 that extended CONNECT streams are relayed to */
  webSocketPort?: number;
  /** certificate to terminate TLS CONNECT streams with (in-cluster termination) */
  tls?: { cert: string; key: string };
}

const ZEROS = Buffer.alloc(64 << 10);

/**
 * TestStreamHandler stands in for the data plane: a tiny app behind the tunnel.
 * - `/echo` streams the request body back; `/count` answers the body's length;
 * - `/events` sends one server-sent event, and a second after releaseEvents();
 * - `/bytes?n=N` streams N bytes; `/slow?ms=N` answers after N ms; `/trailers` sends trailers;
 * - anything else answers JSON describing the request and its TunnelStreamContext;
 * - CONNECT (tcp) echoes bytes; CONNECT for tls terminates TLS and echoes the plaintext;
 * - extended CONNECT (websocket) is relayed to a WebSocket server over an HTTP/1.1 upgrade.
 */
export class TestStreamHandler implements TunnelStreamHandler {
  /** seen records every context handled, in order. */
  readonly seen: TunnelStreamContext[] = [];
  readonly #options: TestHandlerOptions;
  #release: (() => void) | undefined;
  #released = new Promise<void>((resolve) => (this.#release = resolve));

  /** releaseEvents lets `/events` send its second event. */
  releaseEvents(): void {
    this.#release?.();
  }

  constructor(options: TestHandlerOptions = {}) {
    this.#options = options;
  }

  handleStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, context: TunnelStreamContext): void {
    this.seen.push(context);
    if (headers[':method'] === 'CONNECT') {
      if (headers[':protocol'] === 'websocket') return this.#relayWebSocket(stream, headers);
      stream.respond({ ':status': 200 });
      if (context.publicProtocol === 'tls' && this.#options.tls !== undefined) {
        const tls = new TLSSocket(stream, { isServer: true, ...this.#options.tls });
        tls.on('error', () => stream.destroy());
        tls.pipe(tls);
        return;
      }
      stream.pipe(stream);
      return;
    }
    const url = new URL(String(headers[':path']), 'http://x');
    switch (url.pathname) {
      case '/echo':
        stream.respond({ ':status': 200, 'content-type': 'application/octet-stream' });
        pipeline(stream, stream, () => {});
        return;
      case '/count': {
        let n = 0;
        stream.on('data', (chunk: Buffer) => (n += chunk.length));
        stream.on('end', () => {
          if (stream.destroyed) return;
          stream.respond({ ':status': 200, 'content-type': 'text/plain' });
          stream.end(String(n));
        });
        return;
      }
      case '/bytes':
        return sendBytes(stream, Number(url.searchParams.get('n') ?? 0));
      case '/slow':
        setTimeout(() => answerJson(stream, headers, context), Number(url.searchParams.get('ms') ?? 100));
        stream.resume();
        return;
      case '/events':
        // server-sent events: the second event waits for the test, so a relay that buffers
        // until the end of the response deadlocks instead of passing.
        stream.respond({ ':status': 200, 'content-type': 'text/event-stream' });
        stream.write('data: one\n\n');
        void this.#released.then(() => stream.end('data: two\n\n'));
        stream.resume();
        return;
      case '/trailers':
        stream.respond({ ':status': 200, 'content-type': 'text/plain' }, { waitForTrailers: true });
        stream.once('wantTrailers', () => stream.sendTrailers({ 'x-checksum': 'abc123' }));
        stream.end('body');
        stream.resume();
        return;
      default:
        stream.resume();
        answerJson(stream, headers, context);
    }
  }

  #relayWebSocket(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    const port = this.#options.webSocketPort;
    if (port === undefined) return void stream.respond({ ':status': 501 }, { endStream: true });
    const socket = connectTcp({ host: '127.0.0.1', port });
    socket.on('error', () => stream.destroy());
    socket.write(
      `GET ${String(headers[':path'])} HTTP/1.1\r\nHost: ${String(headers[':authority'])}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    );
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      socket.pause();
      const rest = head.subarray(end + 4);
      if (!head.subarray(0, 12).toString().includes('101')) return void stream.respond({ ':status': 502 }, { endStream: true });
      stream.respond({ ':status': 200 });
      if (rest.length > 0) stream.write(rest);
      pipeline(socket, stream, () => {});
      pipeline(stream, socket, () => {});
    };
    socket.on('data', onData);
  }
}

function answerJson(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, context: TunnelStreamContext): void {
  if (stream.destroyed) return;
  const plain: Record<string, unknown> = {};
  for (const name in headers) plain[name] = headers[name];
  const body = JSON.stringify({ headers: plain, context });
  stream.respond({ ':status': 200, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  stream.end(body);
}

function sendBytes(stream: ServerHttp2Stream, total: number): void {
  stream.respond({ ':status': 200, 'content-type': 'application/octet-stream', 'content-length': total });
  let left = total;
  const write = (): void => {
    while (left > 0) {
      const chunk = left >= ZEROS.length ? ZEROS : ZEROS.subarray(0, left);
      left -= chunk.length;
      if (!stream.write(chunk)) return void stream.once('drain', write);
    }
    stream.end();
  };
  write();
}
