import http2 from 'node:http2';
import type { ClientHttp2Session, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { DataPlane } from '../../src/dataplane/index.js';
import type { TunnelStreamContext } from '../../src/wire/stream-handler.js';
import { BINDING } from './backend-graph.js';

/**
 * TunnelHarness stands in for the agent side of a tunnel: an HTTP/2 server on 127.0.0.1 with
 * extended CONNECT enabled that hands every stream to the data plane, exactly as a tunnel session
 * does, and an HTTP/2 client playing the edge.
 */
export interface TunnelHarness {
  client: ClientHttp2Session;
  port: number;
  /** request sends one request and collects the whole response */
  request(headers: OutgoingHttpHeaders, body?: Buffer | string): Promise<HarnessResponse>;
  close(): Promise<void>;
}

/** HarnessResponse is a collected response. */
export interface HarnessResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  trailers: IncomingHttpHeaders | undefined;
}

/** defaultContext is the tunnel context of harness streams. */
export const defaultContext: TunnelStreamContext = {
  bindingId: BINDING,
  publicPort: 80,
  publicProtocol: 'http',
  clientAddress: '203.0.113.7',
  requestId: 'test',
};

/** startTunnelHarness starts the server and connects the client. */
export async function startTunnelHarness(dataPlane: DataPlane, context: Partial<TunnelStreamContext> = {}): Promise<TunnelHarness> {
  const server = http2.createServer({ settings: { enableConnectProtocol: true } });
  server.on('stream', (stream, headers) => dataPlane.handleStream(stream, headers, { ...defaultContext, ...context }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const client = http2.connect(`http://127.0.0.1:${port}`);
  await new Promise<void>((resolve, reject) => {
    client.once('remoteSettings', () => resolve());
    client.once('error', reject);
  });
  return {
    client,
    port,
    request: (headers, body) => collect(client, headers, body),
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** collect sends one request on a session and gathers status, headers, body and trailers. */
export function collect(client: ClientHttp2Session, headers: OutgoingHttpHeaders, body?: Buffer | string): Promise<HarnessResponse> {
  return new Promise((resolve, reject) => {
    const req = client.request({ ':authority': 'app.test', ':path': '/', ...headers }, { endStream: body === undefined });
    let status = 0;
    let responseHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    req.once('response', (h) => {
      status = Number(h[':status']);
      responseHeaders = h;
    });
    req.once('trailers', (t) => (trailers = t));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => resolve({ status, headers: responseHeaders, body: Buffer.concat(chunks).toString(), trailers }));
    req.once('error', reject);
    if (body !== undefined) req.end(body);
  });
}
