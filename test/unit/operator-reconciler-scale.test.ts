/**
 * The edge reconciler at scale, against a fake control API that counts its calls:
 * reservations and keys run a bounded number at a time, a reconcile with nothing to change makes
 * no call, a reconcile that yields lets a new binding go first, and a failure to persist the keys
 * is reported, not thrown. The status writer patches a bounded number at a time.
 */
import { expect } from 'chai';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubernetesObject } from '@kubernetes/client-node';
import { emptyGraph } from '../../src/model/index.js';
import type { Binding, ObjectStatus, RouteGraph } from '../../src/model/index.js';
import { EdgeReconciler, StatusWriter, TunnelKeys } from '../../src/operator/index.js';
import { FakeEdgeControl } from '../support/fake-edge-control.js';
import { fakeKubeConfig } from '../support/fake-kubeconfig.js';

const hostBinding = (name: string): Binding => ({
  id: `binding/host/${name}.tuna.example.com`,
  kind: 'host',
  hostnames: [`${name}.tuna.example.com`],
  source: { group: 'networking.k8s.io', kind: 'Ingress', namespace: 'default', name },
});
const graphOf = (bindings: Binding[]): RouteGraph => ({ ...emptyGraph(), bindings });
const hosts = (n: number, prefix = 'web'): Binding[] => Array.from({ length: n }, (_, i) => hostBinding(`${prefix}-${i}`));
/** tick lets a call held at the gate answer on a later turn of the event loop */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** FailingKeys are in-memory keys whose persist always fails. */
class FailingKeys extends TunnelKeys {
  override persist(): Promise<void> {
    return Promise.reject(new Error('Secret tuna-system/tuna-tunnel-keys-03: Too long'));
  }
}

describe('operator: the edge reconciler at scale', () => {
  it('reserves and mints for 500 bindings with at most `concurrency` calls in flight, then calls nothing when nothing changed', async () => {
    const control = new FakeEdgeControl();
    control.gate = tick;
    const keys = new TunnelKeys();
    const reconciler = new EdgeReconciler(control, keys, { clusterId: 'c', concurrency: 6 });
    const graph = graphOf(hosts(500));
    const report = await reconciler.reconcile(graph);
    expect(report).to.include({ reserved: 500, minted: 500, listed: true });
    expect(report.ready.size).to.equal(500);
    expect(control.calls).to.deep.equal({ listReservations: 1, listTunnelKeys: 1, reserve: 500, mintTunnelKey: 500, revokeTunnelKey: 0, release: 0 });
    expect(control.maxInFlight).to.equal(6);

    const again = await reconciler.reconcile(graph);
    expect(again).to.include({ reserved: 0, minted: 0, released: 0, revoked: 0 });
    expect(again.listed).to.equal(undefined);
    expect(again.ready.size).to.equal(500);
    expect(control.total(), 'no call on a reconcile with nothing to change').to.equal(1002);
  });

  it('releases 300 bindings that left with the bound, and lists again after a failed call', async () => {
    const control = new FakeEdgeControl();
    control.gate = tick;
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', concurrency: 4 });
    await reconciler.reconcile(graphOf(hosts(400)));
    control.maxInFlight = 0;
    const gone = await reconciler.reconcile(graphOf(hosts(100)));
    expect(gone).to.include({ released: 300, revoked: 300 });
    expect(control.maxInFlight).to.equal(4);
    expect(control.reservations.size).to.equal(100);

    // a call that fails drops what was cached: the next reconcile lists the edge again
    control.gate = (method) => (method === 'mintTunnelKey' ? Promise.reject(new Error('edge unreachable')) : Promise.resolve());
    const failed = await reconciler.reconcile(graphOf(hosts(101))).then(
      () => 'reconciled',
      (err: Error) => err.message,
    );
    expect(failed).to.equal('edge unreachable');
    control.gate = undefined;
    const lists = control.calls.listReservations;
    const after = await reconciler.reconcile(graphOf(hosts(101)));
    expect(after).to.include({ listed: true, reserved: 0, minted: 1 });
    expect(control.calls.listReservations).to.equal(lists + 1);
  });

  it('yields when asked, lets nothing go meanwhile, and takes a binding it had not seen before first', async () => {
    const control = new FakeEdgeControl();
    control.gate = tick;
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', concurrency: 4 });
    const batch = hosts(1000, 'batch');
    let started = 0;
    const first = await reconciler.reconcile(graphOf(batch), () => true, { shouldYield: () => ++started > 40 });
    // asked from the fifth binding on (one round of four always runs): 4 + 40 started
    expect(first.deferred).to.have.length(1000 - 44);
    expect(first).to.include({ reserved: 44, minted: 44, released: 0, revoked: 0 });

    // a new Ingress arrives: the next reconcile serves it before the rest of the batch
    const fresh = hostBinding('new-one');
    const before = control.log.length;
    const second = await reconciler.reconcile(graphOf([...batch, fresh]));
    expect(second.deferred).to.equal(undefined);
    const order = control.log.slice(before);
    expect(order.indexOf(`reserve ${fresh.hostnames[0]}`), 'calls before the new binding is reserved').to.be.below(4);
    expect(order.indexOf(`mintTunnelKey ${fresh.hostnames[0]}`), 'calls before its key is minted').to.be.below(8);
    expect(second.ready.size).to.equal(1001);
    expect(second).to.include({ reserved: 957, minted: 957 });
  });

  it('after a reconcile that yielded, serves the bindings new since then first and defers the rest to the next', async () => {
    const control = new FakeEdgeControl();
    control.gate = tick;
    const reconciler = new EdgeReconciler(control, new TunnelKeys(), { clusterId: 'c', concurrency: 4 });
    const batch = hosts(1000, 'batch');
    let started = 0;
    // it yields, but only after one round: a stream of changes cannot stop all progress
    const first = await reconciler.reconcile(graphOf(batch), () => true, { shouldYield: () => ++started > 0 });
    expect(first).to.include({ reserved: 4, minted: 4 });
    const fresh = [hostBinding('new-one'), hostBinding('new-two')];
    const second = await reconciler.reconcile(graphOf([...batch, ...fresh]), () => true, { shouldYield: () => false });
    expect(second).to.include({ reserved: 2, minted: 2, released: 0 });
    expect([...second.ready].sort()).to.deep.equal(fresh.map((b) => b.id).sort());
    // the batch waits for the next reconcile (four of it hold their keys already and are served)
    expect(second.deferred).to.have.length(1000);
    const third = await reconciler.reconcile(graphOf([...batch, ...fresh]), () => true, { shouldYield: () => false });
    expect(third.deferred).to.equal(undefined);
    expect(third).to.include({ reserved: 996, minted: 996 });
    expect(third.ready.size).to.equal(1002);
  });

  it('reports a failure to persist the keys and still reports the minted ones ready', async () => {
    const control = new FakeEdgeControl();
    const keys = new FailingKeys();
    const report = await new EdgeReconciler(control, keys, { clusterId: 'c' }).reconcile(graphOf(hosts(3)));
    expect(report.persistError?.message).to.include('tuna-tunnel-keys-03');
    expect(report.ready.size).to.equal(3);
    expect(keys.size).to.equal(3);
  });
});

describe('operator: the status writer patches in parallel, with a bound', () => {
  let server: Server;
  let inFlight = 0;
  let maxInFlight = 0;
  let patches = 0;

  beforeEach(async () => {
    inFlight = 0;
    maxInFlight = 0;
    patches = 0;
    // each PATCH is held until five are in flight (or all forty arrived): a writer that sent one at
    // a time would wait forever, one that sent more than five would pass five in flight
    let held: (() => void)[] = [];
    const releaseAll = (): void => {
      const answers = held;
      held = [];
      for (const answer of answers) answer();
    };
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        patches++;
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        held.push(() => {
          inFlight--;
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"apiVersion":"tuna.dev/v1alpha1","kind":"Tunnel","metadata":{"name":"x"}}');
        });
        if (inFlight >= 5 || patches === 40) releaseAll();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('writes 40 statuses with at most `concurrency` PATCHes in flight', async () => {
    const writer = new StatusWriter(fakeKubeConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), { concurrency: 5 });
    const objects = new Map<string, KubernetesObject>();
    const statuses: ObjectStatus[] = [];
    for (let i = 0; i < 40; i++) {
      const name = `t${i}`;
      objects.set(name, { apiVersion: 'tuna.dev/v1alpha1', kind: 'Tunnel', metadata: { name, namespace: 'default' } });
      statuses.push({ ref: { group: 'tuna.dev', kind: 'Tunnel', namespace: 'default', name }, status: { url: `https://${name}.tuna.example.com` }, conditions: [], events: [] });
    }
    const report = await writer.write(statuses, (ref) => objects.get(ref.name));
    expect(report).to.deep.equal({ written: 40, unchanged: 0, gone: 0, failed: 0 });
    expect(patches).to.equal(40);
    expect(maxInFlight).to.equal(5);
  });
});
