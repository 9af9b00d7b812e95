import { expect } from 'chai';
import { Readable } from 'node:stream';
import { Http1Client } from '../../src/dataplane/upstream-http1.js';
import type { UpstreamResponse } from '../../src/dataplane/upstream.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';

async function text(res: UpstreamResponse): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

/**
 * Http1Client writes the request head from a flat `[name, value, …]` list (issue 13 item 1: no
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
      const res = await client.send(endpoint, { method: 'GET', path: '/p?q=1', authority: 'app.test:8080', headers, body: undefined }, new AbortController().signal);
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
    const chunked = await client.send(endpoint, { method: 'POST', path: '/', authority: 'app.test', headers: {}, body: Readable.from([Buffer.from('ab'), Buffer.from('cd')]) }, new AbortController().signal);
    expect(chunked.status).to.equal(200);
    expect((JSON.parse(await text(chunked)) as EchoReply).headers['transfer-encoding']).to.equal('chunked');
    const continued = await client.send(
      endpoint,
      { method: 'POST', path: '/', authority: 'app.test', headers: { expect: '100-continue', 'content-length': '4' }, body: Readable.from([Buffer.from('wxyz')]) },
      new AbortController().signal,
    );
    expect(continued.status).to.equal(200);
    expect((JSON.parse(await text(continued)) as EchoReply).headers.expect).to.equal('100-continue');
  });
});
