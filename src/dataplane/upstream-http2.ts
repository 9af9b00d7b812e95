import http2 from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders, IncomingHttpStatusHeader } from 'node:http2';
import type tls from 'node:tls';
import type { Endpoint } from './endpoints.js';
import { BackendConnectError } from './errors.js';
import type { HeaderMap } from './headers.js';
import { forwardBody } from './upstream.js';
import type { UpstreamCall, UpstreamClient, UpstreamReceiver, UpstreamRequest } from './upstream.js';

/** Http2ClientOptions configure the per-endpoint sessions. */
export interface Http2ClientOptions {
  /** 'h2c' speaks HTTP/2 with prior knowledge (RFC 9113 §3.3); 'h2' over TLS with ALPN */
  mode: 'h2c' | 'h2';
  /** a session idle this long is closed */
  idleTimeoutMs: number;
  connectTimeoutMs: number;
  /** for 'h2': the backend is verified with these TLS options (a BackendTLSPolicy; backend-tls.ts) */
  tls?: tls.ConnectionOptions;
}

/**
 * Http2Client multiplexes requests to a backend over one HTTP/2 session per endpoint. A session
 * that fails, closes or receives GOAWAY leaves the pool at once; the next request dials anew.
 * For `h2` without `tls` options, the backend's certificate is not verified: in-cluster backends
 * present certificates from private CAs the agent cannot know, and the hop stays inside the
 * cluster network (as Contour and Envoy Gateway do without an explicit BackendTLSPolicy). With a
 * BackendTLSPolicy the options carry its CA, SNI and identity check.
 */
export class Http2Client implements UpstreamClient {
  private readonly sessions = new Map<string, Promise<ClientHttp2Session>>();
  private readonly options: Http2ClientOptions;

  constructor(options: Partial<Http2ClientOptions> & Pick<Http2ClientOptions, 'mode'>) {
    this.options = { idleTimeoutMs: 60_000, connectTimeoutMs: 10_000, ...options };
  }

  /** send opens a stream on the endpoint's session; the call it returns cancels it with RST_STREAM CANCEL. */
  send(endpoint: Endpoint, request: UpstreamRequest, receiver: UpstreamReceiver): UpstreamCall {
    const call = new Http2Call(`${endpoint.address}:${endpoint.port}`, receiver);
    this.session(endpoint).then(
      (session) => call.start(session, request, this.options.mode === 'h2' ? 'https' : 'http'),
      (err: unknown) => call.noSession(err),
    );
    return call;
  }

  private session(endpoint: Endpoint): Promise<ClientHttp2Session> {
    const key = `${endpoint.address}:${endpoint.port}`;
    const pooled = this.sessions.get(key);
    if (pooled) return pooled;
    const promise = this.connect(endpoint, key);
    this.sessions.set(key, promise);
    promise.catch(() => undefined);
    return promise;
  }

  private connect(endpoint: Endpoint, key: string): Promise<ClientHttp2Session> {
    const host = endpoint.address.includes(':') ? `[${endpoint.address}]` : endpoint.address;
    const scheme = this.options.mode === 'h2' ? 'https' : 'http';
    const holder: { promise?: Promise<ClientHttp2Session> } = {};
    const forget = (): void => {
      if (holder.promise !== undefined && this.sessions.get(key) === holder.promise) this.sessions.delete(key);
    };
    holder.promise = new Promise((resolve, reject) => {
      const session = http2.connect(`${scheme}://${host}:${endpoint.port}`, this.options.mode === 'h2' ? (this.options.tls ?? { rejectUnauthorized: false }) : {});
      const timer = setTimeout(() => session.destroy(new Error('connect timeout')), this.options.connectTimeoutMs);
      session.once('connect', () => {
        clearTimeout(timer);
        session.setTimeout(this.options.idleTimeoutMs, () => session.close());
        session.unref();
        resolve(session);
      });
      session.on('error', (err) => {
        clearTimeout(timer);
        forget();
        reject(new BackendConnectError(key, err));
      });
      session.once('goaway', forget);
      session.once('close', () => {
        clearTimeout(timer);
        forget();
        reject(new BackendConnectError(key, new Error('session closed')));
      });
    });
    return holder.promise;
  }

  /** openSessions counts pooled sessions — for tests and metrics. */
  openSessions(): number {
    return this.sessions.size;
  }

  /** close closes every pooled session gracefully. */
  close(): void {
    for (const p of this.sessions.values()) p.then((s) => s.close(), () => undefined);
    this.sessions.clear();
  }
}

/** Http2Call is one stream to a backend: its abort handle, and what reports to its receiver. */
class Http2Call implements UpstreamCall {
  private stream: ClientHttp2Stream | undefined = undefined;
  private reason: Error | undefined = undefined;
  private isReported = false;
  private trailerHeaders: HeaderMap | undefined = undefined;

  constructor(
    private readonly target: string,
    private readonly receiver: UpstreamReceiver,
  ) {}

  start(session: ClientHttp2Session, request: UpstreamRequest, scheme: string): void {
    if (this.reason !== undefined) return this.report(this.reason);
    const { host: _host, ...headers } = request.headers;
    let stream: ClientHttp2Stream;
    try {
      stream = session.request(
        { ...headers, ':method': request.method, ':path': request.path, ':authority': request.authority, ':scheme': scheme },
        { endStream: request.body === undefined },
      );
    } catch (err) {
      return this.report(err);
    }
    this.stream = stream;
    // 'error' stays: errors reach the consumer through the relay, and a late reset is not unhandled.
    stream.on('error', (err) => this.report(this.reason ?? new BackendConnectError(this.target, err)));
    stream.once('trailers', (t: IncomingHttpHeaders) => (this.trailerHeaders = withoutPseudo(t)));
    stream.once('response', (h: IncomingHttpHeaders & IncomingHttpStatusHeader, flags: number) => {
      if (this.isReported) return;
      this.isReported = true;
      this.receiver.onUpstreamResponse({
        isComplete: (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0,
        status: h[':status'] ?? 502,
        headers: withoutPseudo(h) as IncomingHttpHeaders,
        body: stream,
        mayHaveTrailers: true,
        trailers: () => this.trailerHeaders,
      });
    });
    // A stream that closes without a response (RST_STREAM with NO_ERROR) is a reset as well.
    stream.once('close', () => this.report(new BackendConnectError(this.target, new Error(`stream closed with code ${stream.rstCode ?? 0}`))));
    if (request.body) forwardBody(request.body, stream);
  }

  cancel(reason: Error): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    const stream = this.stream;
    if (stream === undefined || stream.destroyed) return; // not started yet: start() reports the reason
    // RST_STREAM CANCEL to the backend first; then the destroy with our reason makes the stream
    // (a response body, maybe) end in an error: Node ends a stream reset with CANCEL and no
    // error quietly, which would let a cut response look complete.
    stream.close(http2.constants.NGHTTP2_CANCEL);
    stream.destroy(reason);
  }

  /** noSession: the session could not be had; a call cancelled meanwhile reports its reason, as it would have */
  noSession(err: unknown): void {
    this.report(this.reason ?? err);
  }

  report(err: unknown): void {
    if (this.isReported) return;
    this.isReported = true;
    this.receiver.onUpstreamError(err);
  }
}

function withoutPseudo(headers: IncomingHttpHeaders): HeaderMap {
  const out: HeaderMap = {};
  for (const [k, v] of Object.entries(headers)) if (!k.startsWith(':') && v !== undefined) out[k] = v;
  return out;
}
