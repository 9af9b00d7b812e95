import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OperatorHealth } from './health.js';

/** HealthServer is the operator's probe and metrics listener. */
export interface HealthServer {
  /** the address it listens on (a port 0 given is the port picked) */
  address: AddressInfo;
  close(): Promise<void>;
}

/** METRICS_CONTENT_TYPE is the Prometheus text exposition format's media type. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * startHealthServer serves, over plain HTTP/1.1 on `host:port` (host absent: every interface):
 * GET /healthz — 200 while the process answers (the liveness probe); GET /readyz — 200 when
 * `health.readiness()` is ready, else 503 with one reason a line (the readiness probe);
 * GET /metrics — the Prometheus exposition (prom-client's, `health.metrics()`). Anything else is 404, a method other than GET or HEAD
 * 405. Nothing here reads a request body or changes state, so it needs no authentication.
 */
export async function startHealthServer(health: OperatorHealth, port: number, host?: string): Promise<HealthServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (path !== '/healthz' && path !== '/readyz' && path !== '/metrics') return answer(404, 'not found: /healthz, /readyz and /metrics are served here\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return answer(405, `${req.method ?? ''} is not allowed; use GET\n`);
    }
    if (path === '/healthz') return answer(200, 'ok\n');
    if (path === '/metrics') {
      health.metrics().then(
        (text) => answer(200, text, METRICS_CONTENT_TYPE),
        (err: Error) => answer(500, `metrics failed: ${err.message}\n`),
      );
      return;
    }
    const readiness = health.readiness();
    return readiness.isReady ? answer(200, 'ready\n') : answer(503, `not ready:\n${readiness.reasons.map((r) => `- ${r}\n`).join('')}`);
  });
  // probes are short: do not let an idle keep-alive connection hold the server open at shutdown
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    address: server.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
