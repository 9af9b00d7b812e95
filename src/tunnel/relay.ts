/**
 * relay: `stream.pipeline` for the tunnel's hot paths, minus its one synchronous throw.
 */
import { pipeline } from 'node:stream';
import { StreamGoneError } from './errors.js';

/** RelayStage is anything pipeline() accepts as a stage. */
export type RelayStage = NodeJS.ReadableStream | NodeJS.WritableStream | NodeJS.ReadWriteStream;

/**
 * relay pipes `stages` with backpressure and calls `done` once, like `stream.pipeline`, but never
 * throws. pipeline() throws ERR_STREAM_UNABLE_TO_PIPE synchronously when a later stage is already
 * closed or destroyed; on a relay that is an ordinary race (the public client left while the
 * tunnel's answer was queued, or the agent reset the stream first) and thrown from an event
 * handler it would take the whole process down. Here it ends in `done(StreamGoneError)` on the
 * next tick instead, and no stage is touched: the caller's `done` decides what to cancel.
 */
export function relay(stages: readonly [RelayStage, ...RelayStage[]], done: (err: Error | null | undefined) => void): void {
  for (let i = 1; i < stages.length; i++) {
    const stage = stages[i] as { destroyed?: boolean; closed?: boolean };
    if (stage.destroyed === true || stage.closed === true) {
      process.nextTick(done, new StreamGoneError());
      return;
    }
  }
  pipeline(stages as unknown as RelayStage[], done);
}
