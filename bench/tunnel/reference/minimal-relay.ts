/**
 * REFERENCE, NOT PRODUCT CODE: the least a Node relay with tuna's four codecs can do, run by the
 * bench as a calibration row. Edge side: a public `http` server → one `http2` client
 * session over the TLS socket the agent side dialed. Agent side: that socket → `http2` server →
 * keep-alive `http` client → backend. No routing, filters, limits, timeouts, retries, abort
 * handling, authentication or reconnects: what tuna does beyond this is what it costs beyond it.
 *
 * Usage: node --import tsx minimal-relay.ts edge PUBLIC_PORT TUNNEL_PORT CERT_FILE KEY_FILE
 *        node --import tsx minimal-relay.ts agent TUNNEL_PORT BACKEND_PORT CA_FILE
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import tls from 'node:tls';

const host = '127.0.0.1';
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host', 'te', 'http2-settings']);
const settings = { initialWindowSize: 1 << 20, maxFrameSize: 1 << 16 };

/** edge serves public HTTP/1.1 and sends each request on the newest tunnel session. */
function edge(publicPort: number, tunnelPort: number, certFile: string, keyFile: string): void {
  let session: http2.ClientHttp2Session | undefined;
  tls
    .createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile), ALPNProtocols: ['h2'] }, (socket) => {
      const s = http2.connect('http://relay.invalid', { createConnection: () => socket, settings });
      s.once('connect', () => s.setLocalWindowSize(16 << 20));
      s.on('error', () => undefined);
      s.once('close', () => session === s && (session = undefined));
      session = s;
    })
    .listen(tunnelPort, host);
  http
    .createServer((req, res) => {
      if (session === undefined) return void res.writeHead(502).end();
      const headers: OutgoingHttpHeaders = { ':method': req.method, ':path': req.url, ':authority': req.headers.host ?? host };
      for (const name in req.headers) if (!hopByHop.has(name)) headers[name] = req.headers[name];
      const isBodyless = req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined;
      const stream = session.request(headers, { endStream: isBodyless });
      stream.on('error', () => res.destroy());
      stream.once('response', (h: IncomingHttpHeaders) => {
        const out: Record<string, string | string[]> = {};
        for (const name in h) if (name[0] !== ':' && h[name] !== undefined) out[name] = h[name];
        res.writeHead(Number(h[':status']), out);
        stream.pipe(res);
      });
      res.once('close', () => stream.destroy());
      if (!isBodyless) req.pipe(stream);
    })
    .listen(publicPort, host);
}

/** agent dials the edge and answers each tunnel stream from the backend. */
function agent(tunnelPort: number, backendPort: number, caFile: string): void {
  const pool = new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256, scheduling: 'lifo' });
  const server = http2.createServer({ settings });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    const out: Record<string, string | string[]> = {};
    for (const name in headers) if (name[0] !== ':' && headers[name] !== undefined) out[name] = headers[name];
    out.host = String(headers[':authority']);
    const req = http.request({ agent: pool, host, port: backendPort, method: String(headers[':method']), path: String(headers[':path']), headers: out, setHost: false }, (res) => {
      const h: OutgoingHttpHeaders = { ':status': res.statusCode };
      for (const name in res.headers) if (!hopByHop.has(name)) h[name] = res.headers[name];
      stream.respond(h);
      res.pipe(stream);
    });
    req.on('error', () => stream.destroy());
    stream.once('close', () => req.destroy());
    stream.pipe(req);
  });
  const socket = tls.connect({ host, port: tunnelPort, ca: readFileSync(caFile), ALPNProtocols: ['h2'] }, () => server.emit('connection', socket));
  socket.on('error', (err) => {
    console.error(`minimal relay agent: ${err.message}`);
    process.exit(1);
  });
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'edge' && args.length === 4) edge(Number(args[0]), Number(args[1]), args[2]!, args[3]!);
else if (mode === 'agent' && args.length === 3) agent(Number(args[0]), Number(args[1]), args[2]!);
else {
  console.error('usage: minimal-relay.ts edge PUBLIC_PORT TUNNEL_PORT CERT KEY | agent TUNNEL_PORT BACKEND_PORT CA');
  process.exit(2);
}
