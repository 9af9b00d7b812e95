import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import type { Agent, IncomingHttpHeaders as Http1Headers, IncomingMessage } from 'node:http';
import { connect as connectH2 } from 'node:http2';
import { connect as connectTcp } from 'node:net';
import type { ClientHttp2Session, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import { hashTunnelKey, startEdge } from '../../src/edge/index.js';
import type { EdgeConfigFile, EdgeServer, EdgeServerOptions } from '../../src/edge/index.js';
import { SystemClock } from '../../src/tunnel/clock.js';
import { NetEdgeDialer } from '../../src/tunnel/dialer.js';
import type { EdgeEndpoint } from '../../src/tunnel/dialer.js';
import { TunnelSession } from '../../src/tunnel/session.js';
import type { TunnelSessionOptions } from '../../src/tunnel/session.js';
import type { TunnelStreamHandler } from '../../src/wire/stream-handler.js';

/** TestBinding is one binding of a test edge; a random key is minted for it. */
export interface TestBinding {
  id: string;
  kind: 'host' | 'tcp-port' | 'address';
  hostnames?: string[];
  port?: number;
  address?: string;
  ports?: { port: number; protocol: 'http' | 'https' | 'tls' | 'tcp' | 'udp' }[];
  tls?: 'edge' | 'terminate-in-cluster' | 'passthrough';
  /** tcp-port: open the port for TCP, UDP or both (default TCP) */
  transports?: ('tcp' | 'udp')[];
  maxConnections?: number;
}

/** TestEdge is a running edge with the clear-text keys of its bindings. */
export interface TestEdge {
  edge: EdgeServer;
  keys: Map<string, string>;
  config: EdgeConfigFile;
  endpoint: EdgeEndpoint;
  httpPort: number;
}

/** newTunnelKey returns a random tunnel key. */
export function newTunnelKey(): string {
  return `tuna_tk_${randomBytes(24).toString('base64url')}`;
}

/** testEdgeConfig builds an edge config on 127.0.0.1 with a key per binding. */
export function testEdgeConfig(bindings: TestBinding[], extra: Partial<EdgeConfigFile> = {}, keys = new Map<string, string>()): EdgeConfigFile {
  for (const b of bindings) if (!keys.has(b.id)) keys.set(b.id, newTunnelKey());
  return {
    listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } },
    bindings: bindings.map((b) => ({
      ...b,
      keys: [{ sha256: hashTunnelKey(keys.get(b.id)!), ...(b.maxConnections !== undefined ? { maxConnections: b.maxConnections } : {}) }],
    })),
    ...extra,
  };
}

/** startTestEdge starts an edge for the bindings (with `options`, e.g. an access log). */
export async function startTestEdge(bindings: TestBinding[], extra: Partial<EdgeConfigFile> = {}, options: Omit<EdgeServerOptions, 'config'> = {}): Promise<TestEdge> {
  const keys = new Map<string, string>();
  const config = testEdgeConfig(bindings, extra, keys);
  const edge = await startEdge(config, options);
  const addr = edge.address();
  return { edge, keys, config, endpoint: { host: '127.0.0.1', port: addr.tunnel.port, tls: false }, httpPort: addr.http?.port ?? 0 };
}

/** openSession connects one agent session for a binding of the test edge. */
export async function openSession(
  t: TestEdge,
  bindingId: string,
  handler: TunnelStreamHandler,
  extra: Partial<TunnelSessionOptions> = {},
): Promise<TunnelSession> {
  const session = new TunnelSession({
    edge: t.endpoint,
    bindingId,
    key: t.keys.get(bindingId) ?? 'none',
    dialer: new NetEdgeDialer(),
    clock: new SystemClock(),
    handler,
    ...extra,
  });
  await session.connect();
  await waitUntil(() => (t.edge.registry.count().get(bindingId) ?? 0) > 0);
  return session;
}

/** tcpEcho sends `text` on a TCP connection to 127.0.0.1:port, half-closes, and reads everything back. */
export async function tcpEcho(port: number, text: string): Promise<string> {
  const socket = connectTcp({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  socket.end(text);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

/** waitUntil polls a condition every 10 ms, failing after 5 s (a bounded loop). */
export async function waitUntil(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** HttpResult is a buffered HTTP response. */
export interface HttpResult {
  status: number;
  headers: Http1Headers;
  body: Buffer;
  trailers: Record<string, string | undefined>;
}

/** http1 sends one HTTP/1.1 request to 127.0.0.1:port and buffers the answer. */
export async function http1(
  port: number,
  host: string,
  path: string,
  options: { method?: string; body?: Buffer | string; agent?: Agent; headers?: Record<string, string>; localAddress?: string } = {},
): Promise<HttpResult> {
  const from = options.localAddress !== undefined ? { localAddress: options.localAddress } : {};
  const req = httpRequest({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: { host, ...options.headers }, agent: options.agent ?? false, ...from });
  req.end(options.body);
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), trailers: res.trailers };
}

/** h2Connect opens a prior-knowledge h2c client session to 127.0.0.1:port. */
export function h2Connect(port: number): ClientHttp2Session {
  const session = connectH2(`http://127.0.0.1:${port}`);
  session.on('error', () => {});
  return session;
}

/** H2Result is a buffered HTTP/2 response. */
export interface H2Result {
  headers: IncomingHttpHeaders;
  body: Buffer;
  trailers: IncomingHttpHeaders | undefined;
}

/** h2 sends one request on a session and buffers the answer. */
export async function h2(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body?: Buffer | string): Promise<H2Result> {
  const stream = session.request(headers, { endStream: body === undefined });
  if (body !== undefined) stream.end(body);
  let trailers: IncomingHttpHeaders | undefined;
  stream.on('trailers', (t: IncomingHttpHeaders) => (trailers = t));
  const [responseHeaders] = (await once(stream, 'response')) as [IncomingHttpHeaders];
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return { headers: responseHeaders, body: Buffer.concat(chunks), trailers };
}
