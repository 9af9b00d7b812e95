import type { Readable, Writable } from 'node:stream';
import type { Downstream, ExchangeObserver } from '../dataplane/index.js';
import type { TunnelStreamContext } from '../wire/index.js';
import type { BodyCapture } from './body-capture.js';
import { headerPairs } from './redact.js';
import type { ExchangeRecord, RequestLog } from './request-log.js';

/** replayRequestIdPrefix marks the request id of a stream the inspector replays (`<prefix><original id>/<n>`). */
export const replayRequestIdPrefix = 'tuna-inspector-replay/';

/**
 * Recorder is the inspector's ExchangeObserver. It wraps the exchange's own callbacks in place —
 * `respond`, the response stream's `write`/`end`, the request body's `emit('data')` — so it sees
 * exactly what was received and sent without consuming the body, adding a stream stage or
 * changing backpressure. Only a data plane given a Recorder pays for any of it.
 */
export class Recorder implements ExchangeObserver {
  constructor(private readonly log: RequestLog) {}

  /** observe records one arriving exchange and follows it to its end. */
  observe(ds: Downstream, context: TunnelStreamContext): void {
    const record = this.log.add({
      method: ds.method,
      host: ds.authority,
      path: ds.target,
      requestHeaders: { ...ds.headers },
      context: { ...context },
      replayOf: replayOriginOf(context.requestId),
    });
    if (ds.hasBody) tapReadable(ds.body, record.requestBody, () => this.log.touch());
    else record.requestBody.isComplete = true;
    const respond = ds.respond;
    ds.respond = (status, headers, options) => {
      record.status = status;
      record.responseHeaders = headerPairs(headers);
      if (options?.endStream === true) record.responseBody.isComplete = true;
      this.log.touch();
      respond.call(ds, status, headers, options);
    };
    tapWritable(ds.out, record.responseBody);
    ds.onClose(() => this.finish(record, ds));
  }

  private finish(record: ExchangeRecord, ds: Downstream): void {
    const isComplete = record.status !== 0 && !ds.isAborted;
    if (isComplete) record.responseBody.isComplete = true;
    this.log.finish(record, isComplete ? 'complete' : 'aborted');
  }
}

/** replayOriginOf names the record a replayed stream repeats (its request id says so). */
function replayOriginOf(requestId: string): string | undefined {
  if (!requestId.startsWith(replayRequestIdPrefix)) return undefined;
  const rest = requestId.slice(replayRequestIdPrefix.length);
  const id = rest.slice(0, rest.lastIndexOf('/'));
  return id === '' ? undefined : id;
}

/** tapReadable counts and keeps what the body emits to whoever reads it (every reader's bytes pass 'data'). */
function tapReadable(body: Readable, capture: BodyCapture, onEnd: () => void): void {
  const emit = body.emit;
  const tapped = function (this: Readable, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'data') capture.add(args[0] as Buffer);
    else if (event === 'end') {
      capture.isComplete = true;
      onEnd();
    }
    return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
  };
  body.emit = tapped as typeof body.emit;
}

/** tapWritable counts and keeps what is written to the response stream. */
function tapWritable(out: Writable, capture: BodyCapture): void {
  const write = out.write;
  const end = out.end;
  out.write = function (this: Writable, chunk: unknown, ...rest: unknown[]): boolean {
    if (chunk !== null && chunk !== undefined && typeof chunk !== 'function') capture.add(chunk as Buffer);
    return write.apply(this, [chunk, ...rest] as Parameters<typeof write>);
  } as typeof out.write;
  out.end = function (this: Writable, chunk?: unknown, ...rest: unknown[]): Writable {
    if (chunk !== null && chunk !== undefined && typeof chunk !== 'function') capture.add(chunk as Buffer);
    return end.apply(this, [chunk, ...rest] as Parameters<typeof end>);
  } as typeof out.end;
}
