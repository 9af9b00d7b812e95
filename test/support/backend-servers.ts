import http from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Real backends on 127.0.0.1 port 0 for data-plane tests. */

/** RecordedRequest is what a test backend saw. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  remotePort: number;
}

/** TestBackend is a running backend. */
export interface TestBackend {
  port: number;
  requests: RecordedRequest[];
  server: http.Server;
  close(): Promise<void>;
}

/** EchoReply is the JSON body the echo backend answers with. */
export interface EchoReply {
  backend: string;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/**
 * startHttpBackend starts an HTTP/1.1 server. Without a handler it answers every request with a
 * JSON echo naming itself, after reading the whole body.
 */
export async function startHttpBackend(name: string, handler?: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestBackend> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, remotePort: req.socket.remotePort ?? 0 });
    if (handler) return handler(req, res);
    req.resume();
    req.once('end', () => {
      const reply: EchoReply = { backend: name, method: req.method ?? '', url: req.url ?? '', headers: req.headers };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(reply));
    });
  });
  return listen(server, requests);
}

/** listen starts any server on 127.0.0.1 port 0 and tracks its sockets so close() is prompt. */
export async function listen(server: http.Server, requests: RecordedRequest[] = []): Promise<TestBackend> {
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * startSlowPathBackend is a backend `name` that echoes method, url and headers as JSON, and answers
 * `/slow` only after `slowMs` (for a timeout to cut); the operator's policy tests share it.
 */
export function startSlowPathBackend(name: string, slowMs = 3000): Promise<TestBackend> {
  return startHttpBackend(name, (req, res) => {
    req.resume();
    const answer = (): void => void res.end(JSON.stringify({ backend: name, method: req.method ?? '', url: req.url ?? '', headers: req.headers }));
    if (req.url !== '/slow') return void req.once('end', answer);
    const timer = setTimeout(answer, slowMs);
    res.once('close', () => clearTimeout(timer));
  });
}
