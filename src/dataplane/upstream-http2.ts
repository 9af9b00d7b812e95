import http2 from 'node:http2';
import type { ClientHttp2Session, IncomingHttpHeaders, IncomingHttpStatusHeader } from 'node:http2';
import type { Endpoint } from './endpoints.js';
import { BackendConnectError } from './errors.js';
import type { HeaderMap } from './headers.js';
import { forwardBody } from './upstream.js';
import type { UpstreamClient, UpstreamRequest, UpstreamResponse } from './upstream.js';

/** Http2ClientOptions configure the per-endpoint sessions. */
export interface Http2ClientOptions {
  /** 'h2c' speaks HTTP/2 with prior knowledge (RFC 9113 §3.3); 'h2' over TLS with ALPN */
  mode: 'h2c' | 'h2';
  /** a session idle this long is closed */
  idleTimeoutMs: number;
  connectTimeoutMs: number;
}

/**
 * Http2Client multiplexes requests to a backend over one HTTP/2 session per endpoint. A session
 * that fails, closes or receives GOAWAY leaves the pool at once; the next request dials anew.
 * For `h2`, the backend's certificate is not verified: in-cluster backends present certificates
 * from private CAs the agent cannot know, and the hop stays inside the cluster network (as
 * Contour and Envoy Gateway do without an explicit BackendTLSPolicy).
 */
export class Http2Client implements UpstreamClient {
  private readonly sessions = new Map<string, Promise<ClientHttp2Session>>();
  private readonly options: Http2ClientOptions;

  constructor(options: Partial<Http2ClientOptions> & Pick<Http2ClientOptions, 'mode'>) {
    this.options = { idleTimeoutMs: 60_000, connectTimeoutMs: 10_000, ...options };
  }

  /** send opens a stream on the endpoint's session. */
  async send(endpoint: Endpoint, request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamResponse> {
    const target = `${endpoint.address}:${endpoint.port}`;
    const session = await this.session(endpoint);
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const { host: _host, ...headers } = request.headers;
      const stream = session.request(
        {
          ...headers,
          ':method': request.method,
          ':path': request.path,
          ':authority': request.authority,
          ':scheme': this.options.mode === 'h2' ? 'https' : 'http',
        },
        { endStream: request.body === undefined, signal },
      );
      let trailers: HeaderMap | undefined;
      // Errors reach the consumer through pipeline; this keeps a late reset from being unhandled.
      stream.on('error', () => undefined);
      stream.once('trailers', (t: IncomingHttpHeaders) => (trailers = withoutPseudo(t)));
      stream.once('response', (h: IncomingHttpHeaders & IncomingHttpStatusHeader, flags: number) => {
        resolve({
          isComplete: (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0,
          status: h[':status'] ?? 502,
          headers: withoutPseudo(h) as IncomingHttpHeaders,
          body: stream,
          mayHaveTrailers: true,
          trailers: () => trailers,
        });
      });
      stream.on('error', (err) => reject(signal.aborted ? signal.reason : new BackendConnectError(target, err)));
      // A stream that closes without a response (RST_STREAM with NO_ERROR) is a reset as well.
      stream.once('close', () => reject(new BackendConnectError(target, new Error(`stream closed with code ${stream.rstCode ?? 0}`))));
      if (request.body) forwardBody(request.body, stream);
    });
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
      const session = http2.connect(`${scheme}://${host}:${endpoint.port}`, this.options.mode === 'h2' ? { rejectUnauthorized: false } : {});
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

function withoutPseudo(headers: IncomingHttpHeaders): HeaderMap {
  const out: HeaderMap = {};
  for (const [k, v] of Object.entries(headers)) if (!k.startsWith(':') && v !== undefined) out[k] = v;
  return out;
}
