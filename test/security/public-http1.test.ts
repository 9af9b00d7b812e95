import { expect } from 'chai';
import type { Socket } from 'node:net';
import { startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { TestBackend } from '../support/backend-servers.js';
import { attack } from '../support/attack-log.js';
import { closedWithin, dial, exchange } from '../support/raw-sockets.js';
import { http1, startTestEdge, waitUntil } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

// An anonymous client on the public HTTP/1.1 listener, against the whole chain: an edge, a
// `tuna http` agent and a backend that records what reaches it (docs/security.md "Attack suite").

const APP = 'binding/host/app.test';
const SILENT = 2000;

/** statusOf reads the status code of the first answer in a raw exchange (0: none). */
const statusOf = (text: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);

describe('attack: the public HTTP/1.1 listener', function () {
  this.timeout(60_000);
  let backend: TestBackend;
  let t: TestEdge;
  let run: CliRun;
  const held: Socket[] = [];

  before(async () => {
    backend = await startHttpBackend('app');
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }], {
      limits: {
        tunnelWaitMs: 0,
        maxHeaderBytes: 16 * 1024,
        public: { firstByteTimeoutMs: 500, headersTimeoutMs: 1500, idleTimeoutMs: 1500, maxConnections: 6000, maxConnectionsPerAddress: 6000 },
      },
    });
    run = startCli(['http', String(backend.port), '--host', 'app.test', '--edge', `tcp://127.0.0.1:${t.endpoint.port}`, '--key', t.keys.get(APP)!]);
    await run.waitForOut('Forwarding');
    await waitUntil(() => (t.edge.registry.count().get(APP) ?? 0) > 0);
  });

  after(async () => {
    run.stop();
    await run.exit.catch(() => 0);
    await t.edge.close();
    await backend.close();
  });

  afterEach(() => {
    for (const s of held.splice(0)) s.destroy();
    backend.requests.length = 0;
  });

  /** served checks that the edge still answers a plain request through the tunnel. */
  async function served(): Promise<number> {
    return (await http1(t.httpPort, 'app.test', '/after')).status;
  }

  it(`closes ${SILENT.toLocaleString('en')} silent connections by the first-byte deadline and still serves`, async () => {
    const before = t.edge.metrics.publicTimeouts('first-byte');
    for (let i = 0; i < SILENT; i += 200) held.push(...(await Promise.all(Array.from({ length: 200 }, () => dial(t.httpPort)))));
    const results = await Promise.all(held.map((s) => closedWithin(s, 20_000)));
    const closed = results.filter((r) => r.closed && r.bytes === 0).length;
    const counted = t.edge.metrics.publicTimeouts('first-byte') - before;
    const status = await served();
    attack(`${SILENT} silent connections (first byte deadline 500 ms) → ${closed} closed by the edge without a byte, ${counted} counted first-byte, then GET → ${status}`);
    expect(closed).to.equal(SILENT);
    expect(counted).to.equal(SILENT);
    expect(status).to.equal(200);
  });

  it('closes slowloris connections that trickle header lines by the headers deadline, whatever they keep sending', async () => {
    const before = t.edge.metrics.publicTimeouts('headers');
    const sockets = await Promise.all(Array.from({ length: 50 }, () => dial(t.httpPort)));
    held.push(...sockets);
    let lines = 0;
    for (const s of sockets) s.write('GET / HTTP/1.1\r\nHost: app.test\r\n');
    const closing = Promise.all(sockets.map((s) => closedWithin(s, 20_000)));
    // one more header line every 100 ms on each connection, for at most 10 s
    const trickle = setInterval(() => {
      for (const s of sockets) if (!s.destroyed) s.write(`X-Slow-${lines}: 1\r\n`);
      lines++;
    }, 100);
    const results = await closing;
    clearInterval(trickle);
    const counted = t.edge.metrics.publicTimeouts('headers') - before;
    const status = await served();
    attack(`slowloris headers: 50 connections adding a header line every 100 ms → ${results.filter((r) => r.closed).length} closed after ${lines} lines each (headers deadline 1.5 s), ${counted} counted, backend reached ${backend.requests.filter((r) => r.url === '/').length} times, then GET → ${status}`);
    expect(results.every((r) => r.closed)).to.equal(true);
    expect(counted).to.equal(50);
    expect(backend.requests.filter((r) => r.url === '/')).to.have.length(0);
    expect(status).to.equal(200);
  });

  it('holds at most the per-client cap of a binding with stalled uploads: the rest get 429 and another client is served', async () => {
    const stalled = 150;
    const sockets = await Promise.all(Array.from({ length: stalled }, () => dial(t.httpPort)));
    held.push(...sockets);
    const answers = sockets.map(
      (s) =>
        new Promise<number>((resolve) => {
          const timer = setTimeout(() => resolve(0), 5000);
          s.once('data', (chunk: Buffer) => {
            clearTimeout(timer);
            resolve(statusOf(chunk.toString('latin1')));
          });
        }),
    );
    for (const s of sockets) s.write('POST /upload HTTP/1.1\r\nHost: app.test\r\nContent-Length: 1000000\r\n\r\n0123456789');
    const statuses = await Promise.all(answers);
    const refused = statuses.filter((x) => x === 429).length;
    const other = await http1(t.httpPort, 'app.test', '/other', { localAddress: '127.0.0.2' });
    attack(`slow body: ${stalled} POSTs from one address declaring 1,000,000 bytes that stop after 10 → ${statuses.filter((x) => x === 0).length} held (one in-flight slot each), ${refused} × 429 past the per-client cap of 128; another address → ${other.status}`);
    expect(refused).to.equal(stalled - 128);
    expect(statuses.filter((x) => x !== 0 && x !== 429)).to.deep.equal([]);
    expect(other.status).to.equal(200);
  });

  it('answers 431 to oversized header blocks (one huge field, many fields) without reaching the backend', async () => {
    const huge = await exchange(t.httpPort, `GET /huge HTTP/1.1\r\nHost: app.test\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    const many = await exchange(t.httpPort, `GET /many HTTP/1.1\r\nHost: app.test\r\n${Array.from({ length: 2000 }, (_, i) => `X-${i}: ${i}\r\n`).join('')}\r\n`);
    attack(`oversized headers (limit 16 KiB): one 64 KiB field → ${statusOf(huge)}, 2,000 fields (about 20 KiB) → ${statusOf(many)}, backend reached ${backend.requests.length} times`);
    expect([statusOf(huge), statusOf(many)]).to.deep.equal([431, 431]);
    expect(backend.requests).to.have.length(0);
    expect(await served()).to.equal(200);
  });

  const SMUGGLED = 'GET /smuggled HTTP/1.1\r\nHost: app.test\r\n\r\n';
  const AMBIGUOUS: [string, string][] = [
    ['two Content-Length fields that disagree', `POST /a HTTP/1.1\r\nHost: app.test\r\nContent-Length: 3\r\nContent-Length: ${3 + SMUGGLED.length}\r\n\r\nabc${SMUGGLED}`],
    ['two equal Content-Length fields', `POST /a HTTP/1.1\r\nHost: app.test\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc${SMUGGLED}`],
    ['a Content-Length list', `POST /a HTTP/1.1\r\nHost: app.test\r\nContent-Length: 3, 3\r\n\r\nabc${SMUGGLED}`],
    ['CL.TE: Content-Length and chunked', `POST /a HTTP/1.1\r\nHost: app.test\r\nContent-Length: ${5 + SMUGGLED.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`],
    ['TE.CL: chunked and a short Content-Length', `POST /a HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n${(SMUGGLED.length).toString(16)}\r\n${SMUGGLED}\r\n0\r\n\r\n`],
    ['an obfuscated Transfer-Encoding (space before the colon)', `POST /a HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\nabc${SMUGGLED}`],
    ['Transfer-Encoding chunked, identity', `POST /a HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n${SMUGGLED}`],
    ['two Host fields', `GET /a HTTP/1.1\r\nHost: app.test\r\nHost: other.test\r\n\r\n`],
    ['a bare LF line ending in the head', `POST /a HTTP/1.1\r\nHost: app.test\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc${SMUGGLED}`],
  ];

  it('answers 400 to every ambiguous framing (duplicated Content-Length or Host, CL+TE, obfuscated TE) and never delivers a smuggled request', async () => {
    const seen: string[] = [];
    for (const [what, text] of AMBIGUOUS) {
      const answer = await exchange(t.httpPort, text);
      seen.push(`${what} ${statusOf(answer)}`);
      expect(statusOf(answer), what).to.equal(400);
      expect(answer.match(/HTTP\/1\.1 \d{3}/g) ?? [], `${what}: one answer only`).to.have.length(1);
    }
    const urls = backend.requests.map((r) => r.url);
    attack(`smuggling: ${AMBIGUOUS.length} ambiguous requests → ${seen.join('; ')}; backend saw [${urls.join(', ')}]`);
    expect(urls).not.to.include('/smuggled');
    expect(urls).to.deep.equal([]);
    expect(await served()).to.equal(200);
  });
});
