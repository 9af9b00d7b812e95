import http from 'node:http';
import http2 from 'node:http2';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { ClientValidation, Listener, SecretRef } from '../model/index.js';
import { isIssuedByBundle } from './client-chain.js';
import { clientCertificateHeader } from './client-identity.js';
import { matchesWildcard, normalizeHost } from './host.js';
import type { LoadedCertificate, SecureContextCache } from './certificates.js';

/** TerminatedConnection is what the terminator learnt about one decrypted connection. */
export interface TerminatedConnection {
  /** the server name the client sent in its ClientHello (undefined without one) */
  sni: string | undefined;
  /** the `x-forwarded-client-cert` value of a client certificate that chains to the listener's CA (client-identity.ts) */
  clientCertificate?: string;
}

/** DecryptedHandlers receive what is inside a terminated TLS stream. */
export interface DecryptedHandlers {
  /** when set, the decrypted bytes are not HTTP: the socket goes here as it is (TLSRoute Terminate) */
  onDecryptedSocket?(socket: tls.TLSSocket): void;
  onHttp2Stream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, conn: TerminatedConnection): void;
  onHttp1Request(req: IncomingMessage, res: ServerResponse, conn: TerminatedConnection): void;
  /** an HTTP/1.1 Upgrade (WebSocket) */
  onHttp1Upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, conn: TerminatedConnection): void;
}

/** TlsTerminatorOptions bound a terminated connection. */
export interface TlsTerminatorOptions {
  handshakeTimeoutMs: number;
  http2Settings: http2.Settings;
}

/**
 * terminateTls serves `terminate-in-cluster` listeners: the edge forwarded the client's raw TLS
 * bytes by SNI on a CONNECT stream (its `:authority` names the SNI the edge routed on:
 * `routedSni`), and the key stays here. A server-side TLSSocket runs over the stream with the
 * certificate the listener names for that SNI; ALPN picks HTTP/2 or HTTP/1.1, and the decrypted
 * requests go to the same router as tunnel requests. A listener with client certificate
 * validation (Gateway `spec.tls.frontend`) is served by `terminateValidating`.
 */
export function terminateTls(
  stream: ServerHttp2Stream,
  listeners: readonly Listener[],
  contexts: SecureContextCache,
  handlers: DecryptedHandlers,
  options: TlsTerminatorOptions,
  routedSni?: string,
): void {
  const validation = validationFor(listeners, routedSni);
  const chosen = validation ? contexts.choose(certificatesFor(listeners, routedSni), routedSni) : undefined;
  const defaultContext = validation ? undefined : contexts.select(certificatesFor(listeners, undefined), undefined);
  if (!chosen && !defaultContext) {
    stream.respond({ ':status': 503 }, { endStream: true });
    return;
  }
  stream.respond({ ':status': 200 });
  if (validation && chosen) return terminateValidating(stream, listeners, chosen, validation, handlers, options);
  const socket = new tls.TLSSocket(stream as unknown as Socket, {
    isServer: true,
    secureContext: defaultContext,
    ...alpnOf(handlers),
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
    const sni = serverNameOf(socket);
    // This socket asked for no certificate: a name whose listener validates clients is not served on it.
    if (validationFor(listeners, sni) !== undefined) return socket.destroy();
    serveDecrypted(socket, { sni }, handlers, options);
  });
}

/**
 * terminateValidating terminates a connection whose listener validates client certificates. The
 * socket comes from a `tls.Server` of its own, because only tls.Server's connection handling turns
 * OpenSSL's verification into `authorized` and refuses an unverified peer (a server TLSSocket made
 * by hand requests the certificate but never checks it: seen in Node 24). That costs one secure
 * context per connection (0.12 to 0.24 ms measured in a loop, beside the handshake's own work),
 * paid only on listeners that validate. AllowValidOnly refuses a client without a certificate in
 * the handshake (TLS alert certificate_required) and closes the connection of one whose chain does
 * not verify before any request is read; AllowInsecureFallback serves both, and the backend gets
 * an identity only for a certificate client-chain.ts finds issued by the bundle.
 */
function terminateValidating(
  stream: ServerHttp2Stream,
  listeners: readonly Listener[],
  chosen: LoadedCertificate,
  validation: ClientValidation,
  handlers: DecryptedHandlers,
  options: TlsTerminatorOptions,
): void {
  const strict = validation.mode === 'AllowValidOnly';
  const server = tls.createServer({
    cert: chosen.pair.cert,
    key: chosen.pair.key,
    // A fallback connection must survive a certificate that fails verification; OpenSSL checking it
    // against the bundle can drop it (client-chain.ts), so that check is made after the handshake.
    ...(strict ? { ca: validation.caPem } : {}),
    requestCert: true,
    rejectUnauthorized: strict,
    handshakeTimeout: options.handshakeTimeoutMs,
    ...alpnOf(handlers),
  });
  server.once('tlsClientError', (_err: Error, socket: tls.TLSSocket) => {
    socket.destroy();
    if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_CONNECT_ERROR);
  });
  server.once('secureConnection', (socket: tls.TLSSocket) => {
    socket.on('error', () => socket.destroy());
    stream.once('close', () => socket.destroy());
    const sni = serverNameOf(socket);
    // The context came from the SNI the edge routed on; a ClientHello naming a listener that
    // validates otherwise (or not at all) is not served with this one.
    if (!isSameValidation(validationFor(listeners, sni), validation)) return socket.destroy();
    const presented = socket.getPeerX509Certificate();
    const peer = strict ? (socket.authorized ? presented : undefined) : presented && isIssuedByBundle(presented, validation) ? presented : undefined;
    serveDecrypted(socket, { sni, ...(peer ? { clientCertificate: clientCertificateHeader(peer) } : {}) }, handlers, options);
  });
  stream.once('close', () => server.removeAllListeners());
  server.emit('connection', stream);
}

/** serveDecrypted hands a finished handshake's socket to HTTP/2, HTTP/1.1 or the raw handler. */
function serveDecrypted(socket: tls.TLSSocket, conn: TerminatedConnection, handlers: DecryptedHandlers, options: TlsTerminatorOptions): void {
  if (handlers.onDecryptedSocket) return handlers.onDecryptedSocket(socket);
  if (socket.alpnProtocol === 'h2') {
    const session = http2.performServerHandshake(socket, { settings: options.http2Settings });
    session.on('stream', (s, h) => handlers.onHttp2Stream(s, h, conn));
    session.on('error', () => socket.destroy());
  } else {
    const server = http.createServer((req, res) => handlers.onHttp1Request(req, res, conn));
    server.on('upgrade', (req: IncomingMessage, s: Duplex, head: Buffer) => handlers.onHttp1Upgrade(req, s, head, conn));
    server.emit('connection', socket);
  }
}

/** alpnOf offers h2 and HTTP/1.1, except to raw forwarding (TLSRoute Terminate): its bytes are the backend's protocol. */
function alpnOf(handlers: DecryptedHandlers): { ALPNProtocols?: string[] } {
  return handlers.onDecryptedSocket ? {} : { ALPNProtocols: ['h2', 'http/1.1'] };
}

function serverNameOf(socket: tls.TLSSocket): string | undefined {
  const name = (socket as tls.TLSSocket & { servername?: string | false | null }).servername;
  return typeof name === 'string' && name !== '' ? normalizeHost(name) : undefined;
}

/**
 * listenersFor lists the listeners that serve `sni`: those whose hostname is the name or a
 * wildcard over it, else those without a hostname, else all of them.
 */
function listenersFor(listeners: readonly Listener[], sni: string | undefined): readonly Listener[] {
  const named =
    sni === undefined ? [] : listeners.filter((l) => l.hostname !== undefined && (l.hostname === sni || matchesWildcard(l.hostname, sni)));
  const open = listeners.filter((l) => l.hostname === undefined);
  return named.length > 0 ? named : open.length > 0 ? open : listeners;
}

/** certificatesFor lists the certificates of the listeners that serve `sni` (listenersFor). */
function certificatesFor(listeners: readonly Listener[], sni: string | undefined): SecretRef[] {
  return listenersFor(listeners, sni).flatMap((l) => l.tls?.certificates ?? []);
}

/**
 * validationFor returns the client validation a connection for `sni` needs: the strictest of the
 * listeners that serve it (AllowValidOnly before AllowInsecureFallback), so that a name two
 * listeners share is never served with less than one of them asks for. Frontend validation is
 * per port (GEP-91), so HTTPS listeners of one stream agree; only TLS listeners, which never
 * validate, can differ.
 */
export function validationFor(listeners: readonly Listener[], sni: string | undefined): ClientValidation | undefined {
  const all = listenersFor(listeners, sni).flatMap((l) => (l.tls?.clientValidation ? [l.tls.clientValidation] : []));
  return all.find((v) => v.mode === 'AllowValidOnly') ?? all[0];
}

function isSameValidation(a: ClientValidation | undefined, b: ClientValidation): boolean {
  return a !== undefined && a.mode === b.mode && a.caPem === b.caPem;
}
