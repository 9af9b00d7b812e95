import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Where `/metrics` is served (it lists live bindings, hostnames among them,
 * and was open to anyone who could reach the tunnel listener). With `listen.metrics` it has its own
 * listener, meant for a private address, and the tunnel listener no longer serves it; without it, a
 * store-mode edge asks for an admin-scoped API key on the tunnel listener.
 */

/** MetricsAuthorizer decides whether a request to `/metrics` on the tunnel listener may read it. */
export type MetricsAuthorizer = (req: IncomingMessage) => Promise<boolean>;

const BEARER = /^Bearer ([^\s]+)$/;

/** adminKeyAuthorizer admits a request carrying an API key with the `admin` scope. */
export function adminKeyAuthorizer(authenticate: (token: string) => Promise<{ scopes: readonly string[] } | undefined>): MetricsAuthorizer {
  return async (req) => {
    const token = BEARER.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined) return false;
    const key = await authenticate(token);
    return key?.scopes.includes('admin') === true;
  };
}

/** sendMetrics writes the exposition text once it is rendered (prom-client renders asynchronously); 500 if rendering failed. */
export function sendMetrics(res: ServerResponse, text: Promise<string>): void {
  text.then(
    (body) => res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(body),
    (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${err.message}\n`),
  );
}

/** sendMetricsUnauthorized answers a `/metrics` request without an admin key. */
export function sendMetricsUnauthorized(res: ServerResponse): void {
  res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('an admin API key is required\n');
}

/** createMetricsServer is the `listen.metrics` listener: `GET /metrics` and `GET /healthz`, nothing else. */
export function createMetricsServer(render: () => Promise<string>, isClosing: () => boolean): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/metrics') return sendMetrics(res, render());
    if (req.method === 'GET' && path === '/healthz') {
      res.writeHead(isClosing() ? 503 : 200, { 'content-type': 'text/plain' }).end(isClosing() ? 'closing\n' : 'ok\n');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
}
