/**
 * The benchmark backend, run as its own process (Node strips the types; it imports only node:
 * modules) so the load generators and the orchestrator never share its event loop. Every contender
 * talks to this one server, HTTP/1.1 with keep-alive, on 127.0.0.1:
 *
 *   GET /1k            1,024 bytes (the requests/s and latency figures)
 *   GET /bytes/<n>     n bytes streamed from a 256 KiB buffer with backpressure (download)
 *   PUT|POST /upload   drains the body and answers `{"bytes":n}` only after its last byte (upload)
 *   GET /healthz       `ok`
 *
 * It prints `{"port":N}` on stdout once listening on an ephemeral port (no free-port race).
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';

const oneKiB = Buffer.alloc(1024, 'x');
const chunk = Buffer.alloc(256 * 1024, 'y');
const maxBytes = 64 * 2 ** 30;

function streamBytes(res: ServerResponse, total: number): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
  let left = total;
  const pump = (): void => {
    while (left > 0) {
      const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= piece.length;
      if (!res.write(piece)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  res.once('close', () => {
    left = 0;
  });
  pump();
}

function drainUpload(req: IncomingMessage, res: ServerResponse): void {
  let bytes = 0;
  req.on('data', (b: Buffer) => {
    bytes += b.length;
  });
  req.once('end', () => {
    const body = JSON.stringify({ bytes });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  });
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  if (url === '/1k') {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1024' });
    res.end(oneKiB);
    return;
  }
  if (url.startsWith('/bytes/')) {
    const n = Number(url.slice('/bytes/'.length));
    if (Number.isSafeInteger(n) && n >= 0 && n <= maxBytes) return streamBytes(res, n);
  } else if (url === '/upload' && (req.method === 'PUT' || req.method === 'POST')) {
    return drainUpload(req, res);
  } else if (url === '/healthz') {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
    return;
  }
  req.resume();
  res.writeHead(404, { 'content-type': 'text/plain', 'content-length': '10' });
  res.end('not found\n');
}

// Keep-alive longer than any measurement, and no request timeout: a 1 GiB upload through a slow
// tunnel must not be cut by the server (Node's default requestTimeout is 300 s).
const server = createServer({ keepAliveTimeout: 120_000, requestTimeout: 0, headersTimeout: 60_000 }, handle);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
