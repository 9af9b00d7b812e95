import type { BodyCapture } from './body-capture.js';
import { Recorder } from './recorder.js';
import type { ExchangeObserver } from '../dataplane/index.js';
import { RequestLog } from './request-log.js';
import type { ExchangeRecord } from './request-log.js';

/**
 * The inspector of an agent of several processes (docs/cli.md "Processes"): it listens on one
 * port, in process 0, so each other process records its exchanges in a log of its own and hands
 * each one, once finished, to process 0 (cluster IPC, as plain data), whose page then lists every
 * process's requests. An exchange of another process shows once it ended (a long-lived one, a
 * WebSocket, only then).
 */

/** SharedBody is a captured body as plain data: the kept bytes (base64), every byte's count, whether it ended. */
export interface SharedBody {
  data: string;
  size: number;
  isComplete: boolean;
}

/** SharedExchange is a finished exchange as plain data (what crosses from one process to another). */
export type SharedExchange = Pick<ExchangeRecord, 'method' | 'host' | 'path' | 'requestHeaders' | 'status' | 'responseHeaders' | 'context' | 'startedAt' | 'durationMs'> & {
  state: 'complete' | 'aborted';
  replayOf: string | null;
  requestBody: SharedBody;
  responseBody: SharedBody;
};

/** sharedExchangeOf is a finished record as plain data. */
export function sharedExchangeOf(record: ExchangeRecord): SharedExchange {
  const body = (c: BodyCapture): SharedBody => ({ data: c.bytes().toString('base64'), size: c.size, isComplete: c.isComplete });
  return {
    method: record.method,
    host: record.host,
    path: record.path,
    requestHeaders: record.requestHeaders,
    status: record.status,
    responseHeaders: record.responseHeaders,
    context: record.context,
    startedAt: record.startedAt,
    durationMs: record.durationMs,
    state: record.state === 'aborted' ? 'aborted' : 'complete',
    replayOf: record.replayOf ?? null,
    requestBody: body(record.requestBody),
    responseBody: body(record.responseBody),
  };
}

/** addSharedExchange adds another process's finished exchange to `log` (its own id and place; bodies cut to this log's limit). */
export function addSharedExchange(log: RequestLog, shared: SharedExchange): ExchangeRecord {
  const record = log.add({ method: shared.method, host: shared.host, path: shared.path, requestHeaders: shared.requestHeaders, context: shared.context, replayOf: shared.replayOf ?? undefined });
  const fill = (capture: BodyCapture, body: SharedBody): void => {
    capture.add(Buffer.from(body.data, 'base64'));
    // bytes seen but not kept count too
    capture.size = Math.max(capture.size, body.size);
    capture.isComplete = body.isComplete;
  };
  fill(record.requestBody, shared.requestBody);
  fill(record.responseBody, shared.responseBody);
  record.status = shared.status;
  record.responseHeaders = shared.responseHeaders;
  record.startedAt = shared.startedAt;
  record.durationMs = shared.durationMs;
  record.state = shared.state;
  log.touch();
  return record;
}

// a process's own log holds the exchanges in flight: more in flight than this and the oldest is
// dropped from the log, but still handed on when it ends (the recorder holds the record)
const IN_FLIGHT_KEPT = 256;

/** HandingLog is a RequestLog that hands each exchange on as it finishes. */
class HandingLog extends RequestLog {
  constructor(
    bodyLimit: number,
    private readonly hand: (exchange: SharedExchange) => void,
  ) {
    super(IN_FLIGHT_KEPT, bodyLimit);
  }

  override finish(record: ExchangeRecord, state: 'complete' | 'aborted'): void {
    super.finish(record, state);
    this.hand(sharedExchangeOf(record));
    // handed on: this process keeps none of it
    this.clearFinished();
  }
}

/** handingObserver is the data-plane observer of a process other than 0: it records as the inspector does and hands each finished exchange to `hand`. */
export function handingObserver(bodyLimit: number, hand: (exchange: SharedExchange) => void): ExchangeObserver {
  return new Recorder(new HandingLog(bodyLimit, hand));
}
