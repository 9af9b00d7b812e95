/**
 * The upload client, run as its own process (Node strips the types; node: imports only): PUTs
 * `<bytes>` to `http://127.0.0.1:<port>/upload` from one reused 1 MiB buffer, honouring
 * backpressure, and prints `{"status":..,"received":..,"seconds":..}` — the seconds from the
 * request's start to the end of the backend's answer, which comes only after the last byte.
 *
 * Why not curl: curl 7.88's `-T` sends a file in 64 KiB pieces and reached about 60 MB/s straight
 * into the backend here (slower than through some proxies), and `--data-binary @file` cannot hold
 * 1 GiB in memory. Usage: node upload-client.ts <port> <bytes> [host]
 */
import { request } from 'node:http';

const [portText, bytesText, host] = process.argv.slice(2);
const port = Number(portText);
const total = Number(bytesText);
const chunk = Buffer.alloc(1 << 20, 'u');
const headers: Record<string, string> = { 'content-length': String(total), 'content-type': 'application/octet-stream' };
if (host) headers.host = host;

const started = performance.now();
const req = request({ host: '127.0.0.1', port, method: 'PUT', path: '/upload', headers, agent: false }, (res) => {
  const parts: Buffer[] = [];
  res.on('data', (b: Buffer) => parts.push(b));
  res.once('end', () => {
    const seconds = (performance.now() - started) / 1000;
    const received = Number(/"bytes":(\d+)/.exec(Buffer.concat(parts).toString('utf8'))?.[1] ?? -1);
    process.stdout.write(`${JSON.stringify({ status: res.statusCode, received, seconds })}\n`);
  });
});
req.once('error', (err) => {
  process.stderr.write(`upload: ${err.message}\n`);
  process.exitCode = 1;
});

let left = total;
const pump = (): void => {
  while (left > 0) {
    const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
    left -= piece.length;
    if (!req.write(piece)) {
      req.once('drain', pump);
      return;
    }
  }
  req.end();
};
pump();
