import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { AcmeTransportError } from './errors.js';

/**
 * The ACME client's HTTP transport. Node's global fetch cannot be given an extra trusted CA
 * without undici's dispatcher (not a dependency), and a test CA (pebble's) must be trusted for
 * this client only — never process-wide — so requests go through node:https with a `ca` option.
 */

/** AcmeHttpRequest is one request. */
export interface AcmeHttpRequest {
  method: 'GET' | 'HEAD' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

/** AcmeHttpResponse is one answer, body fully read. */
export interface AcmeHttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** AcmeTransport sends one request (fake in unit tests). */
export type AcmeTransport = (req: AcmeHttpRequest) => Promise<AcmeHttpResponse>;

/** HttpsTransportOptions tune the default transport. */
export interface HttpsTransportOptions {
  /** extra trusted roots (PEM) for the ACME server, e.g. pebble's test CA; the system roots otherwise */
  ca?: string | string[];
  timeoutMs?: number;
}

// Directory, order and certificate bodies are small; a chain is a few KiB.
const MAX_BODY_BYTES = 1 << 20;

/** createHttpsTransport returns a transport over node:https (node:http for http: URLs). */
export function createHttpsTransport(options: HttpsTransportOptions = {}): AcmeTransport {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return (req) =>
    new Promise((resolve, reject) => {
      const url = new URL(req.url);
      const headers: Record<string, string> = { 'user-agent': 'tuna-edge-acme', ...req.headers };
      if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
      const common = { method: req.method, headers, timeout: timeoutMs };
      const onResponse = (res: IncomingMessage): void => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) return void res.destroy(new AcmeTransportError(`answer from ${req.url} is larger than ${MAX_BODY_BYTES} bytes`));
          chunks.push(chunk);
        });
        res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.once('error', (err) => reject(err instanceof AcmeTransportError ? err : new AcmeTransportError(`reading ${req.url}: ${err.message}`, { cause: err })));
      };
      const outgoing =
        url.protocol === 'https:'
          ? httpsRequest(url, { ...common, ...(options.ca !== undefined ? { ca: options.ca } : {}) }, onResponse)
          : httpRequest(url, common, onResponse);
      outgoing.once('timeout', () => outgoing.destroy(new Error(`no answer in ${timeoutMs} ms`)));
      outgoing.once('error', (err) => reject(new AcmeTransportError(`${req.method} ${req.url}: ${err.message}`, { cause: err })));
      outgoing.end(req.body);
    });
}
