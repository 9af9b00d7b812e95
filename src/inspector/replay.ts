import http2 from 'node:http2';
import type { OutgoingHttpHeaders } from 'node:http2';
import { duplexPair } from 'node:stream';
import { CodedError } from '../model/index.js';
import type { TunnelStreamContext, TunnelStreamHandler } from '../wire/index.js';
import { replayRequestIdPrefix } from './recorder.js';
import type { ExchangeRecord } from './request-log.js';

/** ReplayError: a replay could not be sent or got no answer (the API answers 502 or 504). */
export class ReplayError extends CodedError {
  constructor(
    code: 'TUNA_INSPECTOR_REPLAY_FAILED' | 'TUNA_INSPECTOR_REPLAY_TIMEOUT',
    message: string,
    readonly httpStatus: number,
  ) {
    super(code, message);
  }
}

/** ReplayResult is the replay's response status and its stream's request id (its record is found by it). */
export interface ReplayResult {
  requestId: string;
  status: number;
}

// Connection-specific headers: HTTP/2 forbids them (RFC 9113 §8.2.2); a decrypted HTTP/1.1
// request may carry them. Host becomes :authority.
const notReplayed = new Set(['connection', 'proxy-connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'http2-settings', 'host']);

/** replayHeaders rebuilds the request's header block as the data plane first received it. */
export function replayHeaders(record: ExchangeRecord): OutgoingHttpHeaders {
  const scheme = record.requestHeaders[':scheme'];
  const out: OutgoingHttpHeaders = {
    ':method': record.method,
    ':path': record.path,
    ':authority': record.host,
    ':scheme': typeof scheme === 'string' ? scheme : 'http',
  };
  for (const [name, value] of Object.entries(record.requestHeaders)) {
    if (value === undefined || name.startsWith(':') || notReplayed.has(name)) continue;
    if (name === 'te' && value !== 'trailers') continue;
    out[name] = value;
  }
  return out;
}

let replays = 0;

/**
 * replayExchange sends a recorded request again through `handler` (the agent's data plane), as a
 * stream of an in-memory HTTP/2 connection carrying the original stream's context: it takes the
 * same route and filters to the backend as the original did, and the inspector records it like
 * any other. A request that arrived inside TLS terminated in the cluster is replayed as plain
 * HTTP/2 with `publicProtocol: https`. Resolves once the response headers arrive (the body goes
 * on into the record); `timeoutMs` bounds the wait.
 */
export function replayExchange(handler: TunnelStreamHandler, record: ExchangeRecord, timeoutMs: number): Promise<ReplayResult> {
  const requestId = `${replayRequestIdPrefix}${record.id}/${++replays}`;
  const publicProtocol = record.context.publicProtocol === 'tls' ? 'https' : record.context.publicProtocol;
  const context: TunnelStreamContext = { ...record.context, publicProtocol, requestId };
  const server = http2.createServer();
  server.on('stream', (stream, headers) => handler.handleStream(stream, headers, context));
  const [serverSide, clientSide] = duplexPair();
  server.emit('connection', serverSide);
  const session = http2.connect('http://inspector-replay.invalid', { createConnection: () => clientSide });
  session.on('error', () => undefined);
  const body = record.requestBody.bytes();
  return new Promise<ReplayResult>((resolve, reject) => {
    let isSettled = false;
    const settle = (outcome: { status: number } | ReplayError): void => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      if (outcome instanceof ReplayError) reject(outcome);
      else resolve({ requestId, status: outcome.status });
    };
    const timer = setTimeout(() => settle(new ReplayError('TUNA_INSPECTOR_REPLAY_TIMEOUT', `no response within ${timeoutMs} ms`, 504)), timeoutMs);
    const req = session.request(replayHeaders(record), { endStream: body.length === 0 });
    req.on('response', (headers) => settle({ status: Number(headers[':status']) }));
    req.on('error', (err) => settle(new ReplayError('TUNA_INSPECTOR_REPLAY_FAILED', `replay failed: ${err.message}`, 502)));
    req.on('close', () => {
      settle(new ReplayError('TUNA_INSPECTOR_REPLAY_FAILED', 'replay stream closed without a response', 502));
      session.close();
      server.close();
    });
    // The answer is recorded on the data plane's side; here it is only drained.
    req.resume();
    if (body.length > 0) req.end(body);
  });
}
