/**
 * relay: `stream.pipeline` for the tunnel's hot paths, minus its one synchronous throw and, for
 * the common two-stage case, minus its per-call cost.
 */
import { pipeline } from 'node:stream';
import { StreamGoneError } from './errors.js';

/** RelayStage is anything pipeline() accepts as a stage. */
export type RelayStage = NodeJS.ReadableStream | NodeJS.WritableStream | NodeJS.ReadWriteStream;

/** RelayDone is called once: null when every byte reached the destination, else why not. */
export type RelayDone = (err: Error | null | undefined) => void;

/**
 * relay pipes `stages` with backpressure and calls `done` once, like `stream.pipeline`, but never
 * throws. pipeline() throws ERR_STREAM_UNABLE_TO_PIPE synchronously when a later stage is already
 * closed or destroyed; on a relay that is an ordinary race (the public client left while the
 * tunnel's answer was queued, or the agent reset the stream first) and thrown from an event
 * handler it would take the whole process down. Here it ends in `done(StreamGoneError)` on the
 * next tick instead, and no stage is touched: the caller's `done` decides what to cancel.
 *
 * Two stages (every request and response body of the tunnel) go through `pump`, which does what
 * pipeline does for them without an AbortController, its DOMException and async-hooks bindings
 * per call: those were 7 % of the edge's CPU time at 1 KiB responses (docs/tunnel-performance.md).
 */
export function relay(stages: readonly [RelayStage, ...RelayStage[]], done: RelayDone): void {
  for (let i = 1; i < stages.length; i++) {
    const stage = stages[i] as { destroyed?: boolean; closed?: boolean };
    if (stage.destroyed === true || stage.closed === true) {
      process.nextTick(done, new StreamGoneError());
      return;
    }
  }
  if (stages.length === 2) pump(stages[0] as NodeJS.ReadableStream, stages[1] as NodeJS.WritableStream, done);
  else pipeline(stages as unknown as RelayStage[], done);
}

/** Destroyable is the part of a Node stream `pump` tears down on failure. */
interface Destroyable {
  destroy?(err?: Error): void;
  readableEnded?: boolean;
  writableFinished?: boolean;
  cork?(): void;
  uncork?(): void;
}

/**
 * pump copies `src` into `dst` with backpressure (pause on a full write, resume on 'drain'), ends
 * `dst` after `src` ends, and reports when `dst` finished. On an error or a premature close of
 * either side it destroys both, as pipeline does, so a reset tunnel stream truncates the public
 * response visibly instead of leaving it hanging.
 */
function pump(src: NodeJS.ReadableStream, dst: NodeJS.WritableStream, done: RelayDone): void {
  let isSettled = false;
  const coalesce = writeCoalescer(dst);
  const settle = (err: Error | null): void => {
    if (isSettled) return;
    isSettled = true;
    src.removeListener('data', onData);
    src.removeListener('end', onEnd);
    src.removeListener('close', onSrcClose);
    dst.removeListener('drain', onDrain);
    dst.removeListener('finish', onFinish);
    dst.removeListener('close', onDstClose);
    if (err !== null) {
      (src as Destroyable).destroy?.(err);
      (dst as Destroyable).destroy?.(err);
    }
    done(err);
  };
  const onData = (chunk: Buffer | string): void => {
    coalesce();
    if (!dst.write(chunk)) src.pause();
  };
  const onDrain = (): void => {
    src.resume();
  };
  const onEnd = (): void => {
    dst.end();
  };
  const onFinish = (): void => settle(null);
  const onError = (err: Error): void => settle(err);
  const onSrcClose = (): void => {
    if ((src as Destroyable).readableEnded !== true) settle(new StreamGoneError('the source closed before its end'));
  };
  const onDstClose = (): void => {
    if ((dst as Destroyable).writableFinished !== true) settle(new StreamGoneError('the destination closed before the relay finished'));
  };
  // 'error' listeners stay after settling: a late error must not become an uncaught exception.
  // `on`, not `once`: each of these events fires once anyway and settle() removes them all, and
  // `once` wraps every listener in two more objects per relay (docs/tunnel-performance.md §10).
  src.on('error', onError);
  dst.on('error', onError);
  src.on('data', onData);
  src.on('end', onEnd);
  src.on('close', onSrcClose);
  dst.on('drain', onDrain);
  dst.on('finish', onFinish);
  dst.on('close', onDstClose);
  // as pipe() does: a source paused on purpose (a raw socket waiting for the agent's 2xx) flows now.
  src.resume();
}

/**
 * writeCoalescer returns a function to call before each write to `dst`: the first call of a turn
 * of the event loop corks `dst` until the loop's check phase. nghttp2 sends DATA frames of 16 KiB
 * at most and each arrives as its own chunk (its own callback from C++, so nextTick would run
 * between them): written one by one that is a syscall per 16 KiB; corked, the frames one socket
 * read delivered leave in one writev (docs/tunnel-performance.md, attempt 3). An HTTP/1.1
 * message corks its socket: that socket itself is held, so the uncork reaches it even if the
 * message was detached from it meanwhile (keep-alive reuse).
 */
export function writeCoalescer(dst: NodeJS.WritableStream): () => void {
  let corked: Destroyable | undefined;
  const uncork = (): void => {
    corked?.uncork?.();
    corked = undefined;
  };
  return () => {
    if (corked !== undefined) return;
    corked = (dst as { socket?: Destroyable | null }).socket ?? (dst as Destroyable);
    corked.cork?.();
    setImmediate(uncork);
  };
}
