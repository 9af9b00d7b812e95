import { constants as h2constants } from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, OutgoingHttpHeaders, ClientSessionRequestOptions } from 'node:http2';
import type { Socket } from 'node:net';
import { HEADER_BINDING } from '../../wire/index.js';
import type { TunnelLimits } from '../../wire/index.js';
import { EdgeConnection } from './edge-connection.js';

/** EdgeTunnelOptions describes one accepted, upgraded one-binding tunnel connection (protocol version 1). */
export interface EdgeTunnelOptions {
  socket: Socket;
  bindingId: string;
  keyId: string;
  connectionId: string;
  limits: TunnelLimits;
  pingIntervalMs: number;
  /** the optional features the agent named in its upgrade request (docs/protocol.md §4.5) */
  features?: ReadonlySet<string>;
  /** the agent reads the compact stream context (EdgeConnectionOptions) */
  readsCompactMeta?: boolean;
}

/**
 * EdgeTunnel is one binding served over one tunnel connection: what the registry balances and the
 * fronts open streams on. On a version 1 connection it owns the connection (closing it closes the
 * connection). On a shared connection (version 2) it is one attached binding: its streams carry
 * the `tuna-binding` header, close() stops new streams and ends once its own streams have, and
 * destroy() resets its streams — the connection and its other bindings carry on. It counts its
 * open streams for least-streams balancing.
 */
export class EdgeTunnel {
  readonly bindingId: string;
  readonly keyId: string;
  readonly connection: EdgeConnection;
  /** activeStreams is the number of this binding's streams open on the connection right now. */
  activeStreams = 0;
  readonly #isShared: boolean;
  readonly #encodedBinding: string;
  readonly #streams = new Set<ClientHttp2Stream>();
  #closing = false;
  #ended = false;
  readonly #onEnd: (() => void)[] = [];

  constructor(options: EdgeTunnelOptions);
  constructor(options: { connection: EdgeConnection; bindingId: string; keyId: string });
  constructor(options: EdgeTunnelOptions | { connection: EdgeConnection; bindingId: string; keyId: string }) {
    this.bindingId = options.bindingId;
    this.keyId = options.keyId;
    this.#encodedBinding = encodeURIComponent(options.bindingId);
    this.#isShared = 'connection' in options;
    this.connection = 'connection' in options ? options.connection : new EdgeConnection(options);
    this.connection.onClose(() => this.#end());
  }

  /** connectionId identifies the connection in logs on both sides. */
  get connectionId(): string {
    return this.connection.connectionId;
  }

  /** socket is the connection's socket (shared by every binding of a shared connection). */
  get socket(): Socket {
    return this.connection.socket;
  }

  /** session is the connection's HTTP/2 session. */
  get session(): ClientHttp2Session {
    return this.connection.session;
  }

  /** isShared says whether this binding shares its connection (protocol version 2). */
  get isShared(): boolean {
    return this.#isShared;
  }

  /** canSpliceHttp1 says whether this binding's agent takes whole public HTTP/1.1 connections on one stream (docs/protocol.md §4.5). */
  get canSpliceHttp1(): boolean {
    return this.connection.canSpliceHttp1;
  }

  /** canUdp says whether this binding's agent takes UDP flows (docs/protocol.md §4.6). */
  get canUdp(): boolean {
    return this.connection.canUdp;
  }

  /** ready resolves when the connection can take streams (false if it closed first). */
  ready(): Promise<boolean> {
    return this.connection.ready();
  }

  /** isAvailable says whether new streams may be opened for this binding. */
  get isAvailable(): boolean {
    return !this.#closing && this.connection.isAvailable;
  }

  /** request opens one stream of this binding toward the agent. */
  request(headers: OutgoingHttpHeaders, options?: ClientSessionRequestOptions): ClientHttp2Stream {
    if (this.#isShared) headers[HEADER_BINDING] = this.#encodedBinding;
    const stream = this.connection.request(headers, options);
    this.activeStreams++;
    this.#streams.add(stream);
    stream.once('close', () => {
      this.activeStreams--;
      this.#streams.delete(stream);
      if (this.#closing && this.activeStreams === 0) this.#end();
    });
    return stream;
  }

  /** onClose registers a callback for the end of this binding on the connection (or of the connection). */
  onClose(fn: () => void): void {
    if (this.#ended) queueMicrotask(fn);
    else this.#onEnd.push(fn);
  }

  /** close drains: no new streams; open streams finish. A one-binding connection closes with GOAWAY. */
  close(): Promise<void> {
    if (!this.#isShared) {
      this.#closing = true;
      return this.connection.close();
    }
    this.#closing = true;
    if (this.activeStreams === 0) this.#end();
    return new Promise((resolve) => this.onClose(resolve));
  }

  /** destroy ends this binding now: a one-binding connection is destroyed, a shared one resets only this binding's streams. */
  destroy(): void {
    this.#closing = true;
    if (!this.#isShared) return this.connection.destroy();
    for (const stream of this.#streams) if (!stream.destroyed) stream.close(h2constants.NGHTTP2_CANCEL);
    this.#end();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#closing = true;
    for (const fn of this.#onEnd.splice(0)) fn();
  }
}
