import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ControlBodyTooLargeError,
  ControlInvalidRequestError,
  ControlMethodNotAllowedError,
  ControlRateLimitedError,
  ControlUnauthorizedError,
  ControlUnsupportedMediaTypeError,
  toErrorBody,
} from '../../control-api/index.js';
import type { ControlAnswerError } from '../../control-api/index.js';

/** Reading JSON bodies within a size limit, and writing JSON answers and errors. */

/** checkDeclaredLength refuses a body whose Content-Length already exceeds the limit (before reading a byte). */
export function checkDeclaredLength(req: IncomingMessage, limit: number): void {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new ControlBodyTooLargeError(`request body exceeds ${limit} bytes`);
}

/** readJsonBody reads and parses a JSON body of at most `limit` bytes; an empty body is `{}`. */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  checkDeclaredLength(req, limit);
  const raw = await readLimited(req, limit);
  if (raw.length === 0) return {};
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) throw new ControlUnsupportedMediaTypeError('request body must be application/json');
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new ControlInvalidRequestError('request body is not valid JSON', 'body');
  }
}

/**
 * readLimited collects a body of at most `limit` bytes. A chunked body has no declared length, so
 * bytes are counted as they arrive; past the limit reading stops (the socket is not destroyed, so
 * the 413 can still be written, with `Connection: close`).
 */
function readLimited(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(new ControlBodyTooLargeError(`request body exceeds ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** sendJson writes a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** sendControlError writes a ControlAnswerError as `{error: {code, message, field?}}` with its status. */
export function sendControlError(res: ServerResponse, err: ControlAnswerError): void {
  const headers: Record<string, string> = {};
  // RFC 6750 §3: a 401 names the scheme; no error detail, so nothing helps a guesser.
  if (err instanceof ControlUnauthorizedError) headers['www-authenticate'] = 'Bearer realm="tuna"';
  // RFC 6585 §4: tell the client when to come back.
  if (err instanceof ControlRateLimitedError && err.retryAfterSeconds !== undefined) headers['retry-after'] = String(err.retryAfterSeconds);
  if (err instanceof ControlMethodNotAllowedError) headers['allow'] = err.allow.join(', ');
  // After 413 the rest of the body is not read: close the connection instead of draining it.
  if (err instanceof ControlBodyTooLargeError) headers['connection'] = 'close';
  sendJson(res, err.status, toErrorBody(err), headers);
}
