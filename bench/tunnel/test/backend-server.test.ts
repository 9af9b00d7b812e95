import { expect } from 'chai';
import { createServer, request } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Backend } from '../backend.js';
import { startBackend } from '../backend.js';
import { runDownload, runUpload } from '../load.js';
import { ProcessGroup } from '../processes.js';
import { findTools } from '../tools.js';

interface Reply {
  status: number;
  body: Buffer;
}

function send(port: number, method: string, path: string, body?: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.once('error', reject);
    req.end(body);
  });
}

describe('bench/tunnel backend server', () => {
  let group: ProcessGroup;
  let backend: Backend;

  beforeEach(async () => {
    group = new ProcessGroup();
    backend = await startBackend(group, 60_000);
  });

  afterEach(async () => {
    await group.close();
  });

  it('answers /1k with exactly 1,024 bytes', async () => {
    const res = await send(backend.port, 'GET', '/1k');
    expect(res.status).to.equal(200);
    expect(res.body.length).to.equal(1024);
  });

  it('streams the number of bytes /bytes/<n> names, across several buffers', async () => {
    const res = await send(backend.port, 'GET', '/bytes/700001');
    expect(res.status).to.equal(200);
    expect(res.body.length).to.equal(700_001);
  });

  it('answers an upload with the byte count it drained', async () => {
    const res = await send(backend.port, 'PUT', '/upload', Buffer.alloc(3 * 1024 * 1024 + 7));
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.body.toString('utf8'))).to.deep.equal({ bytes: 3 * 1024 * 1024 + 7 });
  });

  it('answers 404 for unknown paths and a non-numeric byte count', async () => {
    expect((await send(backend.port, 'GET', '/nope')).status).to.equal(404);
    expect((await send(backend.port, 'GET', '/bytes/lots')).status).to.equal(404);
  });

  it('is gone after the group closes', async () => {
    await group.close();
    const code = await backend.process.exited;
    expect(code).to.not.equal('error');
    await send(backend.port, 'GET', '/1k').then(
      () => expect.fail('the backend still answers'),
      (err: NodeJS.ErrnoException) => expect(err.code).to.equal('ECONNREFUSED'),
    );
  });
});

describe('bench/tunnel transfers', () => {
  let group: ProcessGroup;
  let backend: Backend;
  let liar: Server | undefined;

  beforeEach(async () => {
    group = new ProcessGroup();
    backend = await startBackend(group, 60_000);
  });

  afterEach(async () => {
    await group.close();
    await new Promise((resolve) => (liar ? liar.close(resolve) : resolve(undefined)));
    liar = undefined;
  });

  it('times an upload the backend confirms byte for byte', async () => {
    const res = await runUpload(group, { port: backend.port }, 5_000_000, 30);
    expect(res.seconds).to.be.greaterThan(0);
    expect(res.megabytesPerSecond).to.be.closeTo(5 / res.seconds, 1e-6);
  });

  it('times a download whose every byte arrived', async () => {
    const res = await runDownload(group, findTools().curl, { port: backend.port }, 3_000_000, 30);
    expect(res.megabytesPerSecond).to.be.closeTo(3 / res.seconds, 1e-6);
  });

  it('fails an upload when the server says it received fewer bytes', async () => {
    liar = createServer((req, res) => {
      req.resume();
      req.once('end', () => res.end('{"bytes":1}'));
    });
    await new Promise<void>((resolve) => (liar as Server).listen(0, '127.0.0.1', resolve));
    const port = (liar.address() as AddressInfo).port;
    await runUpload(group, { port }, 100_000, 30).then(
      () => expect.fail('a short upload passed'),
      (err: Error) => expect(err.message).to.contain('received 1 of 100000 bytes'),
    );
  });
});
