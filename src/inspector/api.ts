import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { inspectorPage, inspectorScript } from './page.js';
import { ReplayError } from './replay.js';
import type { ReplayResult } from './replay.js';
import { describe, summarize, whyNotReplayable } from './request-log.js';
import type { ExchangeRecord, LogFilter, RequestLog } from './request-log.js';

/** ApiDeps are what the inspector's HTTP API serves from. */
export interface ApiDeps {
  log: RequestLog;
  showSecrets: boolean;
  /** replay sends a record again; rejects with ReplayError */
  replay(record: ExchangeRecord): Promise<ReplayResult>;
}

// The page may load only itself: captured requests are attacker-written text, rendered with
// textContent only, and this keeps any injected markup from running or fetching (no CDN either).
const pageHeaders = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
};

/**
 * handleApiRequest serves the page and the JSON API (docs/inspector.md). Only loopback Host names
 * are answered (a DNS-rebinding page would send its own name), and a request with a foreign
 * Origin or a cross-site Sec-Fetch-Site may not change anything (no CSRF replay from a web page).
 */
export async function handleApiRequest(deps: ApiDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!isLoopbackHost(req.headers.host)) return sendJson(res, 403, { error: 'the inspector answers only to a loopback Host (127.0.0.1, [::1] or localhost)' });
  const url = new URL(req.url ?? '/', 'http://inspector.invalid');
  const method = req.method ?? 'GET';
  const isRead = method === 'GET' || method === 'HEAD';
  if (!isRead && !isSameOrigin(req)) return sendJson(res, 403, { error: 'cross-origin requests may not change the inspector' });
  const path = url.pathname;
  if (path === '/' || path === '/index.html') return isRead ? sendText(res, 200, 'text/html; charset=utf-8', inspectorPage) : notAllowed(res, 'GET');
  if (path === '/inspector.js') return isRead ? sendText(res, 200, 'text/javascript; charset=utf-8', inspectorScript) : notAllowed(res, 'GET');
  if (path === '/api/requests') {
    if (isRead) return sendJson(res, 200, listBody(deps, filterOf(url.searchParams)));
    if (method === 'DELETE') return (deps.log.clear(), sendJson(res, 200, { version: deps.log.version }));
    return notAllowed(res, 'GET, DELETE');
  }
  const one = /^\/api\/requests\/([A-Za-z0-9]+)(\/replay)?$/.exec(path);
  if (!one) return sendJson(res, 404, { error: `no such resource: ${path}` });
  const record = deps.log.get(one[1]!);
  if (record === undefined) return sendJson(res, 404, { error: `no request ${one[1]!} (the inspector keeps the last ${deps.log.capacity})` });
  if (one[2] === undefined) return isRead ? sendJson(res, 200, describe(record, deps.showSecrets)) : notAllowed(res, 'GET');
  if (method !== 'POST') return notAllowed(res, 'POST');
  const reason = whyNotReplayable(record);
  if (reason !== null) return sendJson(res, 409, { error: `request ${record.id} cannot be replayed: ${reason}` });
  try {
    const result = await deps.replay(record);
    const replayed = deps.log.findByRequestId(result.requestId);
    sendJson(res, 200, { id: replayed?.id ?? null, replayOf: record.id, status: result.status });
  } catch (err) {
    if (!(err instanceof ReplayError)) throw err;
    sendJson(res, err.httpStatus, { error: err.message, code: err.code });
  }
}

function listBody(deps: ApiDeps, filter: LogFilter): object {
  const { log } = deps;
  return { version: log.version, capacity: log.capacity, bodyLimit: log.bodyLimit, showSecrets: deps.showSecrets, total: log.size, requests: log.list(filter).map(summarize) };
}

function filterOf(params: URLSearchParams): LogFilter {
  const filter: LogFilter = {};
  for (const key of ['q', 'method', 'status'] as const) {
    const v = params.get(key);
    if (v !== null && v !== '') filter[key] = v;
  }
  return filter;
}

/** isLoopbackHost accepts `localhost`, `*.localhost` and loopback IP literals, with or without a port. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:]+)(?::\d{1,5})?$/.exec(host);
  if (!m) return false;
  const name = m[1]!.replace(/^\[|\]$/g, '').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  return isIP(name) === 6 && (name === '::1' || name === '0:0:0:0:0:0:0:1');
}

/** isSameOrigin refuses a browser request sent from another site; a client without Origin (curl) passes. */
function isSameOrigin(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.headers.origin;
  return origin === undefined || origin === `http://${req.headers.host ?? ''}`;
}

function notAllowed(res: ServerResponse, allow: string): void {
  res.setHeader('allow', allow);
  sendJson(res, 405, { error: `method not allowed; allowed: ${allow}` });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const payload = Buffer.from(`${JSON.stringify(body)}\n`);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': payload.length, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(res.req.method === 'HEAD' ? undefined : payload);
}

function sendText(res: ServerResponse, status: number, type: string, body: string): void {
  const payload = Buffer.from(body);
  res.writeHead(status, { ...pageHeaders, 'content-type': type, 'content-length': payload.length });
  res.end(res.req.method === 'HEAD' ? undefined : payload);
}
