import http from 'node:http';
import http2 from 'node:http2';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { Listener, SecretRef } from '../model/index.js';
import { matchesWildcard } from './host.js';
import type { SecureContextCache } from './certificates.js';

/**
 * DecryptedHandlers receive what is inside a terminated TLS stream; `sni` is the server name the
 * client sent in its ClientHello (undefined without one).
 */
export interface DecryptedHandlers {
  /** when set, the decrypted bytes are not HTTP: the socket goes here as it is (TLSRoute Terminate) */
  onDecryptedSocket?(socket: tls.TLSSocket): void;
  onHttp2Stream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, sni: string | undefined): void;
  onHttp1Request(req: IncomingMessage, res: ServerResponse, sni: string | undefined): void;
  /** an HTTP/1.1 Upgrade (WebSocket) */
  onHttp1Upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, sni: string | undefined): void;
}

/** TlsTerminatorOptions bound a terminated connection. */
export interface TlsTerminatorOptions {
  handshakeTimeoutMs: number;
  http2Settings: http2.Settings;
}

/**
 * terminateTls serves `terminate-in-cluster` listeners: the edge forwarded the client's raw TLS
 * bytes by SNI on a CONNECT stream, and the key stays here. A server-side TLSSocket runs over the
 * stream with the certificate the listener names for that SNI; ALPN picks HTTP/2 or HTTP/1.1,
 * and the decrypted requests go to the same router as tunnel requests.
 */
export function terminateTls(
  stream: ServerHttp2Stream,
  listeners: readonly Listener[],
  contexts: SecureContextCache,
  handlers: DecryptedHandlers,
  options: TlsTerminatorOptions,
): void {
  const defaultContext = contexts.select(certificatesFor(listeners, undefined), undefined);
  if (!defaultContext) {
    stream.respond({ ':status': 503 }, { endStream: true });
    return;
  }
  stream.respond({ ':status': 200 });
  const socket = new tls.TLSSocket(stream as unknown as Socket, {
    isServer: true,
    secureContext: defaultContext,
    // Raw forwarding (TLSRoute Terminate) offers no ALPN: the bytes inside are the backend's protocol.
    ...(handlers.onDecryptedSocket ? {} : { ALPNProtocols: ['h2', 'http/1.1'] }),
    SNICallback: (name, callback) => callback(null, contexts.select(certificatesFor(listeners, name), name) ?? defaultContext),
  });
  const timer = setTimeout(() => socket.destroy(), options.handshakeTimeoutMs);
  socket.on('error', () => {
    clearTimeout(timer);
    socket.destroy();
    if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CONNECT_ERROR);
  });
  stream.once('close', () => socket.destroy());
  // 'secure' is the server-side TLSSocket's handshake-complete event (what tls.Server listens to).
  socket.once('secure', () => {
    clearTimeout(timer);
    // tls.Server clears `secureConnecting` when its sockets finish the handshake; a TLSSocket made
    // by hand keeps it set, and HTTP/2 would then wait for a 'secureConnect' that never comes.
    (socket as tls.TLSSocket & { secureConnecting: boolean }).secureConnecting = false;
    if (handlers.onDecryptedSocket) return handlers.onDecryptedSocket(socket);
    const sni = typeof socket.servername === 'string' && socket.servername !== '' ? socket.servername : undefined;
    if (socket.alpnProtocol === 'h2') {
      const session = http2.performServerHandshake(socket, { settings: options.http2Settings });
      session.on('stream', (s, h) => handlers.onHttp2Stream(s, h, sni));
      session.on('error', () => socket.destroy());
    } else {
      const server = http.createServer((req, res) => handlers.onHttp1Request(req, res, sni));
      server.on('upgrade', (req: IncomingMessage, s: Duplex, head: Buffer) => handlers.onHttp1Upgrade(req, s, head, sni));
      server.emit('connection', socket);
    }
  });
}

/**
 * certificatesFor lists the certificates of the listeners that serve `sni`: those whose hostname
 * is the name or a wildcard over it first, then those without a hostname.
 */
function certificatesFor(listeners: readonly Listener[], sni: string | undefined): SecretRef[] {
  const named =
    sni === undefined ? [] : listeners.filter((l) => l.hostname !== undefined && (l.hostname === sni || matchesWildcard(l.hostname, sni)));
  const open = listeners.filter((l) => l.hostname === undefined);
  const chosen = named.length > 0 ? named : open.length > 0 ? open : listeners;
  return chosen.flatMap((l) => l.tls?.certificates ?? []);
}
