import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { http1 } from '../support/tunnel-harness.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';

/** What the edge's /metrics reads beyond its counters: the certificates it serves with, and the answers it gives itself. */
describe('edge metrics: certificate expiry and the edge’s own answers', function () {
  this.timeout(30_000);
  let edge: EdgeServer | undefined;

  afterEach(async () => {
    await edge?.close();
    edge = undefined;
  });

  it('lists the config file’s certificates by hostname with their notAfter, and counts unknown-host and no-tunnel answers by reason', async () => {
    const { cert, key } = selfSignedCertificate(['*.wild.test', 'apex.test']);
    edge = await startEdge(
      decodeEdgeConfig({
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 }, metrics: { host: '127.0.0.1', port: 0 } },
        certificates: [{ hostnames: ['*.wild.test', 'Apex.test'], cert, key }],
        bindings: [{ id: 'binding/host/app', kind: 'host', hostnames: ['app.test'], keys: [{ sha256: 'a'.repeat(64) }] }],
        limits: { tunnelWaitMs: 0 },
      }),
    );
    const { http, metrics } = edge.address();
    expect((await http1(http!.port, 'nobody.test', '/')).status).to.equal(404);
    expect((await http1(http!.port, 'app.test', '/')).status).to.equal(503);
    expect((await http1(http!.port, 'app.test', '/')).status).to.equal(503);
    const lines = (await http1(metrics!.port, 'edge', '/metrics')).body.toString().split('\n');
    const notAfter = new X509Certificate(cert).validToDate.getTime() / 1000;
    expect(lines.filter((l) => l.startsWith('tuna_edge_certificate_expiry_timestamp_seconds{'))).to.deep.equal([
      `tuna_edge_certificate_expiry_timestamp_seconds{hostname="*.wild.test",source="static"} ${notAfter}`,
      `tuna_edge_certificate_expiry_timestamp_seconds{hostname="apex.test",source="static"} ${notAfter}`,
    ]);
    expect(lines.filter((l) => l.startsWith('tuna_edge_answers_total{'))).to.deep.equal(['tuna_edge_answers_total{reason="no-tunnel"} 2', 'tuna_edge_answers_total{reason="unknown-host"} 1']);
    expect(lines).to.include.members(['tuna_edge_requests_total{code="404"} 1', 'tuna_edge_requests_total{code="503"} 2']);
  });
});
