import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The two sample backends of `tuna demo`, on 127.0.0.1 ports chosen by the system. */

/** DemoBackend is a running sample backend. */
export interface DemoBackend {
  name: string;
  port: number;
  close(): Promise<void>;
}

const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>tuna demo</title></head>
<body>
<h1>tuna demo: the web Service</h1>
<p>This page came from the <code>web</code> backend through the edge and a tunnel.</p>
<p><a href="/api/hello">/api/hello</a> goes to the <code>api</code> backend.</p>
</body></html>
`;

/** startDemoBackend starts the `api` (JSON) or `web` (HTML) sample. */
export async function startDemoBackend(name: 'api' | 'web'): Promise<DemoBackend> {
  const server = http.createServer((req, res) => {
    req.resume();
    if (name === 'api') {
      res.setHeader('content-type', 'application/json');
      res.end(`${JSON.stringify({ service: 'api', path: req.url, forwardedFor: req.headers['x-forwarded-for'] ?? null })}\n`);
    } else {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.setHeader('x-demo-service', 'web');
      res.end(page);
    }
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    name,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** endpointSlicesFor writes the EndpointSlices that place the demo Services on the sample backends. */
export function endpointSlicesFor(backends: readonly DemoBackend[]): string {
  return backends
    .map(
      (b) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: ${b.name}-demo
  namespace: default
  labels:
    kubernetes.io/service-name: ${b.name}
addressType: IPv4
ports:
  - name: http
    port: ${b.port}
endpoints:
  - addresses: ["127.0.0.1"]
    conditions:
      ready: true
`,
    )
    .join('---\n');
}
