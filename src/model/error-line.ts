/**
 * One log line per failure. The Kubernetes client's ApiException carries the whole response in
 * its message (`HTTP-Code: 429\nMessage: …\nBody: {…}\nHeaders: {…}`): printed as is, every retry
 * while CRDs install is a screenful of headers. What an operator's log needs is the
 * status code and the API's reason.
 */

/** ApiFailure is the part of a Kubernetes API error that a log line shows. */
interface ApiFailure {
  code: number;
  reason?: string;
  message?: string;
}

const MAX_MESSAGE = 200;

/** errorLine describes an error in one line: an API error by its status code and reason, never its headers or body. */
export function errorLine(err: unknown): string {
  const api = apiFailureOf(err);
  if (api !== undefined) {
    const detail = api.message === undefined ? '' : `: ${oneLine(api.message)}`;
    return `HTTP ${api.code}${api.reason === undefined ? '' : ` ${api.reason}`}${detail}`;
  }
  if (err instanceof Error) return oneLine(err.message);
  return oneLine(String(err));
}

/** isAbortError tells an aborted request (our own stop aborts the watches) from a failure. */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || /operation was aborted/i.test(err.message));
}

/**
 * apiFailureOf reads an ApiException (`code`, `body`: a metav1.Status as text or object) or a
 * watch error (`statusCode`, message = status text).
 */
function apiFailureOf(err: unknown): ApiFailure | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown; message?: unknown };
  if (typeof e.code === 'number' && 'body' in e) {
    const status = statusOf(e.body);
    return { code: e.code, ...(status.reason ? { reason: status.reason } : {}), ...(status.message ? { message: status.message } : {}) };
  }
  if (typeof e.statusCode === 'number') return { code: e.statusCode, ...(typeof e.message === 'string' && e.message !== '' ? { reason: oneLine(e.message) } : {}) };
  return undefined;
}

/** statusOf picks `reason` and `message` from a metav1.Status body (or any JSON object); anything else yields nothing. */
function statusOf(body: unknown): { reason?: string; message?: string } {
  let value = body;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return {};
    }
  }
  if (value === null || typeof value !== 'object') return {};
  // A metav1.Status, or any JSON body with a message (a proxy in front of the API server).
  const s = value as { reason?: unknown; message?: unknown };
  return { ...(typeof s.reason === 'string' && s.reason !== '' ? { reason: s.reason } : {}), ...(typeof s.message === 'string' && s.message !== '' ? { message: s.message } : {}) };
}

function oneLine(text: string): string {
  const line = text.replace(/\s*\n\s*/g, ' ').trim();
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE - 1)}…` : line;
}
