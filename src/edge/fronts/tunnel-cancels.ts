import { constants as h2c } from 'node:http2';
import type { ClientHttp2Stream } from 'node:http2';
import type { EdgeTunnel } from '../tunnels/index.js';

// The agent's HTTP/2 server counts the RST_STREAM frames the edge sends on its tunnel (nghttp2's
// rapid-reset limiter, Node's defaults: a burst of 1,000, then 33 a second) and closes the whole
// tunnel beyond that. Public clients that go away make the edge cancel their streams, so a flood
// of resets spread over many public connections would reach the agent as a flood of cancels.
// The edge keeps each tunnel's cancels under half of that budget; past it, a cancel waits for the
// budget to refill (a stream whose request is complete mostly finishes first: its answer is read
// and dropped, and no cancel is sent). The agent never sees more cancels than it allows.
const CANCEL_BURST = 500;
const CANCELS_PER_SECOND = 15;

interface Bucket {
  tokens: number;
  at: number;
}

// one budget per connection: the bindings of a shared connection share the agent's limiter.
const buckets = new WeakMap<object, Bucket>();

/** cancelDelayMs takes one cancel from the tunnel's budget: 0 when it may be sent now, else how long until it may. */
function cancelDelayMs(tunnel: EdgeTunnel, now: number): number {
  const bucket = buckets.get(tunnel.connection) ?? { tokens: CANCEL_BURST, at: now };
  bucket.tokens = Math.min(CANCEL_BURST, bucket.tokens + ((now - bucket.at) * CANCELS_PER_SECOND) / 1000);
  bucket.at = now;
  bucket.tokens -= 1;
  buckets.set(tunnel.connection, bucket);
  return bucket.tokens >= 0 ? 0 : Math.ceil((-bucket.tokens * 1000) / CANCELS_PER_SECOND);
}

/**
 * cancelUpstream ends a tunnel stream whose public client went away: RST_STREAM(CANCEL) within
 * the tunnel's cancel budget; past it, once the budget allows, unless the stream ended first (a
 * stream with its request sent usually does: the agent answers). Whatever the stream holds or
 * still receives is read and dropped (see discardUnread). A stream whose answer never ends (an
 * event stream) is therefore reset late, never kept for good.
 */
export function cancelUpstream(tunnel: EdgeTunnel, upstream: ClientHttp2Stream): void {
  if (upstream.destroyed) return;
  discardUnread(upstream);
  if (upstream.closed) return;
  const delay = cancelDelayMs(tunnel, Date.now());
  if (delay === 0) return void upstream.close(h2c.NGHTTP2_CANCEL);
  const timer = setTimeout(() => {
    if (!upstream.closed) upstream.close(h2c.NGHTTP2_CANCEL);
  }, delay);
  timer.unref();
  upstream.once('close', () => clearTimeout(timer));
}

/**
 * discardUnread makes a tunnel stream nobody will read flow into nothing. Node frees a client
 * stream that closed cleanly only once its readable side has ended, i.e. been read: an answer
 * that arrived whole (END_STREAM) just as its public client left stayed buffered in a closed,
 * never-destroyed stream, and the tunnel connection counted it as in flight for good, so a
 * draining agent or edge waited out its drain timeout (`tuna http` took 30 s to stop
 * after a load run with 50-60 such streams on its connection).
 */
export function discardUnread(upstream: ClientHttp2Stream): void {
  if (!upstream.destroyed && upstream.readableFlowing !== true) upstream.resume();
}
