import { expect } from 'chai';
import type { ClientHttp2Session } from 'node:http2';
import type { TunnelSession } from '../../src/tunnel/session.js';
import { TestStreamHandler } from '../support/tunnel-handlers.js';
import { h2, h2Connect, http1, openSession, startTestEdge } from '../support/tunnel-harness.js';
import type { TestEdge } from '../support/tunnel-harness.js';

const APP = 'binding/host/app.test';

/** The edge's request duration histogram, fed by the real public fronts. */
describe('edge: public request durations in /metrics', () => {
  let t: TestEdge;
  let session: TunnelSession;
  let client: ClientHttp2Session | undefined;

  beforeEach(async () => {
    t = await startTestEdge([{ id: APP, kind: 'host', hostnames: ['app.test'] }], { limits: { tunnelWaitMs: 0 } });
    session = await openSession(t, APP, new TestStreamHandler());
  });

  afterEach(async () => {
    client?.destroy();
    client = undefined;
    session.destroy();
    await t.edge.close();
  });

  it('times relayed answers and the edge’s own by front and status class, and counts them by code as before', async () => {
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(200);
    expect((await http1(t.httpPort, 'app.test', '/')).status).to.equal(200);
    expect((await http1(t.httpPort, 'nobody.test', '/')).status).to.equal(404);
    client = h2Connect(t.httpPort);
    expect((await h2(client, { ':path': '/', ':authority': 'app.test' })).headers[':status']).to.equal(200);
    const lines = (await http1(t.endpoint.port, 'edge', '/metrics')).body.toString().split('\n');
    expect(lines).to.include.members([
      '# TYPE tuna_edge_request_duration_seconds histogram',
      'tuna_edge_request_duration_seconds_count{front="http1",code_class="2xx"} 2',
      'tuna_edge_request_duration_seconds_count{front="http1",code_class="4xx"} 1',
      'tuna_edge_request_duration_seconds_count{front="http2",code_class="2xx"} 1',
      'tuna_edge_requests_total{code="200"} 3',
      'tuna_edge_requests_total{code="404"} 1',
    ]);
    const sum = lines.find((l) => l.startsWith('tuna_edge_request_duration_seconds_sum{front="http1",code_class="2xx"} '));
    expect(Number(sum?.split(' ')[1])).to.be.greaterThan(0);
  });
});
