import http from 'node:http';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { newKey, startCli } from './backend-cli.js';
import type { CliRun } from './backend-cli.js';
import { startHttpBackend } from './backend-servers.js';
import type { TestBackend } from './backend-servers.js';

/** Helpers for the request inspector's end-to-end tests: an edge, a backend and `tuna http` on loopback. */

/** SeenRequest is what the inspector test backend received, body included. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** InspectorRig is a running edge, a backend that records bodies, and `tuna http` with its inspector. */
export interface InspectorRig {
  edge: EdgeServer;
  backend: TestBackend;
  seen: SeenRequest[];
  run: CliRun;
  /** the edge's public HTTP port */
  httpPort: number;
  /** the inspector's page, `http://127.0.0.1:PORT/` (undefined when it is off) */
  inspectorUrl: string | undefined;
  close(): Promise<void>;
}

/**
 * startInspectorRig publishes a recording backend as `app.test` with `tuna http` and the extra
 * flags (by default `--inspect 127.0.0.1:0`). The backend answers `hello <path>` with a
 * Set-Cookie header after reading the whole body, and 404 to paths starting `/missing`.
 */
export async function startInspectorRig(extraFlags: string[] = ['--inspect', '127.0.0.1:0']): Promise<InspectorRig> {
  const { key, sha256 } = newKey();
  const seen: SeenRequest[] = [];
  const backend = await startHttpBackend('app', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      if ((req.url ?? '').startsWith('/missing')) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': 'session=backend-secret; HttpOnly' });
      res.end(`hello ${req.url ?? ''}\n`);
    });
  });
  const edge = await startEdge(
    decodeEdgeConfig({
      listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
      bindings: [{ id: 'binding/host/app.test', kind: 'host', hostnames: ['app.test'], keys: [{ sha256 }] }],
    }),
  );
  const a = edge.address();
  const run = startCli(['http', String(backend.port), '--host', 'app.test', '--edge', `tcp://127.0.0.1:${a.tunnel.port}`, ...extraFlags], { TUNA_KEY: key });
  await run.waitForOut('Forwarding app.test');
  const banner = run.out.find((l) => l.startsWith('Inspector: '));
  return {
    edge,
    backend,
    seen,
    run,
    httpPort: a.http!.port,
    inspectorUrl: banner === undefined ? undefined : /http:\/\/\S+\//.exec(banner)?.[0],
    async close() {
      run.stop();
      await run.exit.catch(() => 0);
      await edge.close();
      await backend.close();
    },
  };
}

/** sendVia sends one request to the edge's public port with a Host header, as curl would. */
export function sendVia(port: number, options: { method?: string; path: string; headers?: http.OutgoingHttpHeaders; body?: string }): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: { host: 'app.test', ...options.headers }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.once('error', reject);
    req.end(options.body);
  });
}

/** callInspector sends one request to the inspector's API and parses its JSON answer. */
export function callInspector(base: string, path: string, options: { method?: string; headers?: http.OutgoingHttpHeaders } = {}): Promise<{ status: number; json: unknown; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, base), { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = body;
        }
        resolve({ status: res.statusCode ?? 0, json, headers: res.headers });
      });
    });
    req.once('error', reject);
    req.end();
  });
}
