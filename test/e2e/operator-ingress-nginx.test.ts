import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { SecretRef } from '../../src/model/index.js';
import { AcceptedCertificates, SecretReader } from '../../src/operator/index.js';
import type { SecretGetter , Operator} from '../../src/operator/index.js';
import { startSlowPathBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import { wireOperator } from '../support/operator-wiring.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { ListedObjects } from '../support/operator-fakes.js';

// ingress-nginx annotations on a tuna Ingress, through the operator: the htpasswd of the
// auth-secret is read by name (SecretReader), the annotations become route policies, and the data
// plane on the operator applies them to requests that came through a real store-mode edge.
const N = 'nginx.ingress.kubernetes.io/';
const obj = (o: Record<string, unknown>): KubernetesObject => o as KubernetesObject;

/** ClusterSecrets answers the reader's GETs as an apiserver would. */
class ClusterSecrets implements SecretGetter {
  readonly secrets = new Map<string, V1Secret>();
  get(ref: SecretRef): Promise<V1Secret | undefined> {
    return Promise.resolve(this.secrets.get(`${ref.namespace}/${ref.name}`));
  }
}

function ingress(name: string, annotations: Record<string, string>): KubernetesObject {
  return obj({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, namespace: 'shop', uid: `uid-${name}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z', annotations },
    spec: {
      ingressClassName: 'tuna',
      rules: [{ host: `${name}.${BASE_DOMAIN}`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }],
    },
  });
}

function objects(backendPort: number): KubernetesObject[] {
  return [
    ingress('private', { [`${N}auth-type`]: 'basic', [`${N}auth-secret`]: 'htpasswd', [`${N}auth-realm`]: 'Staff only', [`${N}rewrite-target`]: '/' }),
    ingress('limited', { [`${N}limit-rpm`]: '1', [`${N}limit-burst-multiplier`]: '2' }),
    ingress('snippet', { [`${N}configuration-snippet`]: 'more_set_headers "X-A: b";' }),
    ingress('fenced', { [`${N}whitelist-source-range`]: '10.0.0.0/8, 2001:db8::/32' }),
    ingress('open', { [`${N}denylist-source-range`]: '10.0.0.13', [`${N}x-forwarded-prefix`]: '/shop' }),
    ingress('secure', { [`${N}force-ssl-redirect`]: 'true' }),
    ingress('small', { [`${N}proxy-body-size`]: '10' }),
    ingress('shared', { [`${N}enable-cors`]: 'true', [`${N}cors-allow-origin`]: 'https://app.example' }),
    ingress('slow', { [`${N}proxy-read-timeout`]: '1' }),
    obj({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop' }, spec: { ports: [{ name: 'http', port: 80 }] } }),
    obj({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: backendPort }],
      endpoints: [{ addresses: ['127.0.0.1'] }],
    }),
  ];
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(port: number, host: string, auth?: string, options: { method?: string; path?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host, ...options.headers };
    if (auth !== undefined) headers.authorization = `Basic ${Buffer.from(auth).toString('base64')}`;
    const req = httpRequest({ host: '127.0.0.1', port, path: options.path ?? '/', method: options.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** served retries (bounded, 100 ms apart) until the host's tunnel is up: the edge answers 503 or 404 before. */
async function served(port: number, host: string, auth?: string): Promise<Answer> {
  let last: unknown;
  for (let i = 0; i < 100; i++) {
    try {
      const answer = await get(port, host, auth);
      if (answer.status !== 503 && answer.status !== 404) return answer;
      last = answer.status;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${host} never answered: last ${String(last)}`);
}

describe('operator: ingress-nginx annotations on a tuna Ingress become route policies', () => {
  let store: Store;
  let running: StoreEdge;
  let backend: TestBackend;
  let operator: Operator;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store, storeEdgeConfig('unused'));
    const seeded = await seedAccount(store);
    const client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    // `/slow` answers after 3 s (the `slow` Ingress's proxy-read-timeout is 1 s); the rest echo
    backend = await startSlowPathBackend('web');
    const listed = new ListedObjects();
    listed.items = objects(backend.port);
    const secrets = new ClusterSecrets();
    const sha = `{SHA}${createHash('sha1').update('pw').digest('base64')}`;
    // bcrypt of "s3cret" (cost 4), as `htpasswd -B` writes it
    const bcrypt = '$2y$04$UiCeP5Fy12j6KdPEixFvoOng0nkjmfp6VK2dYIXLO0puDpyO3MPzS';
    secrets.secrets.set('shop/htpasswd', {
      metadata: { name: 'htpasswd', namespace: 'shop', resourceVersion: '1' },
      type: 'Opaque',
      data: { auth: Buffer.from(`ann:${bcrypt}\nbob:${sha}\n`).toString('base64') },
    });
    const certificates = new AcceptedCertificates();
    ({ operator } = wireOperator({
      objects: listed,
      edge: running,
      client,
      reconciler: { clusterId: 'east', addressPool: '127.77.0.0/16' },
      certificates,
      options: { secrets: new SecretReader(secrets, { refreshMs: 0 }) },
    }));
  });

  afterEach(async () => {
    await operator.stop();
    await running.edge.close();
    await store.close();
    await backend.close();
  });

  it('asks for basic auth from the auth-secret htpasswd, limits requests per client with limit-rpm, filters by source range, sets X-Forwarded-Prefix, redirects to https, holds back a snippet, and names an unsupported annotation in a Warning event', async () => {
    const result = await operator.start();
    const port = running.httpPort;

    const anonymous = await served(port, `private.${BASE_DOMAIN}`);
    expect(anonymous.status).to.equal(401);
    expect(anonymous.headers['www-authenticate']).to.equal('Basic realm="Staff only", charset="UTF-8"');
    expect((await get(port, `private.${BASE_DOMAIN}`, 'ann:wrong')).status).to.equal(401);
    const ann = await get(port, `private.${BASE_DOMAIN}`, 'ann:s3cret');
    expect(ann.status).to.equal(200);
    expect((JSON.parse(ann.body) as EchoReply).backend).to.equal('web');
    expect((await get(port, `private.${BASE_DOMAIN}`, 'bob:pw')).status).to.equal(200);

    // limit-rpm 1 with limit-burst-multiplier 2: a bucket of 2, refilled one a minute
    expect((await served(port, `limited.${BASE_DOMAIN}`)).status).to.equal(200);
    expect((await get(port, `limited.${BASE_DOMAIN}`)).status).to.equal(200);
    const refused = await get(port, `limited.${BASE_DOMAIN}`);
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers['retry-after'])).to.be.within(1, 60);

    // whitelist-source-range: the client (127.0.0.1, as the edge saw it) is outside the ranges
    expect((await served(port, `fenced.${BASE_DOMAIN}`)).status).to.equal(403);
    const open = await served(port, `open.${BASE_DOMAIN}`);
    expect(open.status).to.equal(200);
    expect((JSON.parse(open.body) as EchoReply).headers['x-forwarded-prefix']).to.equal('/shop');
    const redirected = await served(port, `secure.${BASE_DOMAIN}`);
    expect(redirected.status).to.equal(308);
    expect(redirected.headers.location).to.equal(`https://secure.${BASE_DOMAIN}/`);

    const statusOf = (name: string) => result.state.statuses.find((s) => s.ref.kind === 'Ingress' && s.ref.name === name);
    expect(statusOf('private')?.events).to.deep.include({ type: 'Warning', reason: 'UnsupportedAnnotation', message: `annotation ${N}rewrite-target: not supported by tuna, ignored` });
    const snippet = statusOf('snippet');
    expect(snippet?.conditions.find((c) => c.type === 'Published')).to.include({ status: 'False', reason: 'NotPublished' });
    expect(snippet?.events.map((e) => e.reason)).to.deep.equal(['SnippetRefused']);
    // the held-back Ingress reached neither the graph nor the edge
    expect(result.state.graph.bindings.map((b) => b.id).sort()).to.deep.equal(
      ['fenced', 'limited', 'open', 'private', 'secure', 'shared', 'slow', 'small'].map((n) => `binding/host/${n}.${BASE_DOMAIN}`),
    );
  });

  it('limits the body with proxy-body-size, answers CORS with enable-cors and cors-allow-origin, and times out with proxy-read-timeout', async () => {
    await operator.start();
    const port = running.httpPort;
    expect((await served(port, `small.${BASE_DOMAIN}`)).status).to.equal(200);
    expect((await get(port, `small.${BASE_DOMAIN}`, undefined, { method: 'POST', body: 'x'.repeat(100), headers: { 'content-type': 'text/plain' } })).status).to.equal(413);
    expect((await get(port, `small.${BASE_DOMAIN}`, undefined, { method: 'POST', body: 'x'.repeat(5), headers: { 'content-type': 'text/plain' } })).status).to.equal(200);

    await served(port, `shared.${BASE_DOMAIN}`);
    const preflight = await get(port, `shared.${BASE_DOMAIN}`, undefined, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT' } });
    expect(preflight.status).to.be.oneOf([200, 204]);
    expect(preflight.headers['access-control-allow-origin']).to.equal('https://app.example');
    const shared = await get(port, `shared.${BASE_DOMAIN}`, undefined, { headers: { origin: 'https://app.example' } });
    expect([shared.status, shared.headers['access-control-allow-origin']]).to.deep.equal([200, 'https://app.example']);

    expect((await served(port, `slow.${BASE_DOMAIN}`)).status).to.equal(200);
    expect((await get(port, `slow.${BASE_DOMAIN}`, undefined, { path: '/slow' })).status).to.equal(504);
  });
});
