import { expect } from 'chai';
import http from 'node:http';
import { once } from 'node:events';
import type { ClientHttp2Stream } from 'node:http2';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { startEdge } from '../../src/edge/index.js';
import type { EdgeConfigFile } from '../../src/edge/index.js';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { HEADER_HTTP1_LIMITS, SPLICED_HTTP1_PROTOCOL } from '../../src/wire/index.js';
import { BINDING, hostGraph, httpRoute, serviceBackend } from '../support/backend-graph.js';
import { startTunnelHarness } from '../support/backend-harness.js';
import type { TunnelHarness } from '../support/backend-harness.js';
import { listen, startHttpBackend } from '../support/backend-servers.js';
import type { RecordedRequest, TestBackend } from '../support/backend-servers.js';
import { openSession, testEdgeConfig } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

interface RawResponse {
  status: number;
  /** the head's field lines, lower-cased names */
  fields: Map<string, string>;
  body: string;
}

/**
 * ResponseReader reads HTTP/1.1 responses (Content-Length framed, as the echo backend's and the
 * agent's own answers are) off a raw connection, one `next()` each; `ended` says the peer sent FIN.
 */
class ResponseReader {
  #buffer = '';
  #wake: (() => void) | undefined;
  ended = false;

  constructor(socket: Duplex) {
    socket.on('data', (chunk: Buffer) => {
      this.#buffer += chunk.toString('latin1');
      this.#wake?.();
    });
    socket.once('end', () => {
      this.ended = true;
      this.#wake?.();
    });
  }

  async next(): Promise<RawResponse> {
    for (;;) {
      const response = this.#take();
      if (response !== undefined) return response;
      if (this.ended) throw new Error(`connection ended before a whole response: ${JSON.stringify(this.#buffer)}`);
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  #take(): RawResponse | undefined {
    const end = this.#buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = this.#buffer.slice(0, end).split('\r\n');
    const fields = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(fields.get('content-length') ?? '0');
    if (this.#buffer.length < end + 4 + length) return undefined;
    const body = this.#buffer.slice(end + 4, end + 4 + length);
    this.#buffer = this.#buffer.slice(end + 4 + length);
    return { status: Number(statusLine!.split(' ')[1]), fields, body };
  }
}

function head(path: string, extra = ''): string {
  return `GET ${path} HTTP/1.1\r\nHost: app.test\r\n${extra}\r\n`;
}

const BIG_FIELD = `x-big: ${'a'.repeat(6 << 10)}\r\n`;

/** startLargeHeadBackend answers 200 to heads up to 128 KiB (Node's own 16 KiB would answer 431 itself). */
function startLargeHeadBackend(): Promise<TestBackend> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer({ maxHeaderSize: 128 << 10 }, (req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, remotePort: req.socket.remotePort ?? 0 });
    req.resume();
    req.once('end', () => res.end('ok'));
  });
  return listen(server, requests);
}

/**
 * A spliced connection keeps the edge's configured limits (docs/protocol.md §4.5,
 * `tuna-http1-limits`): the agent parses every request after the first, with the edge's values.
 */
describe("edge: a spliced HTTP/1.1 connection keeps the edge's configured limits", () => {
  let backend: TestBackend | undefined;
  let t: TestEdge | undefined;
  let session: TunnelSession | undefined;
  let plane: DataPlane | undefined;
  let harness: TunnelHarness | undefined;
  const sockets: Duplex[] = [];

  function newPlane(b: TestBackend): DataPlane {
    const endpoints = new StaticEndpointResolver();
    endpoints.set('default', 'api', 'http', [{ address: '127.0.0.1', port: b.port }]);
    const p = new DataPlane({ endpoints });
    p.update(hostGraph([{ hostname: 'app.test', routes: [httpRoute('api', [serviceBackend('api')])] }]));
    return p;
  }

  async function setUp(limits: NonNullable<EdgeConfigFile['limits']>): Promise<TestEdge> {
    backend = await startHttpBackend('api');
    plane = newPlane(backend);
    const keys = new Map<string, string>();
    const config = testEdgeConfig([{ id: BINDING, kind: 'host', hostnames: ['app.test'] }], { limits: { tunnelWaitMs: 0, ...limits } }, keys);
    const server = await startEdge(config);
    const edge: TestEdge = { edge: server, keys, config, endpoint: { host: '127.0.0.1', port: server.address().tunnel.port, tls: false }, httpPort: server.address().http?.port ?? 0 };
    t = edge;
    session = await openSession(edge, BINDING, plane);
    return edge;
  }

  function publicConnection(edge: TestEdge): { socket: Duplex; reader: ResponseReader } {
    const socket = connect({ host: '127.0.0.1', port: edge.httpPort });
    sockets.push(socket);
    return { socket, reader: new ResponseReader(socket) };
  }

  /** splicedStream opens a spliced stream on the harness as an edge would, with `field` as its limits (undefined: none). */
  function splicedStream(field: string | undefined): { stream: ClientHttp2Stream; reader: ResponseReader } {
    const stream = harness!.client.request(
      { ':method': 'CONNECT', ':protocol': SPLICED_HTTP1_PROTOCOL, ':scheme': 'http', ':path': '/', ':authority': 'app.test', ...(field === undefined ? {} : { [HEADER_HTTP1_LIMITS]: field }) },
      { endStream: false },
    );
    sockets.push(stream);
    return { stream, reader: new ResponseReader(stream) };
  }

  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await harness?.close();
    harness = undefined;
    session?.destroy();
    session = undefined;
    await t?.edge.close();
    t = undefined;
    plane?.close();
    plane = undefined;
    await backend?.close();
    backend = undefined;
  });

  it('answers 431 to a later 6 KiB head when the edge allows 4 KiB heads; the first request passes', async () => {
    const edge = await setUp({ maxHeaderBytes: 4 << 10 });
    const { socket, reader } = publicConnection(edge);
    socket.write(head('/first'));
    expect((await reader.next()).status).to.equal(200);
    socket.write(head('/big', BIG_FIELD));
    const big = await reader.next();
    expect(big.status).to.equal(431);
    expect(big.fields.get('connection')).to.equal('close');
    expect(edge.edge.metrics.streamsTotal).to.equal(1);
    expect(backend!.requests.map((r) => r.url)).to.deep.equal(['/first']);
  });

  it('answers 408 to a later head that never completes within the edge\'s header deadline', async () => {
    const edge = await setUp({ public: { headersTimeoutMs: 300 } });
    const { socket, reader } = publicConnection(edge);
    socket.write(head('/first'));
    expect((await reader.next()).status).to.equal(200);
    socket.write('GET /never HTTP/1.1\r\nHost: app.test\r\nX-Part: 1\r\n');
    expect((await reader.next()).status).to.equal(408);
    expect(edge.edge.metrics.streamsTotal).to.equal(1);
    expect(backend!.requests.map((r) => r.url)).to.deep.equal(['/first']);
  });

  it('does not cut a later request whose body arrives after the head deadline: no whole-request deadline, as per request', async () => {
    const edge = await setUp({ public: { headersTimeoutMs: 300 } });
    const { socket, reader } = publicConnection(edge);
    socket.write(head('/first'));
    expect((await reader.next()).status).to.equal(200);
    socket.write('PUT /slow HTTP/1.1\r\nHost: app.test\r\nContent-Length: 10\r\n\r\nhello');
    // more than twice the head deadline before the rest of the body (Node would answer 408 on a whole-request deadline)
    await new Promise((r) => setTimeout(r, 700));
    socket.write('world');
    expect((await reader.next()).status).to.equal(200);
    expect(backend!.requests.map((r) => r.url)).to.deep.equal(['/first', '/slow']);
  });

  it("announces and applies the edge's keep-alive idle time: Keep-Alive timeout=5, and an idle connection ended at 300 ms", async () => {
    const edge = await setUp({ public: { idleTimeoutMs: 5_000 } });
    const first = publicConnection(edge);
    first.socket.write(head('/first'));
    const reply = await first.reader.next();
    expect(reply.status).to.equal(200);
    expect(reply.fields.get('keep-alive')).to.equal('timeout=5');
    await t!.edge.close();
    t = undefined;
    session?.destroy();
    session = undefined;
    const short = await setUp({ public: { idleTimeoutMs: 300 } });
    const second = publicConnection(short);
    second.socket.write(head('/idle'));
    expect((await second.reader.next()).status).to.equal(200);
    if (!second.reader.ended) await once(second.socket, 'end');
    expect(second.reader.ended).to.equal(true);
    expect(short.edge.metrics.streamsTotal).to.equal(1);
  });

  describe('on the agent, for the field as sent', () => {
    beforeEach(async () => {
      backend = await startLargeHeadBackend();
      plane = newPlane(backend);
      harness = await startTunnelHarness(plane);
    });

    const defaults: [string, string | undefined][] = [
      ['absent', undefined],
      ['not decimals', 'a,b,c'],
      ['two fields', '4096,300'],
      ['a negative number', '-4096,300,5000'],
      ['empty', ''],
    ];
    for (const [title, field] of defaults) {
      it(`keeps the defaults when the field is ${title}: a 6 KiB head passes, Keep-Alive timeout=75, the connection carries on`, async () => {
        const { stream, reader } = splicedStream(field);
        stream.write(head('/a', BIG_FIELD));
        const first = await reader.next();
        expect(first.status).to.equal(200);
        expect(first.fields.get('keep-alive')).to.equal('timeout=75');
        stream.write(head('/b'));
        expect((await reader.next()).status).to.equal(200);
        expect(backend!.requests.map((r) => r.url)).to.deep.equal(['/a', '/b']);
      });
    }

    it('applies a well-formed field, ignoring fields past the third: 431 for a 6 KiB head under 4096,60000,5000,later', async () => {
      const { stream, reader } = splicedStream('4096,60000,5000,later');
      stream.write(head('/small'));
      const small = await reader.next();
      expect(small.status).to.equal(200);
      expect(small.fields.get('keep-alive')).to.equal('timeout=5');
      stream.write(head('/big', BIG_FIELD));
      expect((await reader.next()).status).to.equal(431);
      expect(backend!.requests.map((r) => r.url)).to.deep.equal(['/small']);
    });

    it('clamps a head limit past 64 KiB: a 20 KiB head passes, a 70 KiB head gets 431', async () => {
      const { stream, reader } = splicedStream(`${10 << 20},60000,75000`);
      stream.write(head('/twenty', `x-big: ${'a'.repeat(20 << 10)}\r\n`));
      expect((await reader.next()).status).to.equal(200);
      stream.write(head('/seventy', `x-big: ${'a'.repeat(70 << 10)}\r\n`));
      expect((await reader.next()).status).to.equal(431);
      expect(backend!.requests.map((r) => r.url)).to.deep.equal(['/twenty']);
    });

    it('answers two streams with different fields on the same data plane each by its own limits', async () => {
      const strict = splicedStream('4096,60000,75000');
      const lenient = splicedStream('32768,60000,75000');
      strict.stream.write(head('/strict', BIG_FIELD));
      lenient.stream.write(head('/lenient', BIG_FIELD));
      expect((await strict.reader.next()).status).to.equal(431);
      expect((await lenient.reader.next()).status).to.equal(200);
      expect(backend!.requests.map((r) => r.url)).to.deep.equal(['/lenient']);
    });
  });
});
