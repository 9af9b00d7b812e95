import { constants as h2c } from 'node:http2';
import type { ClientHttp2Stream, OutgoingHttpHeaders } from 'node:http2';
import type { Socket } from 'node:net';
import { formatHttp1Limits, HEADER_HTTP1_LIMITS, relay, SPLICED_HTTP1_PROTOCOL, writeCoalescer, writeStreamMeta } from '../../wire/index.js';
import type { EdgeTunnel } from '../tunnels/index.js';
import { REPLY, countReply, isRefused, resolveHttpBinding } from './front-context.js';
import type { ConnectionInfo, FrontContext } from './front-context.js';
import { hostWithoutPort } from './request-headers.js';
import { cancelUpstream } from './tunnel-cancels.js';

/**
 * Spliced HTTP/1.1 (docs/protocol.md §4.5): the edge reads the first request head
 * of a public HTTP/1.1 connection for its Host only, picks the binding's tunnel, and carries the
 * whole connection — the bytes read so far, then both directions — as one extended CONNECT stream.
 * The agent parses, routes and answers every request on it. Whatever the edge would answer itself
 * or treat specially (a malformed or oversized head, an unknown host, no tunnel yet, an agent that
 * did not name the feature, an Upgrade, a client over its in-flight cap) goes the per-request way
 * instead, with the bytes pushed back, so those answers stay the edge's.
 */

/** Http1Forwarding is how the edge forwards public HTTP/1.1: one stream per connection, or per request. */
export type Http1Forwarding = 'spliced' | 'per-request';

/** HTTP1_FORWARDING_MODES lists the values of `--http1-forwarding` and the config's `http1Forwarding`. */
export const HTTP1_FORWARDING_MODES: readonly Http1Forwarding[] = ['spliced', 'per-request'];

/** DEFAULT_HTTP1_FORWARDING is the mode of an edge whose config names none (the faster one measured, docs/tunnel-performance.md §8). */
export const DEFAULT_HTTP1_FORWARDING: Http1Forwarding = 'spliced';

// A spliced connection without a byte either way this long is cut (as STREAM_IDLE_TIMEOUT_MS of the
// per-request path; the agent's own keep-alive timeout closes idle connections well before).
const SPLICED_IDLE_TIMEOUT_MS = 300_000;

const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** SpliceHooks are what the public front does when a connection is spliced or not. */
export interface SpliceHooks {
  /** the connection became one tunnel stream: its HTTP/1.1 header deadline no longer applies here */
  onSpliced(): void;
  /** serve the connection per request (the bytes read are back in the socket, which is paused) */
  fallback(): void;
}

/**
 * spliceableAuthority returns the Host of a first request head (the text before its blank line)
 * when the connection may be spliced on it: an HTTP/1.1 origin-form request line, well-formed
 * field lines (no obs-fold, no bare LF), exactly one non-empty Host, no Upgrade. Undefined sends
 * the connection the per-request way, whose parser then gives the edge's usual answers.
 */
export function spliceableAuthority(head: string): string | undefined {
  const lines = head.split('\r\n');
  const requestLine = lines[0] ?? '';
  const first = requestLine.indexOf(' ');
  const last = requestLine.lastIndexOf(' ');
  if (first <= 0 || last <= first) return undefined;
  if (requestLine.slice(last + 1) !== 'HTTP/1.1' || !METHOD.test(requestLine.slice(0, first))) return undefined;
  if (!requestLine.startsWith('/', first + 1)) return undefined;
  let host: string | undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.includes('\n')) return undefined;
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).toLowerCase();
    if (!FIELD_NAME.test(name)) return undefined;
    if (name === 'upgrade') return undefined;
    if (name === 'host') {
      if (host !== undefined) return undefined;
      host = line.slice(colon + 1).trim();
    }
  }
  return host === undefined || host === '' ? undefined : host;
}

/**
 * spliceHttp1 reads the first request head of `socket` (under the connection guard's header
 * deadline, which keeps running until `onSpliced`), and splices the connection when its binding's
 * tunnel takes spliced connections; otherwise, or when the agent does not answer the stream 2xx,
 * the connection is served per request (`fallback`) with no byte lost.
 */
export function spliceHttp1(ctx: FrontContext, socket: Socket, info: ConnectionInfo, hooks: SpliceHooks): void {
  let seen: Buffer = Buffer.alloc(0);
  const stop = (): void => {
    socket.off('data', onData);
    socket.off('end', onEnd);
    socket.pause();
  };
  const giveUp = (): void => {
    stop();
    if (seen.length > 0) socket.unshift(seen);
    hooks.fallback();
  };
  const onEnd = (): void => void socket.destroy();
  const onData = (chunk: Buffer): void => {
    seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
    const end = seen.indexOf('\r\n\r\n');
    if (end < 0) {
      // too large for the edge's limit (the per-request parser answers 431), or LF-only lines.
      if (seen.length > ctx.limits.maxHeaderBytes || seen.includes('\n\n')) giveUp();
      return;
    }
    const head = end <= ctx.limits.maxHeaderBytes ? seen.toString('latin1', 0, end) : undefined;
    const authority = head === undefined ? undefined : spliceableAuthority(head);
    const tunnel = authority === undefined ? undefined : spliceTunnel(ctx, info, authority);
    if (head === undefined || authority === undefined || tunnel === undefined) return giveUp();
    stop();
    // only a lone bodyless idempotent head may be sent again if the agent ends the stream unanswered
    const isReplayable = seen.length === end + 4 && isReplayableHead(head);
    openSplice(ctx, socket, info, tunnel, authority, seen, isReplayable, hooks);
  };
  socket.on('data', onData);
  socket.once('end', onEnd);
  socket.resume();
}

// The tunnel a connection for `authority` is spliced on: one that is up now and whose agent named the feature.
function spliceTunnel(ctx: FrontContext, info: ConnectionInfo, authority: string): EdgeTunnel | undefined {
  const binding = resolveHttpBinding(ctx, info, hostWithoutPort(authority));
  if (binding === undefined) return undefined;
  const tunnel = ctx.registry.pick(binding.id);
  return tunnel?.canSpliceHttp1 === true ? tunnel : undefined;
}

/**
 * splicedLimitsField is the HEADER_HTTP1_LIMITS value of this edge (docs/protocol.md §4.5): its
 * header size limit, header deadline and keep-alive idle time of public HTTP/1.1.
 */
function splicedLimitsField(ctx: FrontContext): string {
  const { headersTimeoutMs, idleTimeoutMs } = ctx.limits.connections;
  return formatHttp1Limits({ maxHeaderBytes: ctx.limits.maxHeaderBytes, headersTimeoutMs, idleTimeoutMs });
}

function openSplice(
  ctx: FrontContext,
  socket: Socket,
  info: ConnectionInfo,
  tunnel: EdgeTunnel,
  authority: string,
  seen: Buffer,
  isReplayable: boolean,
  hooks: SpliceHooks,
): void {
  // A spliced connection holds one of the client's in-flight slots for its life; past the cap it
  // is served per request, where the cap answers 429.
  const release = ctx.fairness.acquire(tunnel.bindingId, info.clientAddress);
  const fallback = (): void => {
    release?.();
    if (socket.destroyed) return;
    // a client that ended its side meanwhile: its bytes cannot go back into a socket that emitted
    // 'end' (the per-request parser would never see them), and it has left or half-closed, which
    // the per-request path answers with a close too (Node's HTTP/1.1 server without allowHalfOpen)
    if (socket.readableEnded) return void socket.destroy();
    socket.unshift(seen);
    hooks.fallback();
  };
  if (release === undefined) return fallback();
  const headers: OutgoingHttpHeaders = {
    ':method': 'CONNECT',
    ':protocol': SPLICED_HTTP1_PROTOCOL,
    ':scheme': info.publicProtocol,
    ':path': '/',
    ':authority': authority,
  };
  writeStreamMeta(headers, { publicPort: info.port, publicProtocol: info.publicProtocol, clientAddress: info.clientAddress, requestId: ctx.requestId() });
  // The agent parses every later request of the connection: it gets the limits this edge would apply to them.
  headers[HEADER_HTTP1_LIMITS] = splicedLimitsField(ctx);
  let stream: ClientHttp2Stream;
  try {
    stream = tunnel.request(headers);
  } catch {
    return fallback();
  }
  ctx.metrics.streamsTotal++;
  ctx.metrics.streamsActive++;
  stream.on('error', noop);
  let isSpliced = false;
  // the first byte of an answer came back: from then on the connection is the agent's, whatever happens
  let isAnswered = false;
  let upload: Upload | undefined;
  const onClientClose = (): void => {
    if (!stream.closed) stream.close(h2c.NGHTTP2_CANCEL);
  };
  socket.once('close', onClientClose);
  stream.once('close', () => {
    ctx.metrics.streamsActive--;
    // no answer, or a refusal: nothing of the connection reached a backend, so serve it per request.
    if (!isSpliced) {
      socket.off('close', onClientClose);
      return fallback();
    }
    if (!isAnswered) {
      // Accepted, then ended or reset before a byte of answer (an agent that drained the connection
      // as it took it, or went away): nothing reached the client, so it gets an answer, never a bare
      // close. A lone bodyless idempotent request is served per request instead (RFC 9110 §9.2.2),
      // which retries it on another tunnel or waits for one; anything else cannot be sent again.
      socket.off('close', onClientClose);
      const sentOnlyHead = upload?.stop() === seen.length;
      if (isReplayable && sentOnlyHead && !socket.destroyed && !socket.readableEnded) {
        socket.setTimeout(0);
        return fallback();
      }
      release();
      return answerUnanswered(ctx, socket, isRefused(stream) ? REPLY.noTunnel : REPLY.tunnelFailed);
    }
    release();
    if (stream.rstCode !== h2c.NGHTTP2_NO_ERROR) socket.destroy();
    else if (!socket.writableEnded) socket.end();
  });
  stream.once('response', (response) => {
    const status = Number(response[':status']);
    if (status < 200 || status > 299 || socket.destroyed) return void stream.close(h2c.NGHTTP2_CANCEL);
    isSpliced = true;
    hooks.onSpliced();
    socket.setTimeout(SPLICED_IDLE_TIMEOUT_MS, () => socket.destroy());
    upload = new Upload(socket, stream, seen);
    // The answer's first byte decides: until it arrives the public socket is not handed to the
    // relays (which would end or destroy it with the stream), so an unanswered stream can still
    // be answered or served per request.
    const onFirstAnswer = (chunk: Buffer): void => {
      isAnswered = true;
      stream.off('data', onFirstAnswer);
      stream.off('end', onEarlyEnd);
      // the client left as the answer began: nothing to relay to, and a paused stream with unread
      // bytes would never be freed (tunnel-cancels.ts, discardUnread)
      if (socket.destroyed) return cancelUpstream(tunnel, stream);
      stream.pause();
      const isUploadEnded = upload!.stop() < 0;
      socket.write(chunk);
      if (!isUploadEnded) relay([socket, stream], noop);
      relay([stream, socket], noop);
    };
    // the agent ended its side with no answer: nothing more comes, so close the stream (see 'close')
    const onEarlyEnd = (): void => {
      if (!stream.closed) stream.close(h2c.NGHTTP2_NO_ERROR);
    };
    stream.on('data', onFirstAnswer);
    stream.once('end', onEarlyEnd);
  });
}

/**
 * Upload copies the public socket into an accepted spliced stream until the answer begins (the
 * bytes read so far first), counting what it sent; then the relays take over. It leaves the
 * socket alone when the stream ends, so the edge can still answer the client itself.
 */
class Upload {
  readonly #socket: Socket;
  readonly #stream: ClientHttp2Stream;
  #sent: number;
  #isEnded = false;
  #isStopped = false;
  readonly #coalesce: () => void;

  constructor(socket: Socket, stream: ClientHttp2Stream, first: Buffer) {
    this.#socket = socket;
    this.#stream = stream;
    this.#coalesce = writeCoalescer(stream);
    this.#sent = first.length;
    stream.write(first);
    // The client may have ended its side (its FIN, or left) while the stream waited for the
    // agent's 2xx: the socket was paused with nothing buffered, so its 'end' came and went with
    // no listener. The agent must still get END_STREAM after the bytes, or it keeps the
    // connection for its keep-alive time after answering, and the edge the stream with it (the
    // socket is half-open, allowHalfOpen, and never reads again to see the client is gone).
    if (socket.readableEnded) {
      this.#onEnd();
      return;
    }
    socket.on('data', this.#onData);
    socket.once('end', this.#onEnd);
    stream.on('drain', this.#onDrain);
    socket.resume();
  }

  readonly #onData = (chunk: Buffer): void => {
    this.#sent += chunk.length;
    this.#coalesce();
    if (!this.#stream.write(chunk)) this.#socket.pause();
  };

  readonly #onDrain = (): void => {
    this.#socket.resume();
  };

  readonly #onEnd = (): void => {
    this.#isEnded = true;
    if (!this.#stream.destroyed && !this.#stream.writableEnded) this.#stream.end();
  };

  /** stop hands the socket back (paused) and returns the bytes sent, or -1 when the client had ended its side. */
  stop(): number {
    if (!this.#isStopped) {
      this.#isStopped = true;
      this.#socket.off('data', this.#onData);
      this.#socket.off('end', this.#onEnd);
      this.#stream.off('drain', this.#onDrain);
      this.#socket.pause();
    }
    return this.#isEnded ? -1 : this.#sent;
  }
}

/** answerUnanswered answers a spliced connection's first request the edge's way, then closes it. */
function answerUnanswered(ctx: FrontContext, socket: Socket, reply: readonly [number, string]): void {
  // a client that left is owed nothing
  if (socket.destroyed || !socket.writable) return void socket.destroy();
  countReply(ctx, reply, socket, 'http1');
  const [status, body] = reply;
  const text = status === 503 ? 'Service Unavailable' : 'Bad Gateway';
  socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** IDEMPOTENT_METHODS may be sent again automatically (RFC 9110 §9.2.2), as on the per-request path. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/** isReplayableHead says a request head (as spliceableAuthority took it) is idempotent and announces no body. */
export function isReplayableHead(head: string): boolean {
  const lines = head.split('\r\n');
  if (!IDEMPOTENT_METHODS.has((lines[0] ?? '').slice(0, (lines[0] ?? '').indexOf(' ')))) return false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    if (name === 'transfer-encoding') return false;
    if (name === 'content-length' && line.slice(colon + 1).trim() !== '0') return false;
  }
  return true;
}

function noop(): void {}
