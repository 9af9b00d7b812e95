import { expect } from 'chai';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { WebSocketServer } from 'ws';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { maskedTextFrame, readFrames } from '../support/backend-ws.js';
import { makeSelfSigned } from '../support/backend-tls.js';

const echoProto = `
syntax = "proto3";
package tunatest;
message Msg { string text = 1; }
service Echo {
  rpc Unary (Msg) returns (Msg);
  rpc Chat (stream Msg) returns (stream Msg);
}
`;

describe('data plane: h2c, gRPC, WebSocket and TCP', () => {
  const cleanups: (() => unknown)[] = [];
  let endpoints: StaticEndpointResolver;
  let plane: DataPlane;

  beforeEach(() => {
    endpoints = new StaticEndpointResolver();
    plane = new DataPlane({ endpoints });
    cleanups.push(() => plane.close());
  });

  afterEach(async () => {
    for (const c of cleanups.reverse()) await c();
    cleanups.length = 0;
  });

  async function harnessFor(protocol: 'http' | 'h2c' | 'ws', port: number): Promise<TunnelHarness> {
    endpoints.set('default', 'svc', 'http', [{ address: '127.0.0.1', port }]);
    plane.update(hostGraph([{ hostname: 'app.test', routes: [httpRoute('svc', [serviceBackend('svc', { protocol })])] }]));
    const h = await startTunnelHarness(plane);
    cleanups.push(() => h.close());
    return h;
  }

  it('proxies to an h2c backend over one multiplexed session', async () => {
    const server = http2.createServer();
    const sessions: unknown[] = [];
    server.on('session', (s) => sessions.push(s));
    server.on('stream', (stream, headers) => {
      stream.respond({ ':status': 200, 'x-proto': 'h2' });
      stream.end(`h2 ${String(headers[':path'])} ${String(headers[':authority'])}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    cleanups.push(() => plane.close());
    const h = await harnessFor('h2c', (server.address() as AddressInfo).port);
    const answers = await Promise.all([1, 2, 3, 4].map((i) => h.request({ ':path': `/n/${i}` })));
    expect(answers.map((a) => a.body)).to.deep.equal([1, 2, 3, 4].map((i) => `h2 /n/${i} app.test`));
    expect(sessions).to.have.length(1);
  });

  it('proxies to an h2 backend over TLS with ALPN', async () => {
    const cert = makeSelfSigned('backend.test');
    const server = http2.createSecureServer({ key: cert.key, cert: cert.cert });
    server.on('stream', (stream, headers) => {
      stream.respond({ ':status': 200 });
      stream.end(`tls h2 ${String(headers[':path'])} ${String(headers[':scheme'])}`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    endpoints.set('default', 'svc', 'http', [{ address: '127.0.0.1', port: (server.address() as AddressInfo).port }]);
    plane.update(hostGraph([{ hostname: 'app.test', routes: [httpRoute('svc', [serviceBackend('svc', { protocol: 'h2' })])] }]));
    const h = await startTunnelHarness(plane);
    cleanups.push(() => h.close());
    expect((await h.request({ ':path': '/secure' })).body).to.equal('tls h2 /secure https');
  });

  it('carries gRPC unary and bidirectional streaming calls through h2c with their trailers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tuna-proto-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'echo.proto'), echoProto);
    const def = grpc.loadPackageDefinition(protoLoader.loadSync(join(dir, 'echo.proto'))) as unknown as {
      tunatest: { Echo: grpc.ServiceClientConstructor };
    };
    const server = new grpc.Server();
    server.addService(def.tunatest.Echo.service, {
      Unary: (call: grpc.ServerUnaryCall<{ text: string }, { text: string }>, cb: grpc.sendUnaryData<{ text: string }>) => {
        if (call.request.text === 'fail') return cb({ code: grpc.status.NOT_FOUND, details: 'no such thing' });
        cb(null, { text: `echo ${call.request.text}` });
      },
      Chat: (call: grpc.ServerDuplexStream<{ text: string }, { text: string }>) => {
        call.on('data', (m: { text: string }) => call.write({ text: m.text.toUpperCase() }));
        call.on('end', () => call.end());
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    cleanups.push(() => server.forceShutdown());
    const h = await harnessFor('h2c', port);
    const client = new def.tunatest.Echo(`127.0.0.1:${h.port}`, grpc.credentials.createInsecure(), { 'grpc.default_authority': 'app.test' });
    cleanups.push(() => client.close());
    type Cb = (err: grpc.ServiceError | null, res?: { text: string }) => void;
    const unary = (text: string) =>
      new Promise<{ err: grpc.ServiceError | null; res?: { text: string } }>((resolve) =>
        (client as unknown as { Unary: (m: { text: string }, cb: Cb) => void }).Unary({ text }, (err, res) => resolve({ err, res })),
      );
    expect((await unary('hi')).res?.text).to.equal('echo hi');
    const failed = await unary('fail');
    expect(failed.err?.code).to.equal(grpc.status.NOT_FOUND);
    expect(failed.err?.details).to.equal('no such thing');

    const chat = (client as unknown as { Chat: () => grpc.ClientDuplexStream<{ text: string }, { text: string }> }).Chat();
    const got: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      chat.on('data', (m: { text: string }) => got.push(m.text));
      chat.on('end', () => resolve());
      chat.on('error', reject);
    });
    for (const t of ['a', 'b', 'c']) chat.write({ text: t });
    chat.end();
    await done;
    expect(got).to.deep.equal(['A', 'B', 'C']);
  });

  it('bridges a WebSocket from extended CONNECT to an HTTP/1.1 Upgrade backend and echoes frames', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    wss.on('connection', (ws, req) => {
      ws.send(`path ${req.url ?? ''}`);
      ws.on('message', (data) => ws.send(`echo ${String(data)}`));
    });
    cleanups.push(() => new Promise((r) => wss.close(() => r(undefined))));
    const h = await harnessFor('ws', (wss.address() as AddressInfo).port);
    const stream = h.client.request(
      { ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/chat?room=1', ':authority': 'app.test', 'sec-websocket-version': '13' },
      { endStream: false },
    );
    const status = await new Promise<number>((resolve) => stream.once('response', (hd) => resolve(Number(hd[':status']))));
    expect(status).to.equal(200);
    const frames = readFrames(stream);
    expect(await frames.next()).to.equal('path /chat?room=1');
    stream.write(maskedTextFrame('hello'));
    expect(await frames.next()).to.equal('echo hello');
    stream.close();
  });

  it('forwards the backend answer when it refuses the WebSocket upgrade', async () => {
    const server = http.createServer((_req, res) => {
      res.statusCode = 403;
      res.end('no sockets here');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    const h = await harnessFor('ws', (server.address() as AddressInfo).port);
    const res = await h.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'http', ':path': '/ws', 'sec-websocket-version': '13' }, '');
    expect([res.status, res.body]).to.deep.equal([403, 'no sockets here']);
  });

  it('bridges a TCP CONNECT stream to a TCP backend both ways', async () => {
    const server = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    endpoints.set('default', 'db', 'tcp', [{ address: '127.0.0.1', port: (server.address() as AddressInfo).port }]);
    const graph = hostGraph([], {
      listeners: [{ id: 'binding/tcp/l', bindingId: 'binding/tcp', name: 'tcp', port: 5432, protocol: 'tcp', source: { group: '', kind: 'T', name: 'db' } }],
      streamRoutes: [{ id: 'sr', listenerId: 'binding/tcp/l', hostnames: [], backends: [serviceBackend('db', { protocol: 'tcp', portName: 'tcp' })], source: { group: '', kind: 'T', name: 'db' } }],
    });
    plane.update(graph);
    const h = await startTunnelHarness(plane, { bindingId: 'binding/tcp', publicPort: 31000, publicProtocol: 'tcp' });
    cleanups.push(() => h.close());
    const stream = h.client.request({ ':method': 'CONNECT', ':authority': 'db:5432' }, { endStream: false });
    const status = await new Promise<number>((resolve) => stream.once('response', (hd) => resolve(Number(hd[':status']))));
    expect(status).to.equal(200);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise<void>((r) => stream.once('end', () => r()));
    stream.end(Buffer.from('ping over tcp'));
    await ended;
    expect(Buffer.concat(chunks).toString()).to.equal('ping over tcp');
  });

  it('answers 502 on a TCP CONNECT whose backend refuses', async () => {
    const gone = net.createServer();
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
    const port = (gone.address() as AddressInfo).port;
    await new Promise((r) => gone.close(r));
    endpoints.set('default', 'db', 'tcp', [{ address: '127.0.0.1', port }]);
    plane.update(
      hostGraph([], {
        listeners: [{ id: 'binding/tcp/l', bindingId: 'binding/tcp', name: 'tcp', port: 5432, protocol: 'tcp', source: { group: '', kind: 'T', name: 'db' } }],
        streamRoutes: [{ id: 'sr', listenerId: 'binding/tcp/l', hostnames: [], backends: [serviceBackend('db', { protocol: 'tcp', portName: 'tcp' })], source: { group: '', kind: 'T', name: 'db' } }],
      }),
    );
    const h = await startTunnelHarness(plane, { bindingId: 'binding/tcp', publicPort: 5432, publicProtocol: 'tcp' });
    cleanups.push(() => h.close());
    const res = await h.request({ ':method': 'CONNECT', ':authority': 'db:5432', ':path': undefined, ':scheme': undefined }, '');
    expect(res.status).to.equal(502);
  });
});
