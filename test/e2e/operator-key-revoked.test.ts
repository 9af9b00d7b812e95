import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { Operator, TunnelKeys } from '../../src/operator/index.js';
import { startHttpBackend } from '../support/backend-servers.js';
import type { EchoReply, TestBackend } from '../support/backend-servers.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { wireOperator } from '../support/operator-wiring.js';
import { ListedObjects } from '../support/operator-fakes.js';

// A key or a reservation taken from the operator out of band, through the control API, while its
// tunnel serves: the edge closes the tunnel and refuses the key when the agent dials again, and the
// operator, hearing the refusal, lists the edge again and mints a new key (or reserves the host
// again and mints), so the route answers again within seconds, with no change in the cluster and
// well before the periodic relist (ten minutes).
const HOST = `shop.${BASE_DOMAIN}`;
const BINDING = `binding/host/${HOST}`;
const obj = (o: Record<string, unknown>): KubernetesObject => o as KubernetesObject;

function objects(backendPort: number): KubernetesObject[] {
  return [
    obj({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'shop', namespace: 'shop', uid: 'uid-shop', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { ingressClassName: 'tuna', rules: [{ host: HOST, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
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

function get(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/', headers: { host: HOST }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** answered waits (bounded: 15 s, 100 ms apart) until the host answers 200 from the backend, and says after how many tries. */
async function answered(port: number): Promise<number> {
  let last: unknown;
  for (let i = 0; i < 150; i++) {
    try {
      const answer = await get(port);
      if (answer.status === 200) {
        expect((JSON.parse(answer.body) as EchoReply).backend).to.equal('web');
        return i;
      }
      last = answer.status;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${HOST} did not answer again within 15 s: last ${String(last)}`);
}

describe('operator: a key or reservation taken out of band under traffic', () => {
  let store: Store;
  let running: StoreEdge;
  let backend: TestBackend;
  let operator: Operator;
  let keys: TunnelKeys;
  let client: ControlClient;

  beforeEach(async () => {
    store = await openSqliteStore(':memory:');
    running = await startStoreEdge(store);
    const seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${running.controlPort}`) }, seeded.reservationsToken);
    backend = await startHttpBackend('web');
    const listed = new ListedObjects();
    listed.items = objects(backend.port);
    ({ operator, keys } = wireOperator({ objects: listed, edge: running, client, reconciler: { clusterId: 'east' } }));
    await operator.start();
    await answered(running.httpPort);
  });

  afterEach(async () => {
    await operator.stop();
    await running.edge.close();
    await store.close();
    await backend.close();
  });

  it('mints a new key when its key is revoked, and the host answers again', async () => {
    const first = keys.get(BINDING)?.keyId ?? '';
    expect(first).to.not.equal('');
    await client.revokeTunnelKey(first);
    await answered(running.httpPort);
    const second = keys.get(BINDING)?.keyId ?? '';
    expect(second).to.not.equal(first);
    const live = (await client.listTunnelKeys({ 'tuna.dev/cluster': 'east' })).tunnelKeys.filter((k) => k.revokedAt === null).map((k) => k.id);
    expect(live).to.deep.equal([second]);
  });

  it('reserves the host again when its reservation is released, and the host answers again', async () => {
    const [before] = (await client.listReservations({ 'tuna.dev/cluster': 'east' })).reservations;
    expect(before?.value).to.equal(HOST);
    await client.release(before?.id ?? '');
    await answered(running.httpPort);
    const after = (await client.listReservations({ 'tuna.dev/cluster': 'east' })).reservations;
    expect(after.map((r) => r.value)).to.deep.equal([HOST]);
    expect(after[0]?.id).to.not.equal(before?.id);
  });
});
