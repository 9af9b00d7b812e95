import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { decodeEdgeConfig, startEdge } from '../../src/edge/index.js';
import type { EdgeServer } from '../../src/edge/index.js';
import { newKey, startCli } from '../support/backend-cli.js';
import type { CliRun } from '../support/backend-cli.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { makeSelfSigned } from '../support/backend-tls.js';

describe('tuna run: an Ingress with TLS terminated in the cluster, end to end', function () {
  this.timeout(30_000);
  let edge: EdgeServer | undefined;
  let run: CliRun | undefined;
  let backend: TestBackend | undefined;
  let dir = '';

  afterEach(async () => {
    run?.stop();
    await run?.exit.catch(() => 0);
    await edge?.close();
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS through the edge with the Secret from the manifests, the edge seeing only ciphertext', async () => {
    const cert = makeSelfSigned('secure.test');
    const { key, sha256 } = newKey();
    backend = await startHttpBackend('web');
    dir = mkdtempSync(join(tmpdir(), 'tuna-tls-'));
    writeFileSync(join(dir, 'objects.yaml'), manifests(backend.port, cert));
    edge = await startEdge(
      decodeEdgeConfig({
        listen: { tunnel: { host: '127.0.0.1', port: 0 }, https: { host: '127.0.0.1', port: 0 } },
        bindings: [{ id: 'binding/host/secure.test', kind: 'host', hostnames: ['secure.test'], tls: 'terminate-in-cluster', keys: [{ sha256 }] }],
      }),
    );
    const addresses = edge.address();
    run = startCli(['run', '--manifests', dir, '--edge', `tcp://127.0.0.1:${addresses.tunnel.port}`], { TUNA_KEY: key });
    await run.waitForOut('Serving');
    const socket = tls.connect({ host: '127.0.0.1', port: addresses.https!.port, servername: 'secure.test', ca: cert.cert, ALPNProtocols: ['http/1.1'] });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', () => resolve());
      socket.once('error', reject);
    });
    expect(socket.getPeerCertificate().subject.CN).to.equal('secure.test');
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.request({ createConnection: () => socket, path: '/private', headers: { host: 'secure.test' } }, (res) => {
        let data = '';
        res.on('data', (c: Buffer) => (data += c.toString()));
        res.on('end', () => resolve(data));
      });
      req.once('error', reject);
      req.end();
    });
    const seen = JSON.parse(body) as EchoReply;
    expect(seen.url).to.equal('/private');
    expect(seen.headers['x-forwarded-proto']).to.equal('https');
    socket.destroy();
  });
});

function manifests(port: number, cert: { cert: string; key: string }): string {
  const indent = (pem: string) => pem.trim().split('\n').map((l) => `      ${l}`).join('\n');
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: secure, namespace: default}
spec:
  ingressClassName: tuna
  tls: [{hosts: [secure.test], secretName: secure-tls}]
  rules:
    - host: secure.test
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: v1
kind: Secret
metadata: {name: secure-tls, namespace: default}
type: kubernetes.io/tls
stringData:
  tls.crt: |
${indent(cert.cert)}
  tls.key: |
${indent(cert.key)}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1, namespace: default, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{port: ${port}}]
endpoints: [{addresses: ["127.0.0.1"]}]
`;
}
