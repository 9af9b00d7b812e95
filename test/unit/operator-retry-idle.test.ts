/**
 * The operator's loop at rest: one retry timer however often a sync fails, backing off
 * with jitter; a failure to persist the keys never keeps the minted ones from being served; a sync
 * with nothing changed makes no control-API call; and an optional kind that stays absent makes no
 * sync at all.
 */
import { expect } from 'chai';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import { EdgeReconciler, KubeObjects, Operator, TunnelKeys } from '../../src/operator/index.js';
import type { SyncResult, WatchedKind } from '../../src/operator/index.js';
import { FakeClock } from '../support/tunnel-fake-clock.js';
import { FakeEdgeControl } from '../support/fake-edge-control.js';
import { fakeKubeConfig } from '../support/fake-kubeconfig.js';
import { ChangingObjects, ListedObjects, RecordingTunnels, lbService } from '../support/operator-fakes.js';

const BASE = 'tuna.example.com';

const service = lbService;

/** KeysThatFailToPersist are in-memory keys whose persist fails while `isFailing`. */
class KeysThatFailToPersist extends TunnelKeys {
  isFailing = true;
  persisted = 0;
  override persist(): Promise<void> {
    if (this.isFailing) return Promise.reject(new Error('Secret tuna-system/tuna-tunnel-keys-07: etcd is unavailable'));
    this.persisted++;
    return super.persist();
  }
}

/** nextEvent resolves on the next call of the callback `subscribe` hands out. */
function nextEvent<T>(subscribe: (resolve: (value: T) => void) => void): Promise<T> {
  return new Promise((resolve) => subscribe(resolve));
}

describe('operator: one retry timer, and nothing done when nothing changed', () => {
  it('keeps one retry timer after repeated failures, its delay doubling with jitter up to the cap', async () => {
    const clock = new FakeClock();
    const objects = new ChangingObjects();
    let onError: (err: unknown) => void = () => undefined;
    let failures = 0;
    const operator = new Operator({
      objects,
      dataPlane: new DataPlane({ endpoints: new StaticEndpointResolver() }),
      endpoints: new StaticEndpointResolver(),
      tunnels: new RecordingTunnels(),
      reconciler: { reconcile: () => Promise.reject(new Error('the edge is down')) },
      clock,
      random: () => 0.5,
      retryMs: 1000,
      retryMaxMs: 8000,
      onError: (err) => {
        failures++;
        onError(err);
      },
    });
    await operator.start().catch(() => undefined);
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const failed = nextEvent<unknown>((r) => (onError = r));
      if (i === 0) objects.change();
      else clock.fireNext();
      await failed;
      // changes arriving meanwhile sync at once, and leave one timer behind, not one more
      if (i === 3) {
        const again = nextEvent<unknown>((r) => (onError = r));
        objects.change();
        await again;
      }
      expect(clock.pending(), `timers after failure ${failures}`).to.have.length(1);
      delays.push(clock.pending()[0]?.ms ?? 0);
    }
    // equal jitter with random 0.5: three quarters of 1, 2, 4, 8 s, capped at 8 s
    expect(delays).to.deep.equal([750, 1500, 3000, 6000, 6000, 6000, 6000, 6000]);
    await operator.stop();
    expect(clock.pending()).to.have.length(0);
  });

  it('attaches a new binding while its key is being persisted, and ends the sync only once the write has settled', async () => {
    let release: () => void = () => undefined;
    let persistStarted = 0;
    class SlowKeys extends TunnelKeys {
      override persist(): Promise<void> {
        persistStarted++;
        return new Promise<void>((resolve) => (release = resolve)).then(() => super.persist());
      }
    }
    const keys = new SlowKeys();
    const objects = new ListedObjects();
    objects.items = [service('web')];
    const tunnels = new RecordingTunnels();
    const operator = new Operator({
      objects,
      dataPlane: new DataPlane({ endpoints: new StaticEndpointResolver() }),
      endpoints: new StaticEndpointResolver(),
      tunnels,
      reconciler: new EdgeReconciler(new FakeEdgeControl(), keys, { clusterId: 'c' }),
      keyRefOf: (id) => keys.forTunnel(id)?.keyId,
      translate: { baseDomain: BASE },
    });
    let isDone = false;
    const started = operator.start().then((r) => ((isDone = true), r));
    for (let i = 0; i < 100 && tunnels.applied.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(persistStarted, 'the key Secret write has begun').to.equal(1);
    expect(tunnels.applied.at(-1), 'the binding is handed to the tunnels before the write ends').to.deep.equal([`binding/host/web-default.${BASE}`]);
    expect(isDone, 'the sync waits for the write').to.equal(false);
    release();
    expect((await started).edge?.persistError).to.equal(undefined);
    await operator.stop();
  });

  it('serves the keys it minted when they cannot be persisted, retries the persist, and calls the edge no more', async () => {
    const clock = new FakeClock();
    const objects = new ChangingObjects();
    objects.items = [service('web')];
    const control = new FakeEdgeControl();
    const keys = new KeysThatFailToPersist();
    const tunnels = new RecordingTunnels();
    let onError: (err: unknown) => void = () => undefined;
    let onSynced: (r: SyncResult) => void = () => undefined;
    const operator = new Operator({
      objects,
      dataPlane: new DataPlane({ endpoints: new StaticEndpointResolver() }),
      endpoints: new StaticEndpointResolver(),
      tunnels,
      reconciler: new EdgeReconciler(control, keys, { clusterId: 'c' }),
      keyRefOf: (id) => keys.forTunnel(id)?.keyId,
      translate: { baseDomain: BASE },
      clock,
      random: () => 0.5,
      onError: (err) => onError(err),
      onSynced: (r) => onSynced(r),
    });
    const first = await operator.start();
    expect(first.edge?.persistError?.message).to.include('etcd is unavailable');
    expect(first.edge?.ready).to.deep.equal(new Set([`binding/host/web-default.${BASE}`]));
    expect(tunnels.applied.at(-1), 'served all the same').to.deep.equal([`binding/host/web-default.${BASE}`]);

    expect(clock.pending(), 'the persist is retried').to.have.length(1);

    // the change loop's sync hears of the failure too, and leaves one retry timer
    const heard = nextEvent<unknown>((r) => (onError = r));
    objects.change();
    expect(String(await heard)).to.include('etcd is unavailable');
    expect(clock.pending()).to.have.length(1);
    const calls = control.total();

    keys.isFailing = false;
    const synced = nextEvent<SyncResult>((r) => (onSynced = r));
    clock.fireNext();
    expect((await synced).edge?.persistError).to.equal(undefined);
    expect(keys.persisted).to.equal(1);
    expect(control.total(), 'no control-API call: nothing changed at the edge').to.equal(calls);
    expect(control.calls).to.include({ mintTunnelKey: 1, reserve: 1 });
    expect(clock.pending(), 'no retry after a success').to.have.length(0);
    await operator.stop();
  });

  it('makes no control-API call on a sync with nothing changed', async () => {
    const objects = new ListedObjects();
    objects.items = [service('a'), service('b')];
    const control = new FakeEdgeControl();
    const operator = new Operator({
      objects,
      dataPlane: new DataPlane({ endpoints: new StaticEndpointResolver() }),
      endpoints: new StaticEndpointResolver(),
      tunnels: new RecordingTunnels(),
      reconciler: new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c' }),
      translate: { baseDomain: BASE },
    });
    await operator.start();
    expect(control.calls).to.deep.equal({ listReservations: 1, listTunnelKeys: 1, reserve: 2, mintTunnelKey: 2, revokeTunnelKey: 0, release: 0 });
    for (let i = 0; i < 5; i++) expect((await operator.sync()).edge?.ready.size).to.equal(2);
    expect(control.total()).to.equal(6);
    await operator.stop();
  });
});

/**
 * AbsentCrdApi serves core v1 Services (one LoadBalancer Service, watches held open) and answers
 * 404 for the tuna.dev group, as an apiserver without tuna's CRDs does; it counts those lookups.
 */
class AbsentCrdApi {
  readonly server: Server = createServer((req, res) => this.#answer(req, res));
  absentLookups = 0;
  readonly #watches = new Set<ServerResponse>();

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const w of this.#watches) w.end();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  #answer(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const json = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/api/v1') return json(200, { kind: 'APIResourceList', groupVersion: 'v1', resources: [{ name: 'services', namespaced: true, kind: 'Service', verbs: ['list', 'watch'] }] });
    if (url.pathname.startsWith('/apis/tuna.dev')) {
      this.absentLookups++;
      return json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'the server could not find the requested resource' });
    }
    if (url.pathname === '/api/v1/services' && url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      this.#watches.add(res);
      return;
    }
    if (url.pathname === '/api/v1/services') return json(200, { kind: 'ServiceList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [{ ...service('web'), metadata: { name: 'web', namespace: 'default', uid: 'uid-web', resourceVersion: '7' } }] });
    json(404, { kind: 'Status', code: 404, reason: 'NotFound' });
  }
}

describe('operator: an optional kind that stays absent', () => {
  const kinds: WatchedKind[] = [
    { apiVersion: 'v1', kind: 'Service', group: '', plural: 'services', versions: ['v1'], path: '/api/v1/services', optional: false },
    { apiVersion: 'tuna.dev/v1alpha1', kind: 'Tunnel', group: 'tuna.dev', plural: 'tunnels', versions: ['v1alpha1'], path: '/apis/tuna.dev/v1alpha1/tunnels', optional: true },
  ];
  let api: AbsentCrdApi;
  let operator: Operator | undefined;

  beforeEach(() => {
    api = new AbsentCrdApi();
  });

  afterEach(async () => {
    await operator?.stop();
    operator = undefined;
    await api.close();
  });

  it('causes no sync and no control-API call while it is looked for again and again', async () => {
    const objects = new KubeObjects(fakeKubeConfig(await api.listen()), { kinds, retryMs: 10, debounceMs: 5 });
    const control = new FakeEdgeControl();
    let syncs = 0;
    operator = new Operator({
      objects,
      dataPlane: new DataPlane({ endpoints: new StaticEndpointResolver() }),
      endpoints: new StaticEndpointResolver(),
      tunnels: new RecordingTunnels(),
      reconciler: new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c' }),
      translate: { baseDomain: BASE },
      onSynced: () => syncs++,
    });
    const first = await operator.start();
    expect(first.edge?.ready).to.deep.equal(new Set([`binding/host/web-default.${BASE}`]));
    expect(objects.absentKinds()).to.deep.equal(['Tunnel.tuna.dev/v1alpha1']);
    const firstCalls = control.total();
    const lookupsUntil = async (count: number): Promise<void> => {
      // bounded: 400 waits of 10 ms at most
      for (let i = 0; i < 400 && api.absentLookups < count; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(api.absentLookups, 'the kind was looked for again').to.be.at.least(count);
    };
    // the informer's first events (the listed Service) may bring one more sync, which calls nothing
    await lookupsUntil(api.absentLookups + 3);
    const syncsBefore = syncs;
    expect(syncsBefore).to.be.at.most(2);
    expect(control.total(), 'control-API calls after the first sync').to.equal(firstCalls);
    // the idle period: twenty more lookups of the absent kind
    await lookupsUntil(api.absentLookups + 20);
    // a change would have been debounced for 5 ms: let one pass before counting
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(syncs, 'syncs over the idle period').to.equal(syncsBefore);
    expect(control.total(), 'control-API calls over the idle period').to.equal(firstCalls);
  });
});
