import { expect } from 'chai';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { openSession, startTestEdge } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const APP = 'binding/host/app.test';
const TOTAL = 200 * 1024 * 1024;
// Everything (client, edge, agent) runs in this process; buffering the transfer anywhere would
// grow RSS by at least 200 MiB. Flow control bounds what is held to the windows (16 MiB per
// connection and direction); most of the growth measured is chunk garbage awaiting GC (~75 MiB
// peak on the download here), so the bound sits between the two, well below a buffered copy.
const MAX_GROWTH = 128 * 1024 * 1024;

/** sampleMemory records the peak RSS growth while fn runs. */
async function peakGrowth(fn: () => Promise<void>): Promise<number> {
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, process.memoryUsage().rss) - base;
}

describe('tunnel: 200 MB through the tunnel with flat memory', function () {
  this.timeout(120_000);
  let t: TestEdge;
  let session: TunnelSession;

  beforeEach(async () => {
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }]);
    session = await openSession(t, APP, new TestStreamHandler());
  });

  afterEach(async () => {
    session.destroy();
    await t.edge.close();
  });

  it('downloads 200 MB with bounded memory growth', async () => {
    let received = 0;
    const growth = await peakGrowth(async () => {
      const req = httpRequest({ host: '127.0.0.1', port: t.httpPort, path: `/bytes?n=${TOTAL}`, headers: { host: 'app.test' }, agent: false });
      req.end();
      const [res] = (await once(req, 'response')) as [IncomingMessage];
      for await (const chunk of res) received += (chunk as Buffer).length;
    });
    expect(received).to.equal(TOTAL);
    expect(growth).to.be.lessThan(MAX_GROWTH);
  });

  it('uploads 200 MB with bounded memory growth', async () => {
    let answer = '';
    const growth = await peakGrowth(async () => {
      const req = httpRequest({ host: '127.0.0.1', port: t.httpPort, method: 'POST', path: '/count', headers: { host: 'app.test' }, agent: false });
      const responded = once(req, 'response') as Promise<[IncomingMessage]>;
      const chunk = Buffer.alloc(64 * 1024);
      for (let sent = 0; sent < TOTAL; sent += chunk.length) {
        if (!req.write(chunk)) await once(req, 'drain');
      }
      req.end();
      const [res] = await responded;
      for await (const part of res) answer += String(part);
    });
    expect(answer).to.equal(String(TOTAL));
    expect(growth).to.be.lessThan(MAX_GROWTH);
  });
});
