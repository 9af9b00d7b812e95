import { expect } from 'chai';
import { Readable } from 'node:stream';
import { Http1Client } from '../../src/dataplane/upstream-http1.js';
import type { Endpoint } from '../../src/dataplane/endpoints.js';
import type { UpstreamCall, UpstreamClient, UpstreamRequest, UpstreamResponse } from '../../src/dataplane/upstream.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';

async function text(res: UpstreamResponse): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

/** Outcome is what a receiver heard, and whether it heard it from within send() (it must not). */
type Outcome = { response: UpstreamResponse; fromWithinSend: boolean } | { error: unknown; fromWithinSend: boolean };

/** start sends one request and returns its call and what its receiver will hear. */
function start(client: UpstreamClient, endpoint: Endpoint, request: UpstreamRequest): { call: UpstreamCall; outcome: Promise<Outcome> } {
  let inSend = true;
  let call!: UpstreamCall;
  const outcome = new Promise<Outcome>((resolve) => {
    call = client.send(endpoint, request, {
      onUpstreamResponse: (response) => resolve({ response, fromWithinSend: inSend }),
      onUpstreamError: (error) => resolve({ error, fromWithinSend: inSend }),
    });
  });
  inSend = false;
  return { call, outcome };
}

/** sendOnce resolves with the response, or rejects with the error the receiver heard. */
async function sendOnce(client: UpstreamClient, endpoint: Endpoint, request: UpstreamRequest): Promise<UpstreamResponse> {
  const outcome = await start(client, endpoint, request).outcome;
  if ('error' in outcome) throw outcome.error;
  return outcome.response;
}

/**
 * Http1Client writes the request head from a flat `[name, value, …]` list (no
 * setHeader copy per header); the head must say exactly what the header map said.
 */
describe('data plane: the HTTP/1.1 upstream request head', () => {
  let backend: TestBackend;
  let client: Http1Client;

  beforeEach(async () => {
    backend = await startHttpBackend('api');
    client = new Http1Client();
  });

  afterEach(async () => {
    client.close();
    await backend.close();
  });

  it('sends every value of a repeated header, the Host it is given, and keeps the connection alive', async () => {
    const endpoint = { address: '127.0.0.1', port: backend.port };
    for (let i = 0; i < 2; i++) {
      const headers = { 'x-multi': ['a', 'b'], 'x-one': '1' };
      const res = await sendOnce(client, endpoint, { method: 'GET', path: '/p?q=1', authority: 'app.test:8080', headers, body: undefined });
      expect(res.status).to.equal(200);
      const seen = (JSON.parse(await text(res)) as EchoReply).headers;
      expect(seen['x-multi']).to.equal('a, b');
      expect(seen['x-one']).to.equal('1');
      expect(seen.host).to.equal('app.test:8080');
      expect(seen.connection).to.equal('keep-alive');
    }
    expect(backend.requests.map((r) => r.url)).to.deep.equal(['/p?q=1', '/p?q=1']);
    expect(new Set(backend.requests.map((r) => r.remotePort)).size).to.equal(1);
  });

  it('streams a body of unknown length chunked, and one with Expect: 100-continue after the backend\'s go-ahead', async () => {
    const endpoint = { address: '127.0.0.1', port: backend.port };
    const chunked = await sendOnce(client, endpoint, { method: 'POST', path: '/', authority: 'app.test', headers: {}, body: Readable.from([Buffer.from('ab'), Buffer.from('cd')]) });
    expect(chunked.status).to.equal(200);
    expect((JSON.parse(await text(chunked)) as EchoReply).headers['transfer-encoding']).to.equal('chunked');
    const continued = await sendOnce(client, endpoint, {
      method: 'POST',
      path: '/',
      authority: 'app.test',
      headers: { expect: '100-continue', 'content-length': '4' },
      body: Readable.from([Buffer.from('wxyz')]),
    });
    expect(continued.status).to.equal(200);
    expect((JSON.parse(await text(continued)) as EchoReply).headers.expect).to.equal('100-continue');
  });
});

/** The abort handle send() returns (UpstreamCall), in place of an AbortSignal per request. */
describe('data plane: the HTTP/1.1 upstream call', () => {
  let client: Http1Client;
  const cleanups: (() => unknown)[] = [];

  beforeEach(() => {
    client = new Http1Client();
  });

  afterEach(async () => {
    client.close();
    for (const c of cleanups.reverse()) await c();
    cleanups.length = 0;
  });

  const get = (headers: Record<string, string> = {}): UpstreamRequest => ({ method: 'GET', path: '/', authority: 'app.test', headers, body: undefined });

  it('reports the reason given to cancel when the response had not come, and closes the connection', async () => {
    let closed!: () => void;
    const backendClosed = new Promise<void>((resolve) => (closed = resolve));
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    const hang = await startHttpBackend('hang', (req) => {
      req.socket.once('close', () => closed());
      arrived();
    });
    cleanups.push(() => hang.close());
    const { call, outcome } = start(client, { address: '127.0.0.1', port: hang.port }, get());
    await arrival;
    const reason = new Error('cut');
    call.cancel(reason);
    call.cancel(new Error('a second cancel changes nothing'));
    expect(await outcome).to.deep.equal({ error: reason, fromWithinSend: false });
    await backendClosed;
  });

  it('destroys the response body with the reason when cancelled after the response headers', async () => {
    const partial = await startHttpBackend('partial', (_req, res) => {
      res.writeHead(200);
      res.write('part');
    });
    cleanups.push(() => partial.close());
    const { call, outcome } = start(client, { address: '127.0.0.1', port: partial.port }, get());
    const heard = await outcome;
    if (!('response' in heard)) throw new Error('expected a response');
    const ended = new Promise<string>((resolve) => {
      heard.response.body.once('end', () => resolve('end'));
      heard.response.body.once('error', () => resolve('error'));
      heard.response.body.once('close', () => resolve('close without end'));
    });
    heard.response.body.once('data', () => call.cancel(new Error('cut')));
    heard.response.body.resume();
    expect(await ended).to.not.equal('end');
  });

  it('reports a request Node refuses to send (an invalid header value) after send returns, not from within it', async () => {
    const b = await startHttpBackend('b');
    cleanups.push(() => b.close());
    const { outcome } = start(client, { address: '127.0.0.1', port: b.port }, get({ 'x-bad': 'line\nbreak' }));
    const heard = await outcome;
    expect(heard.fromWithinSend).to.equal(false);
    expect('error' in heard && (heard.error as { code?: string }).code).to.equal('ERR_INVALID_CHAR');
    expect(b.requests).to.have.length(0);
  });

  it('reports a refused connection as a BackendConnectError', async () => {
    const b = await startHttpBackend('gone');
    const port = b.port;
    await b.close();
    const heard = await start(client, { address: '127.0.0.1', port }, get()).outcome;
    expect('error' in heard && (heard.error as { code?: string }).code).to.equal('TUNA_BACKEND_CONNECT');
  });
});
