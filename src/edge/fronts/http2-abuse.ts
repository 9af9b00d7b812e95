import { constants as h2c } from 'node:http2';
import type { ServerHttp2Session, ServerHttp2Stream } from 'node:http2';
import type { EdgeMetrics } from '../metrics/index.js';
import type { PublicConnectionLimits } from './connection-guard.js';

/** Why a public HTTP/2 connection was sent away, as counted in metrics. */
export type AbuseReason = 'rapid-reset' | 'ping-flood' | 'settings-flood' | 'invalid-frames';

/**
 * http2SessionOptions are the abuse limits Node's HTTP/2 server enforces itself on a public
 * connection, derived from the edge's budgets: nghttp2's own rapid-reset limiter
 * (streamResetBurst/streamResetRate, the CVE-2023-44487 mitigation of nghttp2 1.57) is a backstop
 * set well above the edge's own per-window count, so the edge's count answers first.
 */
export function http2SessionOptions(limits: PublicConnectionLimits): {
  maxSessionRejectedStreams: number;
  maxSessionInvalidFrames: number;
  maxSettings: number;
  maxOutstandingPings: number;
  streamResetBurst: number;
  streamResetRate: number;
} {
  return {
    // streams refused above SETTINGS_MAX_CONCURRENT_STREAMS before the session is closed (a stream flood)
    maxSessionRejectedStreams: 100,
    // invalid frames (malformed, or HEADERS refused above SETTINGS_MAX_CONCURRENT_STREAMS) before the session is closed
    maxSessionInvalidFrames: 100,
    // entries in one SETTINGS frame
    maxSettings: 32,
    // PINGs the edge sends and waits for (it sends none on public connections)
    maxOutstandingPings: 10,
    // nghttp2 counts inside one read of the socket, before the edge sees a single 'close': room for
    // a whole read of HEADERS+RST_STREAM pairs (64 KiB, ~1,400 pairs) so the edge's count answers.
    streamResetBurst: Math.max(5000, limits.http2MaxResets * 10),
    streamResetRate: Math.max(33, Math.ceil((limits.http2MaxResets * 10 * 1000) / limits.http2WindowMs)),
  };
}

/** A count of events in fixed windows: `hit()` is true when the budget of the current window is spent. */
class WindowCount {
  readonly #budget: number;
  readonly #windowMs: number;
  #start = 0;
  #count = 0;

  constructor(budget: number, windowMs: number) {
    this.#budget = budget;
    this.#windowMs = windowMs;
  }

  hit(now: number): boolean {
    if (now - this.#start >= this.#windowMs) {
      this.#start = now;
      this.#count = 0;
    }
    return ++this.#count > this.#budget;
  }
}

/** AbuseWatch is the abuse count of one public HTTP/2 connection. */
export interface AbuseWatch {
  /** watch counts the stream's reset, if it ends in one */
  watch(stream: ServerHttp2Stream): void;
  /** isResetting is true when a stream of this connection was reset within the window */
  isResetting(): boolean;
}

/**
 * watchHttp2Abuse counts, on one public HTTP/2 connection, the streams the client resets (or
 * that end in a reset before their answer), the PING and the SETTINGS frames it sends, each per
 * window; over a budget the connection alone gets GOAWAY(ENHANCE_YOUR_CALM) and is closed. The
 * tunnel and every other client are untouched.
 */
export function watchHttp2Abuse(session: ServerHttp2Session, limits: PublicConnectionLimits, metrics: EdgeMetrics): AbuseWatch {
  const resets = new WindowCount(limits.http2MaxResets, limits.http2WindowMs);
  const pings = new WindowCount(limits.http2MaxPings, limits.http2WindowMs);
  const settings = new WindowCount(limits.http2MaxSettings, limits.http2WindowMs);
  let isSentAway = false;
  let lastResetAt = -Infinity;
  const sendAway = (reason: AbuseReason): void => {
    if (isSentAway || session.destroyed) return;
    isSentAway = true;
    metrics.countPublicGoaway(reason);
    // RFC 9113 §5.4.1: GOAWAY with the code, then close; §7: ENHANCE_YOUR_CALM for excessive load.
    // (an error with the code: destroy(undefined, code) would send NO_ERROR)
    session.destroy(new Error(`public HTTP/2 client sent away: ${reason}`), h2c.NGHTTP2_ENHANCE_YOUR_CALM);
  };
  // Node closes the session itself (GOAWAY INTERNAL_ERROR) past maxSessionInvalidFrames; streams
  // refused above SETTINGS_MAX_CONCURRENT_STREAMS count as invalid frames (a stream flood).
  session.on('error', (err: Error & { code?: string }) => {
    if (err.code === 'ERR_HTTP2_TOO_MANY_INVALID_FRAMES') metrics.countPublicGoaway('invalid-frames');
  });
  session.on('ping', () => {
    if (pings.hit(Date.now())) sendAway('ping-flood');
  });
  session.on('remoteSettings', () => {
    if (settings.hit(Date.now())) sendAway('settings-flood');
  });
  return {
    watch: (stream) => {
      stream.once('close', () => {
        if (stream.rstCode === undefined || stream.rstCode === h2c.NGHTTP2_NO_ERROR) return;
        lastResetAt = Date.now();
        if (resets.hit(lastResetAt)) sendAway('rapid-reset');
      });
    },
    isResetting: () => Date.now() - lastResetAt < limits.http2WindowMs,
  };
}
