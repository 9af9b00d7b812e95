import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { SecretRef } from '../../src/model/index.js';
import { AcceptedCertificates, SecretReader } from '../../src/operator/index.js';
import type { SecretGetter, SyncResult , Operator} from '../../src/operator/index.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import { wireOperator } from '../support/operator-wiring.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { selfSignedCertificate } from '../support/tunnel-certs.js';
import type { TestCertificate } from '../support/tunnel-certs.js';
import { ListedObjects } from '../support/operator-fakes.js';

// An HTTPS listener of a Gateway terminates in the cluster: the edge passes the raw TLS of the
// Gateway's address to the operator's data plane, which presents the certificate of the Secret the
// listener names (read by name through SecretReader) and proxies the decrypted request.
const GW = 'gateway.networking.k8s.io/v1';
const TLS_PORT = 18443;


/** ClusterSecrets answers the reader's GETs as an apiserver would, from Secrets the test puts. */
class ClusterSecrets implements SecretGetter {
  readonly secrets = new Map<string, V1Secret>();
  get(ref: SecretRef): Promise<V1Secret | undefined> {
    return Promise.resolve(this.secrets.get(`${ref.namespace}/${ref.name}`));
  }
  put(name: string, pair: TestCertificate, resourceVersion: string): void {
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    this.secrets.set(`shop/${name}`, { metadata: { name, namespace: 'shop', resourceVersion }, type: 'kubernetes.io/tls', data: { 'tls.crt': b64(pair.cert), 'tls.key': b64(pair.key) } });
  }
}

const obj = (o: Record<string, unknown>): KubernetesObject => o as KubernetesObject;

function httpsGateway(backendPort: number): KubernetesObject[] {
  return [
    obj({ apiVersion: GW, kind: 'GatewayClass', metadata: { name: 'tuna', uid: 'uid-class', generation: 1 }, spec: { controllerName: 'tuna.dev/gateway-controller' } }),
    obj({
      apiVersion: GW,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'shop', uid: 'uid-gw', generation: 1 },
      spec: {
        gatewayClassName: 'tuna',
        listeners: [
          { name: 'https', protocol: 'HTTPS', port: TLS_PORT, hostname: 'shop.example.com', tls: { mode: 'Terminate', certificateRefs: [{ name: 'shop-cert' }] } },
          { name: 'broken', protocol: 'HTTPS', port: TLS_PORT, hostname: 'broken.example.com', tls: { mode: 'Terminate', certificateRefs: [{ name: 'broken-cert' }] } },
        ],
      },
    }),
    obj({
      apiVersion: GW,
      kind: 'HTTPRoute',
      metadata: { name: 'web', namespace: 'shop', uid: 'uid-route', generation: 1 },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
    }),
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
  body: string;
  fingerprint: string;
}

/** getHttps sends one HTTPS GET to address:TLS_PORT with SNI `servername`, trusting `ca` (undefined: any certificate), and notes the certificate presented. */
function getHttps(address: string, servername: string, ca: string | undefined): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const trust = ca === undefined ? { rejectUnauthorized: false } : { ca };
    const req = httpsRequest({ host: address, port: TLS_PORT, path: '/', servername, headers: { host: servername }, ...trust, agent: false }, (res) => {
      const fingerprint = (res.socket as unknown as { getPeerX509Certificate(): X509Certificate }).getPeerX509Certificate().fingerprint256;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), fingerprint }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** servedHttps retries (a bounded number of times, 100 ms apart) until the tunnel is up and the answer is not 503. */
async function servedHttps(address: string, servername: string, ca: string): Promise<Answer> {
  let last: unknown;
  for (let i = 0; i < 100; i++) {
    try {
      const answer = await getHttps(address, servername, ca);
      if (answer.status !== 503) return answer;
      last = answer;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${servername} on ${address} never answered over HTTPS: last ${String(last)}`);
}

describe('operator: an HTTPS Gateway listener terminates in the cluster with its Secret', () => {
  let store: Store;
  let running: StoreEdge;
  let backend: TestBackend;
  let objects: ListedObjects;
  let secrets: ClusterSecrets;
  let reader: SecretReader;
  let certificates: AcceptedCertificates;
  let operator: Operator;
  let pair: TestCertificate;
  let synced: ((r: SyncResult) => void)[];

  before(() => {
    pair = selfSignedCertificate(['shop.example.com']);
  });

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store, storeEdgeConfig('unused', { addressPorts: [{ port: TLS_PORT, protocol: 'tls' }] }));
    const seeded = await seedAccount(store);
    const client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    backend = await startHttpBackend('shop');
    objects = new ListedObjects();
    objects.items = httpsGateway(backend.port);
    secrets = new ClusterSecrets();
    secrets.put('shop-cert', pair, '1');
    secrets.secrets.set('shop/broken-cert', { metadata: { name: 'broken-cert', namespace: 'shop', resourceVersion: '1' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'not pem', 'tls.key': 'not pem' } });
    reader = new SecretReader(secrets, { refreshMs: 0 });
    certificates = new AcceptedCertificates();
    synced = [];
    ({ operator } = wireOperator({
      objects,
      edge: running,
      client,
      reconciler: { clusterId: 'east', addressPool: '127.77.0.0/16' },
      certificates,
      options: { secrets: reader, onSynced: (r) => synced.shift()?.(r) },
    }));
  });

  afterEach(async () => {
    await operator.stop();
    await running.edge.close();
    await store.close();
    await backend.close();
  });

  const listenerCondition = (result: SyncResult, listener: string, type: string) => {
    const status = result.state.statuses.find((s) => s.ref.kind === 'Gateway')?.status as { listeners: { name: string; conditions: { type: string; status: string; reason: string; message: string }[] }[] };
    return status.listeners.find((l) => l.name === listener)?.conditions.find((c) => c.type === type);
  };

  it('serves HTTPS on the Gateway address with the Secret’s certificate, reports the malformed one, and serves a rotated certificate after the refresh', async () => {
    const result = await operator.start();
    const address = result.edge?.addresses.get('binding/address/shop/gw');
    expect(address).to.match(/^127\.77\.\d+\.\d+$/);
    expect(listenerCondition(result, 'https', 'ResolvedRefs')).to.include({ status: 'True' });
    expect(listenerCondition(result, 'broken', 'ResolvedRefs')).to.include({
      status: 'False',
      reason: 'InvalidCertificateRef',
      message: 'certificateRef shop/broken-cert is not a usable certificate: tls.crt holds no PEM certificate (no BEGIN CERTIFICATE block)',
    });
    expect(certificates.names()).to.deep.equal(['shop/shop-cert']);

    const answer = await servedHttps(address!, 'shop.example.com', pair.cert);
    expect(answer.status).to.equal(200);
    expect((JSON.parse(answer.body) as EchoReply).backend).to.equal('shop');
    expect(answer.fingerprint).to.equal(new X509Certificate(pair.cert).fingerprint256);
    // the broken listener is not served: its Secret never reached the data plane (the only
    // certificate it can present is shop-cert's), and no listener routes its hostname
    const broken = await getHttps(address!, 'broken.example.com', undefined);
    expect(broken.fingerprint).to.equal(new X509Certificate(pair.cert).fingerprint256);
    expect(broken.status).to.equal(404);

    // rotation: the Secret is rewritten; the reader's refresh finds it and the next TLS handshake presents the new certificate
    const rotated = selfSignedCertificate(['shop.example.com']);
    secrets.put('shop-cert', rotated, '2');
    const next = new Promise<SyncResult>((resolve) => synced.push(resolve));
    await reader.refresh();
    await next;
    const after = await servedHttps(address!, 'shop.example.com', rotated.cert);
    expect(after.fingerprint).to.equal(new X509Certificate(rotated.cert).fingerprint256);
  });
});
