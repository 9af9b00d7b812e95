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
}

/**
 * pump copies `src` into `dst` with backpressure (pause on a full write, resume on 'drain'), ends
 * `dst` after `src` ends, and reports when `dst` finished. On an error or a premature close of
 * either side it destroys both, as pipeline does, so a reset tunnel stream truncates the public
 * response visibly instead of leaving it hanging.
 */
function pump(src: NodeJS.ReadableStream, dst: NodeJS.WritableStream, done: RelayDone): void {
  let isSettled = false;
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
  src.on('error', onError);
  dst.on('error', onError);
  src.on('data', onData);
  src.once('end', onEnd);
  src.once('close', onSrcClose);
  dst.on('drain', onDrain);
  dst.once('finish', onFinish);
  dst.once('close', onDstClose);
  // as pipe() does: a source paused on purpose (a raw socket waiting for the agent's 2xx) flows now.
  src.resume();
}
