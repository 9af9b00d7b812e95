// edge-http1-client-left.test.ts — a public HTTP/1.1 client that leaves while its request waits
// for a tunnel: nothing is sent for it when the tunnel connects, and no tunnel stream stays open.
import { expect } from 'chai';
import { once } from 'node:events';
import { connect } from 'node:net';
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { TunnelSession } from '../../src/tunnel/session.js';
import type { TunnelStreamContext } from '../../src/wire/stream-handler.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { openSession, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const APP = 'binding/host/app.test';

/** SilentHandler takes every stream and never answers nor reads: a stream sent to it ends only if the edge cancels it. */
class SilentHandler extends TestStreamHandler {
  override handleStream(stream: ServerHttp2Stream, _headers: IncomingHttpHeaders, context: TunnelStreamContext): void {
    this.seen.push(context);
    stream.on('error', () => undefined);
  }
}

describe('edge: an HTTP/1.1 client that leaves while its request waits for a tunnel', () => {
  let t: TestEdge | undefined;
  let session: TunnelSession | undefined;

  afterEach(async () => {
    session?.destroy();
    session = undefined;
    await t?.edge.close();
    t = undefined;
  });

  for (const request of [
    { name: 'a GET', head: 'GET / HTTP/1.1\r\nHost: app.test\r\n\r\n' },
    { name: 'a POST with part of its body', head: 'POST /echo HTTP/1.1\r\nHost: app.test\r\nContent-Length: 5\r\n\r\nab' },
  ]) {
    it(`opens no tunnel stream for ${request.name} whose client left before the tunnel connected`, async () => {
      const edge = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }], { limits: { tunnelWaitMs: 30_000 } });
      t = edge;
      // the request is waiting for a tunnel once the front asks the registry to wait for one
      const registry = edge.edge.registry;
      const waitFor = registry.waitFor.bind(registry);
      let waits = 0;
      registry.waitFor = (...args: Parameters<typeof waitFor>) => {
        waits++;
        return waitFor(...args);
      };
      const client = connect(edge.httpPort, '127.0.0.1');
      client.on('error', () => undefined);
      await once(client, 'connect');
      client.write(request.head);
      await waitUntil(() => waits === 1, 10_000);
      client.destroy();
      // the edge saw the client leave
      await waitUntil(() => edge.edge.metrics.publicConnectionsOpen === 0, 10_000);
      const handler = new SilentHandler();
      session = await openSession(edge, APP, handler);
      await waitUntil(() => registry.count().get(APP) === 1, 10_000);
      const tunnels = registry.all();
      // a generous bound: a stream sent to the silent handler stays open for good
      await waitUntil(() => edge.edge.metrics.streamsActive === 0 && tunnels.every((x) => x.activeStreams === 0), 2_000).catch(() => undefined);
      expect(edge.edge.metrics.streamsActive, 'tunnel streams open at the edge').to.equal(0);
      expect(tunnels.map((x) => x.activeStreams), 'streams the tunnel counts in flight').to.deep.equal([0]);
      expect(edge.edge.metrics.streamsTotal, 'streams opened').to.equal(0);
      expect(handler.seen, 'requests the agent got').to.deep.equal([]);
    });
  }
});
