import { expect } from 'chai';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:tls';
import { parseClientHello } from '../../src/edge/fronts/sni.js';

/** captureClientHello returns the first bytes a real TLS client sends. */
async function captureClientHello(servername: string | undefined): Promise<Buffer> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const got = once(server, 'connection');
  const client = connect({ host: '127.0.0.1', port, ...(servername !== undefined ? { servername } : {}) });
  client.on('error', () => {});
  const [socket] = (await got) as [Socket];
  let data: Buffer = Buffer.alloc(0);
  while (parseClientHello(data).kind === 'incomplete') {
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    data = Buffer.concat([data, chunk]);
  }
  client.destroy();
  socket.destroy();
  server.close();
  return data;
}

describe('edge SNI peek', () => {
  it('reads the server name from a real ClientHello', async () => {
    const hello = await captureClientHello('Secure.Example.test');
    expect(parseClientHello(hello)).to.deep.equal({ kind: 'sni', serverName: 'secure.example.test' });
  });

  it('says incomplete for every strict prefix of the ClientHello', async () => {
    const hello = await captureClientHello('a.test');
    for (const n of [0, 1, 5, 6, 40, hello.length - 1]) expect(parseClientHello(hello.subarray(0, n)).kind).to.equal('incomplete');
  });

  it('reads a ClientHello split across two TLS records', async () => {
    const hello = await captureClientHello('split.test');
    const body = hello.subarray(5);
    const cut = 20;
    const record = (payload: Buffer): Buffer => Buffer.concat([Buffer.from([0x16, 0x03, 0x01, payload.length >> 8, payload.length & 255]), payload]);
    const split = Buffer.concat([record(body.subarray(0, cut)), record(body.subarray(cut))]);
    expect(parseClientHello(split)).to.deep.equal({ kind: 'sni', serverName: 'split.test' });
  });

  it('tells a ClientHello without SNI from one that is not TLS at all', async () => {
    const hello = await captureClientHello(undefined);
    expect(parseClientHello(hello).kind).to.equal('no-sni');
    expect(parseClientHello(Buffer.from('GET / HTTP/1.1\r\n\r\n')).kind).to.equal('not-tls');
  });
});
