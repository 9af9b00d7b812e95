// log-server.ts — the kubelet API port, serving container logs to the apiserver.
//
// The apiserver answers `GET pods/{name}/log` by calling the node's kubelet at
// /containerLogs/{namespace}/{pod}/{container} with its kubelet client certificate
// (--kubelet-client-certificate); we serve HTTPS with a certificate the apiserver checks against
// --kubelet-certificate-authority, and require a client certificate from the same CA.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

/** LogLocator finds the log file of a container, or undefined when there is none. */
export type LogLocator = (namespace: string, pod: string, container: string | undefined) => string | undefined;

/** LogServerOptions are the TLS material and the address to listen on. */
export interface LogServerOptions {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly clientCa: Buffer;
  readonly host: string;
  readonly port: number;
}

const FOLLOW_POLL_MS = 250;
const FOLLOW_LIMIT_MS = 10 * 60_000;

/** tailLines returns the last n lines of text (all of it when n is undefined). */
export function tailLines(text: string, n: number | undefined): string {
  if (n === undefined) return text;
  const lines = text.split('\n');
  const trailing = lines.at(-1) === '' ? lines.pop() : undefined;
  return lines.slice(Math.max(0, lines.length - n)).join('\n') + (trailing === '' && n > 0 ? '\n' : '');
}

/** startLogServer listens and resolves with the server once it is accepting connections. */
export async function startLogServer(options: LogServerOptions, locate: LogLocator): Promise<https.Server> {
  const server = https.createServer(
    { cert: options.cert, key: options.key, ca: options.clientCa, requestCert: true, rejectUnauthorized: true },
    (request, response) => {
      const url = new URL(request.url ?? '/', 'https://kubelet.invalid');
      if (url.pathname === '/healthz') {
        response.end('ok');
        return;
      }
      const match = /^\/containerLogs\/([^/]+)\/([^/]+)(?:\/([^/]+))?$/.exec(url.pathname);
      const file = match ? locate(decodeURIComponent(match[1] ?? ''), decodeURIComponent(match[2] ?? ''), match[3]) : undefined;
      if (request.method !== 'GET' || !file || !existsSync(file)) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('container log not found\n');
        return;
      }
      void serveLog(file, url.searchParams, request.socket.destroyed ? undefined : response);
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return server;
}

/** logServerPort is the port a started log server listens on. */
export function logServerPort(server: https.Server): number {
  return (server.address() as AddressInfo).port;
}

async function serveLog(file: string, query: URLSearchParams, response: ServerResponse | undefined): Promise<void> {
  if (!response) return;
  const lines = query.has('tailLines') ? Number(query.get('tailLines')) : undefined;
  const limit = query.has('limitBytes') ? Number(query.get('limitBytes')) : undefined;
  let text = tailLines(await readFile(file, 'utf8'), lines);
  if (limit !== undefined) text = text.slice(0, limit);
  response.writeHead(200, { 'content-type': 'text/plain' });
  response.write(text);
  if (query.get('follow') !== 'true') {
    response.end();
    return;
  }
  // follow: stream what is appended, until the client goes away or the file does (pod deleted).
  let offset = statSync(file).size;
  const started = Date.now();
  const timer = setInterval(() => {
    if (!existsSync(file) || response.destroyed || Date.now() - started > FOLLOW_LIMIT_MS) {
      clearInterval(timer);
      response.end();
      return;
    }
    const size = statSync(file).size;
    if (size > offset) {
      createReadStream(file, { start: offset, end: size - 1 }).pipe(response, { end: false });
      offset = size;
    }
  }, FOLLOW_POLL_MS);
  response.once('close', () => clearInterval(timer));
}
