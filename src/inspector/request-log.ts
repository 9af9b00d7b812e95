import type { TunnelStreamContext } from '../wire/index.js';
import { BodyCapture, viewBody } from './body-capture.js';
import type { BodyView } from './body-capture.js';
import { headerPairs, redactHeaders } from './redact.js';
import type { HeaderPair, HeaderSource } from './redact.js';

/** ExchangeState is where an exchange is: still running, finished, or cut (reset, client gone). */
export type ExchangeState = 'pending' | 'complete' | 'aborted';

/** ExchangeRecord is one captured exchange, as the agent saw it (secrets unredacted: kept for replay). */
export interface ExchangeRecord {
  id: string;
  seq: number;
  /** wall clock at arrival (ms since the epoch) */
  startedAt: number;
  /** monotonic clock at arrival, for the duration */
  startedMono: number;
  method: string;
  host: string;
  /** path and query as the client sent them */
  path: string;
  requestHeaders: HeaderSource;
  requestBody: BodyCapture;
  /** 0 until a response was sent */
  status: number;
  responseHeaders: HeaderPair[] | undefined;
  responseBody: BodyCapture;
  durationMs: number | undefined;
  state: ExchangeState;
  context: TunnelStreamContext;
  /** the id of the exchange this one replays */
  replayOf: string | undefined;
}

/** ExchangeSummary is a record's line in the list (GET /api/requests). */
export interface ExchangeSummary {
  id: string;
  seq: number;
  startedAt: string;
  method: string;
  host: string;
  path: string;
  status: number;
  durationMs: number | null;
  requestBytes: number;
  responseBytes: number;
  state: ExchangeState;
  clientAddress: string;
  bindingId: string;
  replayOf: string | null;
}

/** ExchangeDetail is one record in full (GET /api/requests/ID), secrets redacted unless asked. */
export interface ExchangeDetail extends ExchangeSummary {
  request: { headers: HeaderPair[]; body: BodyView };
  response: { status: number; headers: HeaderPair[]; body: BodyView } | null;
  /** why the request cannot be replayed; null when it can */
  notReplayable: string | null;
}

/** LogFilter narrows the list: a text search, a method, a status class (`4xx`) or a state. */
export interface LogFilter {
  q?: string;
  method?: string;
  status?: string;
}

/** NewExchange is what is known of an exchange when it arrives. */
export type NewExchange = Pick<ExchangeRecord, 'method' | 'host' | 'path' | 'requestHeaders' | 'context' | 'replayOf'>;

/**
 * RequestLog holds the last `capacity` exchanges, oldest dropped first, each body kept up to
 * `bodyLimit` bytes: the inspector's memory is bounded by capacity × (headers + 2 × bodyLimit).
 * `version` grows on every change, so a poller can tell whether anything changed.
 */
export class RequestLog {
  private records: ExchangeRecord[] = [];
  private nextSeq = 1;
  version = 0;

  constructor(
    readonly capacity: number,
    readonly bodyLimit: number,
    private readonly now: () => number = Date.now,
    private readonly mono: () => number = () => performance.now(),
  ) {}

  /** add records an arriving exchange. */
  add(fields: NewExchange): ExchangeRecord {
    const seq = this.nextSeq++;
    const record: ExchangeRecord = {
      ...fields,
      id: `r${seq}`,
      seq,
      startedAt: this.now(),
      startedMono: this.mono(),
      requestBody: new BodyCapture(this.bodyLimit),
      status: 0,
      responseHeaders: undefined,
      responseBody: new BodyCapture(this.bodyLimit),
      durationMs: undefined,
      state: 'pending',
    };
    this.records.push(record);
    if (this.records.length > this.capacity) this.records.shift();
    this.version++;
    return record;
  }

  /** finish ends an exchange: its duration and whether it completed. */
  finish(record: ExchangeRecord, state: Exclude<ExchangeState, 'pending'>): void {
    record.durationMs = Math.max(0, this.mono() - record.startedMono);
    record.state = state;
    this.version++;
  }

  /** touch notes a change to a record (its response, its body's end). */
  touch(): void {
    this.version++;
  }

  /** get finds a record by id. */
  get(id: string): ExchangeRecord | undefined {
    return this.records.find((r) => r.id === id);
  }

  /** findByRequestId finds the record of an exchange by the request id of its stream. */
  findByRequestId(requestId: string): ExchangeRecord | undefined {
    return this.records.find((r) => r.context.requestId === requestId);
  }

  /** list returns the records that pass the filter, newest first. */
  list(filter: LogFilter = {}): ExchangeRecord[] {
    const out: ExchangeRecord[] = [];
    for (let i = this.records.length - 1; i >= 0; i--) if (matchesFilter(this.records[i]!, filter)) out.push(this.records[i]!);
    return out;
  }

  /** size is the number of records held. */
  get size(): number {
    return this.records.length;
  }

  /** clearFinished drops every record that is no longer pending. */
  clearFinished(): void {
    this.records = this.records.filter((r) => r.state === 'pending');
  }

  /** clear drops every record. */
  clear(): void {
    this.records = [];
    this.version++;
  }
}

/** matchesFilter tells whether a record passes a filter (case-insensitive search of method, host, path and status). */
export function matchesFilter(record: ExchangeRecord, filter: LogFilter): boolean {
  if (filter.method !== undefined && filter.method !== '' && record.method.toUpperCase() !== filter.method.toUpperCase()) return false;
  if (filter.status !== undefined && filter.status !== '' && !matchesStatus(record, filter.status)) return false;
  const q = filter.q?.trim().toLowerCase();
  if (q === undefined || q === '') return true;
  return `${record.method} ${record.host}${record.path} ${record.status === 0 ? '' : record.status}`.toLowerCase().includes(q);
}

function matchesStatus(record: ExchangeRecord, status: string): boolean {
  if (status === 'pending' || status === 'aborted') return record.state === status;
  const m = /^([1-5])xx$/.exec(status);
  if (m) return record.status !== 0 && Math.floor(record.status / 100) === Number(m[1]);
  return String(record.status) === status;
}

/** summarize is a record's list line. */
export function summarize(r: ExchangeRecord): ExchangeSummary {
  return {
    id: r.id,
    seq: r.seq,
    startedAt: new Date(r.startedAt).toISOString(),
    method: r.method,
    host: r.host,
    path: r.path,
    status: r.status,
    durationMs: r.durationMs === undefined ? null : Math.round(r.durationMs * 10) / 10,
    requestBytes: r.requestBody.size,
    responseBytes: r.responseBody.size,
    state: r.state,
    clientAddress: r.context.clientAddress,
    bindingId: r.context.bindingId,
    replayOf: r.replayOf ?? null,
  };
}

/** describe is a record in full, secret headers redacted unless `showSecrets`. */
export function describe(r: ExchangeRecord, showSecrets: boolean): ExchangeDetail {
  return {
    ...summarize(r),
    request: { headers: redactHeaders(headerPairs(r.requestHeaders), showSecrets), body: viewBody(r.requestBody) },
    response: r.responseHeaders === undefined ? null : { status: r.status, headers: redactHeaders(r.responseHeaders, showSecrets), body: viewBody(r.responseBody) },
    notReplayable: whyNotReplayable(r),
  };
}

/** whyNotReplayable says why a record cannot be replayed as it arrived, or undefined when it can. */
export function whyNotReplayable(r: ExchangeRecord): string | null {
  if (!r.requestBody.isComplete) return 'the request body has not fully arrived';
  if (r.requestBody.isTruncated) return `the request body (${r.requestBody.size} bytes) is larger than the capture limit of ${r.requestBody.bytes().length} bytes`;
  return null;
}
