import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import type { Socket as DgramSocket } from 'node:dgram';
import { once } from 'node:events';
import http2 from 'node:http2';
import type { ClientHttp2Session, ClientHttp2Stream, Http2Server, IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { udpTarget } from '../../src/cli/quick-graph.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { DataPlaneOptions, UdpObserver } from '../../src/dataplane/index.js';
import { DatagramReader, frameDatagram } from '../../src/wire/index.js';
import { waitUntil } from '../support/tunnel-harness.js';

// The agent's end of a UDP flow (docs/protocol.md §4.6) without an edge: CONNECT streams with
// the udp stream context sent straight to the data plane over h2c on loopback.

const BINDING = 'binding/tcp-port/dns';

describe('data plane: UDP flows', function () {
  this.timeout(20_000);
  let server: Http2Server | undefined;
  let session: ClientHttp2Session | undefined;
  let backend: DgramSocket | undefined;
  let received: Buffer[] = [];
  let dp: DataPlane | undefined;

  async function start(options: Partial<DataPlaneOptions> = {}, withRoute = true, withEndpoint = true): Promise<void> {
    backend = createSocket('udp4');
    received = [];
    backend.on('message', (msg, remote) => {
      received.push(msg);
      backend!.send(msg, remote.port, remote.address);
    });
    backend.bind(0, '127.0.0.1');
    await once(backend, 'listening');
    const quick = udpTarget({ address: '127.0.0.1', port: backend.address().port }, 0, BINDING);
    const endpoints = new StaticEndpointResolver();
    endpoints.set(quick.service.namespace, quick.service.name, quick.service.portName, withEndpoint ? [quick.service.endpoint] : []);
    const plane = new DataPlane({ endpoints, ...options });
    dp = plane;
    if (withRoute) plane.update(quick.graph);
    server = http2.createServer();
    server.on('stream', (stream, headers) => plane.handleStream(stream, headers, { bindingId: BINDING, publicPort: 53, publicProtocol: 'udp', clientAddress: '127.0.0.1', requestId: 'r1' }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    session.on('error', () => undefined);
  }

  function flow(): { stream: ClientHttp2Stream; response: Promise<IncomingHttpHeaders>; datagrams: Buffer[] } {
    const stream = session!.request({ ':method': 'CONNECT', ':authority': 'udp.invalid:53' });
    stream.on('error', () => undefined);
    const datagrams: Buffer[] = [];
    const reader = new DatagramReader();
    stream.on('data', (chunk: Buffer) => reader.push(chunk, (d) => datagrams.push(d)));
    return { stream, response: once(stream, 'response').then(([h]) => h as IncomingHttpHeaders), datagrams };
  }

  afterEach(async () => {
    session?.destroy();
    server?.close();
    backend?.close();
    session = undefined;
    server = undefined;
    backend = undefined;
  });

  it('relays a zero-length datagram and a 1,400-byte one both ways', async () => {
    await start();
    const f = flow();
    expect((await f.response)[':status']).to.equal(200);
    f.stream.write(Buffer.concat([frameDatagram(Buffer.alloc(0)), frameDatagram(Buffer.alloc(1400, 7))]));
    await waitUntil(() => f.datagrams.length === 2);
    expect(received.map((d) => d.length)).to.deep.equal([0, 1400]);
    expect(f.datagrams.map((d) => d.length)).to.deep.equal([0, 1400]);
  });

  it('resets the stream with PROTOCOL_ERROR at a malformed length, after sending the datagram before it', async () => {
    await start();
    const f = flow();
    await f.response;
    f.stream.write(Buffer.concat([frameDatagram(Buffer.from('before')), Buffer.from([0xff, 0xf0])]));
    await new Promise((resolve) => f.stream.once('close', resolve));
    expect(f.stream.rstCode).to.equal(http2.constants.NGHTTP2_PROTOCOL_ERROR);
    await waitUntil(() => received.length === 1);
    expect(received.map(String)).to.deep.equal(['before']);
    // the session carries on: another flow works
    const g = flow();
    expect((await g.response)[':status']).to.equal(200);
  });

  /** recorder is a UdpObserver that keeps what it was told. */
  function recorder(): UdpObserver & { heard: string[] } {
    const heard: string[] = [];
    return { heard, dropped: (reason) => heard.push(`dropped:${reason}`), refused: (reason) => heard.push(`refused:${reason}`) };
  }

  it('answers 404 when the binding has no udp listener, 400 when UDP is switched off, 503 without a ready endpoint, and tells the observer each reason', async () => {
    const udpObserver = recorder();
    await start({ udpObserver }, false);
    expect((await flow().response)[':status']).to.equal(404);
    session!.destroy();
    server!.close();
    backend!.close();
    await start({ acceptUdp: false, udpObserver });
    expect((await flow().response)[':status']).to.equal(400);
    session!.destroy();
    server!.close();
    backend!.close();
    await start({ udpObserver }, true, false);
    expect((await flow().response)[':status']).to.equal(503);
    expect(udpObserver.heard).to.deep.equal(['refused:no-route', 'refused:udp-off', 'refused:no-endpoint']);
  });

  it('tells the observer of a datagram the backend host refused (ICMP port unreachable), and the flow carries on', async () => {
    const udpObserver = recorder();
    await start({ udpObserver });
    const f = flow();
    expect((await f.response)[':status']).to.equal(200);
    // nothing listens on the endpoint's port any more: loopback answers ICMP port unreachable
    await new Promise<void>((resolve) => backend!.close(() => resolve()));
    backend = undefined;
    f.stream.write(frameDatagram(Buffer.from('into the void')));
    await waitUntil(() => udpObserver.heard.length > 0);
    expect(udpObserver.heard).to.deep.equal(['dropped:backend-unreachable']);
    expect(f.stream.closed, 'the flow is still open').to.equal(false);
  });

  it('tells the observer nothing for a flow that relays', async () => {
    const udpObserver = recorder();
    await start({ udpObserver });
    const f = flow();
    expect((await f.response)[':status']).to.equal(200);
    f.stream.write(frameDatagram(Buffer.from('hi')));
    await waitUntil(() => f.datagrams.length === 1);
    expect(udpObserver.heard).to.deep.equal([]);
  });

  it('ends the stream with END_STREAM after its idle timeout', async () => {
    await start({ udpIdleTimeoutMs: 200 });
    const f = flow();
    await f.response;
    f.stream.write(frameDatagram(Buffer.from('hi')));
    await waitUntil(() => f.datagrams.length === 1);
    f.stream.resume();
    await once(f.stream, 'end');
    expect(f.stream.rstCode === undefined || f.stream.rstCode === http2.constants.NGHTTP2_NO_ERROR).to.equal(true);
  });

  it('ends every open flow with END_STREAM when the agent drains', async () => {
    await start();
    const [f, g] = [flow(), flow()];
    await Promise.all([f.response, g.response]);
    f.stream.resume();
    g.stream.resume();
    dp!.drainUdp();
    await Promise.all([once(f.stream, 'end'), once(g.stream, 'end')]);
  });
});
