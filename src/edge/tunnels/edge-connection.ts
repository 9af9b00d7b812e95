import { connect } from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, OutgoingHttpHeaders, ClientSessionRequestOptions } from 'node:http2';
import type { Socket } from 'node:net';
import { FEATURE_SPLICED_HTTP1, FEATURE_UDP, expandStreamMeta, tunnelSettings } from '../../wire/index.js';
import type { TunnelLimits } from '../../wire/index.js';

// 2^30 client-initiated ids exist; leave room for streams racing the GOAWAY.
const MAX_STREAMS_PER_CONNECTION = 2 ** 30 - 10_000;

/** EdgeConnectionOptions describes one accepted, upgraded tunnel connection. */
export interface EdgeConnectionOptions {
  socket: Socket;
  connectionId: string;
  limits: TunnelLimits;
  pingIntervalMs: number;
  /** the optional features the agent named in its upgrade request (`tuna-features`, docs/protocol.md §4.5) */
  features?: ReadonlySet<string>;
  /** the agent announced `tuna-features: compact-meta` in the upgrade: it reads `tuna-meta` (docs/protocol.md §4) */
  readsCompactMeta?: boolean;
}

/**
 * EdgeConnection is the edge's end of one tunnel connection: the HTTP/2 client on a socket the
 * agent dialed. It serves one binding (protocol version 1, through one EdgeTunnel) or many
 * (version 2, one EdgeTunnel per attached binding), and becomes unavailable as soon as either
 * side starts to shut down.
 */
export class EdgeConnection {
  readonly connectionId: string;
  readonly socket: Socket;
  readonly session: ClientHttp2Session;
  /** canSpliceHttp1 says whether the agent takes whole public HTTP/1.1 connections on one stream (docs/protocol.md §4.5). */
  readonly canSpliceHttp1: boolean;
  /** canUdp says whether the agent named `udp` in `tuna-features`: it takes UDP flows (docs/protocol.md §4.6). */
  readonly canUdp: boolean;
  /** readsCompactMeta: streams carry the context as one `tuna-meta` field; otherwise it is expanded into today's nine headers. */
  readonly readsCompactMeta: boolean;
  #streamsOpened = 0;
  #ready = false;
  #closing = false;
  #pingTimer: NodeJS.Timeout | undefined;
  // one session listener for every binding's close callback (a shared connection has thousands)
  #onClose: (() => void)[] | undefined = [];
  #onClosing: (() => void)[] = [];

  constructor(options: EdgeConnectionOptions) {
    this.connectionId = options.connectionId;
    this.socket = options.socket;
    this.canSpliceHttp1 = options.features?.has(FEATURE_SPLICED_HTTP1) ?? false;
    this.canUdp = options.features?.has(FEATURE_UDP) ?? false;
    this.readsCompactMeta = options.readsCompactMeta === true;
    this.session = connect('http://tunnel.invalid', {
      createConnection: () => options.socket,
      settings: tunnelSettings(options.limits, false),
      maxSessionMemory: options.limits.maxSessionMemoryMb,
      // until the agent's SETTINGS arrive, assume its advertised limit rather than Node's 100.
      peerMaxConcurrentStreams: options.limits.maxConcurrentStreams,
    });
    this.session.on('error', () => this.#markClosing());
    this.session.on('goaway', () => this.#markClosing());
    this.session.on('close', () => {
      this.#markClosing();
      const callbacks = this.#onClose ?? [];
      this.#onClose = undefined;
      for (const fn of callbacks) fn();
    });
    this.session.once('connect', () => this.session.setLocalWindowSize(options.limits.connectionWindowBytes));
    this.#schedulePing(options.pingIntervalMs);
  }

  /** ready resolves when the agent's SETTINGS arrived (extended CONNECT needs them, RFC 8441 §3), false if it closed first. */
  ready(): Promise<boolean> {
    if (this.#ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onSettings = (): void => {
        this.session.off('close', onClose);
        this.#ready = true;
        resolve(!this.#closing);
      };
      const onClose = (): void => {
        this.session.off('remoteSettings', onSettings);
        resolve(false);
      };
      this.session.once('remoteSettings', onSettings);
      this.session.once('close', onClose);
    });
  }

  /** isAvailable says whether new streams may be opened here. */
  get isAvailable(): boolean {
    return this.#ready && !this.#closing && !this.session.destroyed && !this.session.closed;
  }

  /** request opens one stream toward the agent. */
  request(headers: OutgoingHttpHeaders, options?: ClientSessionRequestOptions): ClientHttp2Stream {
    // The fronts write the compact form; an agent that did not announce it gets the expanded one.
    if (!this.readsCompactMeta) expandStreamMeta(headers);
    const stream = this.session.request(headers, options);
    // Client stream ids are odd 31-bit numbers and cannot be reused (RFC 9113 §5.1.1): retire the
    // connection gracefully well before they run out; the agent redials on GOAWAY.
    if (++this.#streamsOpened === MAX_STREAMS_PER_CONNECTION) void this.close();
    return stream;
  }

  /** onClose registers a callback for the end of the connection. */
  onClose(fn: () => void): void {
    if (this.#onClose === undefined || this.session.destroyed) queueMicrotask(fn);
    else this.#onClose.push(fn);
  }

  /** onClosing registers a callback for the moment the connection stops taking new streams (GOAWAY either way, close, error). */
  onClosing(fn: () => void): void {
    if (this.#closing) queueMicrotask(fn);
    else this.#onClosing.push(fn);
  }

  /** close drains: GOAWAY, open streams finish, then the socket closes. */
  close(): Promise<void> {
    this.#markClosing();
    if (this.session.destroyed) return Promise.resolve();
    return new Promise((resolve) => this.session.close(resolve));
  }

  /** destroy ends the connection now. */
  destroy(): void {
    this.#markClosing();
    this.session.destroy();
    this.socket.destroy();
  }

  #markClosing(): void {
    if (!this.#closing) for (const fn of this.#onClosing.splice(0)) fn();
    this.#closing = true;
    if (this.#pingTimer !== undefined) clearTimeout(this.#pingTimer);
    this.#pingTimer = undefined;
  }

  // The edge pings too: a half-dead agent connection must leave the balancing set within
  // one interval plus one timeout, not when TCP notices (minutes later).
  #schedulePing(intervalMs: number): void {
    this.#pingTimer = setTimeout(() => {
      if (this.#closing) return;
      const deadline = setTimeout(() => this.destroy(), intervalMs);
      deadline.unref();
      const sent = this.session.ping((err) => {
        clearTimeout(deadline);
        if (err === null) this.#schedulePing(intervalMs);
      });
      if (!sent) clearTimeout(deadline);
    }, intervalMs);
    this.#pingTimer.unref();
  }
}
