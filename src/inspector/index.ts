/** The request inspector: captures what the data plane serves, shows it on a loopback page, replays it. */
export { Inspector, InspectorListenError } from './inspector.js';
export type { InspectorOptions } from './inspector.js';
export { Recorder, replayRequestIdPrefix } from './recorder.js';
export { RequestLog, describe, matchesFilter, summarize, whyNotReplayable } from './request-log.js';
export type { ExchangeDetail, ExchangeRecord, ExchangeState, ExchangeSummary, LogFilter } from './request-log.js';
export { BodyCapture, viewBody } from './body-capture.js';
export type { BodyView } from './body-capture.js';
export { headerPairs, redactHeaders, redactedValue, secretHeaders } from './redact.js';
export type { HeaderPair } from './redact.js';
export { ReplayError, replayExchange, replayHeaders } from './replay.js';
export { isLoopbackHost } from './api.js';
export { addSharedExchange, handingObserver, sharedExchangeOf } from './shared-log.js';
export type { SharedBody, SharedExchange } from './shared-log.js';
