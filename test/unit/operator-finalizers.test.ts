/**
 * The finalizer `tuna.dev/reservation`: the Operator adds it to live Domains,
 * TCPPorts and Tunnels and removes it from deleted ones only once the reconciler let go of their
 * reservations; `Finalizers` patches `metadata.finalizers` with the resourceVersion it read, and
 * records a Normal Event for a retained reservation, against a fake apiserver on loopback.
 */
import { expect } from 'chai';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubernetesObject } from '@kubernetes/client-node';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { EdgeReconciler, Finalizers, Operator, RESERVATION_FINALIZER, TunnelKeys, emptyCrdReport } from '../../src/operator/index.js';
import type { CrdReport, DeletingObject } from '../../src/operator/index.js';
import { FakeReservingEdge } from '../support/fake-reserving-edge.js';
import { fakeKubeConfig } from '../support/fake-kubeconfig.js';
import { ListedObjects, RecordingTunnels } from '../support/operator-fakes.js';

const BASE = 'tuna.example.com';
const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: 'shop', uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z', ...extra });
const domain = (name: string, extra: Record<string, unknown> = {}, reclaimPolicy = 'Delete'): KubernetesObject =>
  ({ apiVersion: 'tuna.dev/v1alpha1', kind: 'Domain', metadata: meta(name, extra), spec: { subdomain: name, reclaimPolicy } }) as unknown as KubernetesObject;

/** RecordingFinalizers records what the operator asks of the finalizer writer. */
class RecordingFinalizers {
  calls: { live: string[]; deleting: string[]; finalized: string[] }[] = [];
  apply(live: readonly KubernetesObject[], deleting: readonly DeletingObject[], crd: CrdReport) {
    this.calls.push({ live: live.map((o) => o.metadata?.name ?? ''), deleting: deleting.map((d) => d.ref.name), finalized: [...crd.finalized] });
    return Promise.resolve({ added: 0, removed: 0, failed: 0, stale: 0 });
  }
}

describe('operator: the finalizer tuna.dev/reservation', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('releases a deleted Domain’s reservation at the edge in the same sync that hands it to the finalizers as finalized, and does not publish it', async () => {
    const edge = new FakeReservingEdge(BASE);
    const objects = new ListedObjects();
    objects.items = [domain('shop'), domain('blog')];
    const finalizers = new RecordingFinalizers();
    const endpoints = new StaticEndpointResolver();
    const operator = new Operator({
      objects,
      dataPlane: new DataPlane({ endpoints }),
      endpoints,
      tunnels: new RecordingTunnels(),
      reconciler: new EdgeReconciler(edge, new TunnelKeys(), { clusterId: 'c1', resyncMs: 0 }),
      finalizers,
      translate: { baseDomain: BASE },
    });
    const first = await operator.start();
    expect(first.state.graph.reservations.map((r) => r.id)).to.deep.equal([`reservation/domain/blog.${BASE}`, `reservation/domain/shop.${BASE}`]);
    expect(edge.byValue(`shop.${BASE}`)).to.not.equal(undefined);
    objects.items = [domain('shop', { deletionTimestamp: '2026-01-02T00:00:00Z', finalizers: [RESERVATION_FINALIZER] }), domain('blog')];
    const second = await operator.sync();
    expect(second.state.graph.reservations.map((r) => r.id)).to.deep.equal([`reservation/domain/blog.${BASE}`]);
    expect(edge.byValue(`shop.${BASE}`)).to.equal(undefined);
    expect(finalizers.calls).to.deep.equal([
      { live: ['shop', 'blog'], deleting: [], finalized: [] },
      { live: ['blog'], deleting: ['shop'], finalized: ['tuna.dev/Domain/shop/shop'] },
    ]);
    await operator.stop();
  });

  it('does not finalize when the release fails: the sync fails and the finalizer stays', async () => {
    const edge = new FakeReservingEdge(BASE);
    const objects = new ListedObjects();
    objects.items = [domain('shop')];
    const finalizers = new RecordingFinalizers();
    const endpoints = new StaticEndpointResolver();
    const operator = new Operator({ objects, dataPlane: new DataPlane({ endpoints }), endpoints, tunnels: new RecordingTunnels(), reconciler: new EdgeReconciler(edge, new TunnelKeys(), { clusterId: 'c1', resyncMs: 0 }), finalizers, translate: { baseDomain: BASE } });
    await operator.start();
    edge.release = () => Promise.reject(new Error('edge down'));
    objects.items = [domain('shop', { deletionTimestamp: '2026-01-02T00:00:00Z', finalizers: [RESERVATION_FINALIZER] })];
    let failure: unknown;
    await operator.sync().catch((err: unknown) => (failure = err));
    expect(String(failure)).to.contain('edge down');
    expect(finalizers.calls).to.have.length(1);
    await operator.stop();
  });

  it('patches metadata.finalizers alone (append, or a guarded removal at the index read), keeping other finalizers, and records ReservationRetained before removing its own', async () => {
    const requests: { method: string; url: string; type: string; body: unknown }[] = [];
    server = createServer((req, res) => {
      let data = '';
      req.on('data', (c: Buffer) => (data += c.toString()));
      req.on('end', () => {
        requests.push({ method: req.method ?? '', url: req.url ?? '', type: req.headers['content-type'] ?? '', body: JSON.parse(data || '{}') as unknown });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Status', metadata: {} }));
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const writer = new Finalizers(fakeKubeConfig(`http://127.0.0.1:${port}`));
    const gone = domain('kept', { deletionTimestamp: '2026-01-02T00:00:00Z', finalizers: ['other.io/hold', RESERVATION_FINALIZER] }, 'Retain');
    const crd = emptyCrdReport();
    crd.finalized.add('tuna.dev/Domain/shop/kept');
    crd.retained.set('tuna.dev/Domain/shop/kept', 'reclaimPolicy Retain: the edge keeps domain kept.tuna.example.com for the account');
    const deleting: DeletingObject[] = [{ object: gone, ref: { group: 'tuna.dev', kind: 'Domain', namespace: 'shop', name: 'kept' }, reclaimPolicy: 'Retain' }];
    const live = [domain('new'), domain('other', { finalizers: ['other.io/hold'] }), domain('done', { finalizers: [RESERVATION_FINALIZER] })];
    const report = await writer.apply(live, deleting, crd);
    expect(report).to.deep.equal({ added: 2, removed: 1, failed: 0, stale: 0 });
    // the cache has not caught up with those patches yet: nothing is patched twice
    expect(await writer.apply(live, deleting, emptyCrdReport())).to.deep.equal({ added: 0, removed: 0, failed: 0, stale: 0 });
    expect(requests.filter((r) => r.method === 'PATCH')).to.have.length(3);
    const patches = requests.filter((r) => r.method === 'PATCH').map((r) => [r.url.split('?')[0], r.type, r.body]);
    expect(patches).to.have.deep.members([
      ['/apis/tuna.dev/v1alpha1/namespaces/shop/domains/new', 'application/json-patch+json', [{ op: 'add', path: '/metadata/finalizers', value: [RESERVATION_FINALIZER] }]],
      [
        '/apis/tuna.dev/v1alpha1/namespaces/shop/domains/other',
        'application/json-patch+json',
        [
          { op: 'test', path: '/metadata/finalizers', value: ['other.io/hold'] },
          { op: 'add', path: '/metadata/finalizers/-', value: RESERVATION_FINALIZER },
        ],
      ],
      [
        '/apis/tuna.dev/v1alpha1/namespaces/shop/domains/kept',
        'application/json-patch+json',
        [
          { op: 'test', path: '/metadata/finalizers/1', value: RESERVATION_FINALIZER },
          { op: 'remove', path: '/metadata/finalizers/1' },
        ],
      ],
    ]);
    const event = requests.find((r) => r.method === 'POST');
    expect(event?.url.split('?')[0]).to.equal('/api/v1/namespaces/shop/events');
    expect(event?.body as Record<string, unknown>).to.include({ type: 'Normal', reason: 'ReservationRetained', message: 'reclaimPolicy Retain: the edge keeps domain kept.tuna.example.com for the account' });
    expect(requests.findIndex((r) => r.method === 'POST')).to.be.lessThan(requests.findIndex((r) => r.url.includes('/domains/kept')));
  });

  it('counts a patch the apiserver refuses because the cached copy was behind (422 failed test, 404 gone) as stale, not as an error', async () => {
    let answer = 422;
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.statusCode = answer;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Status', status: 'Failure', code: answer, reason: answer === 404 ? 'NotFound' : 'Invalid', message: 'the server rejected our request' }));
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const errors: string[] = [];
    const writer = new Finalizers(fakeKubeConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), { onError: (ref) => errors.push(ref.name) });
    expect(await writer.apply([domain('other', { finalizers: ['other.io/hold'] })], [], emptyCrdReport())).to.deep.equal({ added: 0, removed: 0, failed: 0, stale: 1 });
    answer = 500;
    expect(await writer.apply([domain('other', { finalizers: ['other.io/hold'], resourceVersion: '8' })], [], emptyCrdReport())).to.deep.equal({ added: 0, removed: 0, failed: 1, stale: 0 });
    expect(errors).to.deep.equal(['other']);
  });
});
