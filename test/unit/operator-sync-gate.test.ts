import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import type { KubernetesObject } from '@kubernetes/client-node';
import { DataPlane, StaticEndpointResolver } from '../../src/dataplane/index.js';
import type { RouteGraph } from '../../src/model/index.js';
import type { KnowsOwnerGone, PendingBinding, ReconcileReport } from '../../src/operator/edge-reconciler.js';
import { CacheNotSyncedError, knowsOwnerGoneFrom } from '../../src/operator/object-source.js';
import type { ObjectSource } from '../../src/operator/object-source.js';
import { Operator } from '../../src/operator/operator.js';
import { RecordingTunnels } from '../support/operator-fakes.js';

const host = 'web.tuna.test';

/** clusterObjects is an Ingress of class tuna on `host` with its class and Service. */
function clusterObjects(): KubernetesObject[] {
  return [
    { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'tuna' }, spec: { controller: 'tuna.dev/ingress-controller' } } as KubernetesObject,
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80 }] } } as KubernetesObject,
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'web', namespace: 'default', uid: 'u1' },
      spec: { ingressClassName: 'tuna', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
    } as KubernetesObject,
  ];
}

/** FakeObjects is an object cache whose listing the test completes by hand. */
class FakeObjects implements ObjectSource {
  listed = new Set<string>();
  absent: string[] = [];
  #synced = false;
  #listeners: (() => void)[] = [];
  #release: (() => void) | undefined;
  readonly #started = new Promise<void>((resolve) => (this.#release = resolve));
  #objects: KubernetesObject[] = [];

  onChange(callback: () => void): void {
    this.#listeners.push(callback);
  }
  start(): Promise<void> {
    return this.#started;
  }
  /** finishListing makes the cache complete, as the last kind's list arriving does */
  finishListing(objects: KubernetesObject[]): void {
    this.#objects = objects;
    this.#synced = true;
    this.#release?.();
  }
  change(): void {
    for (const l of this.#listeners) l();
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
  objects(): KubernetesObject[] {
    return this.#objects;
  }
  hasSynced(): boolean {
    return this.#synced;
  }
  hasListed(group: string, kind: string): boolean {
    return this.#synced && this.listed.has(`${group}/${kind}`);
  }
  absentKinds(): string[] {
    return this.absent;
  }
}

class FakeLeader extends EventEmitter {
  leading = false;
  isLeader(): boolean {
    return this.leading;
  }
  lead(): void {
    this.leading = true;
    this.emit('started-leading');
  }
}

class RecordingReconciler {
  graphs: RouteGraph[] = [];
  knowledge: KnowsOwnerGone[] = [];
  pending: PendingBinding[] = [];
  reconcile(graph: RouteGraph, knowsOwnerGone?: KnowsOwnerGone): Promise<ReconcileReport> {
    this.graphs.push(graph);
    if (knowsOwnerGone) this.knowledge.push(knowsOwnerGone);
    const held = new Set(this.pending.map((p) => p.bindingId));
    return Promise.resolve({ ready: new Set(graph.bindings.map((b) => b.id).filter((id) => !held.has(id))), addresses: new Map(), pending: this.pending, reserved: 0, minted: 0, released: 0, revoked: 0, kept: 0 });
  }
}


/** settle lets timers and promise callbacks run (the operator schedules syncs asynchronously). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('operator: the sync gate (nothing is reconciled before the cache has listed every kind)', () => {
  let objects: FakeObjects;
  let leader: FakeLeader;
  let reconciler: RecordingReconciler;
  let tunnels: RecordingTunnels;
  let operator: Operator;
  let followed: number;

  beforeEach(() => {
    objects = new FakeObjects();
    leader = new FakeLeader();
    reconciler = new RecordingReconciler();
    tunnels = new RecordingTunnels();
    followed = 0;
    const endpoints = new StaticEndpointResolver();
    operator = new Operator({
      objects,
      dataPlane: new DataPlane({ endpoints }),
      endpoints,
      tunnels,
      reconciler,
      keyRefOf: (id) => id,
      leader,
      recheckMs: 10,
      followKeys: () => {
        followed++;
        return Promise.resolve();
      },
    });
  });

  afterEach(async () => {
    await operator.stop();
  });

  it('does not reconcile when leadership arrives before the cache has listed every kind, and reconciles the full graph after', async () => {
    const started = operator.start();
    leader.lead();
    objects.change();
    await settle();
    expect(reconciler.graphs, 'no reconcile on an incomplete cache').to.deep.equal([]);
    expect(tunnels.applied, 'no tunnel change either').to.deep.equal([]);

    objects.finishListing(clusterObjects());
    await started;
    expect(reconciler.graphs.map((g) => g.bindings.map((b) => b.id))).to.deep.equal([[`binding/host/${host}`]]);
    expect(tunnels.applied).to.deep.equal([[`binding/host/${host}`]]);
  });

  it('refuses a sync asked for before the cache is complete, with code TUNA_CACHE_NOT_SYNCED', async () => {
    const err = await operator.sync().then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(CacheNotSyncedError);
    expect((err as CacheNotSyncedError).code).to.equal('TUNA_CACHE_NOT_SYNCED');
    expect(reconciler.graphs).to.deep.equal([]);
  });

  it('a replica that becomes the leader reloads the stored keys before it reconciles', async () => {
    objects.finishListing(clusterObjects());
    await operator.start();
    expect(followed, 'a follower reloads on each sync').to.equal(1);
    expect(reconciler.graphs).to.have.length(0);
    leader.lead();
    await settle();
    expect(reconciler.graphs).to.have.length(1);
    expect(followed, 'reloaded once more, on taking over').to.equal(2);
    await operator.sync();
    expect(followed, 'a leader does not reload on every sync').to.equal(2);
  });

  it('vouches for an owner’s absence only for kinds the cache has listed', async () => {
    objects.listed = new Set(['networking.k8s.io/Ingress', '/Service']);
    objects.absent = ['Tunnel.tuna.dev/v1alpha1'];
    const knows = knowsOwnerGoneFrom(objects);
    expect(knows({ group: 'networking.k8s.io', kind: 'Ingress' }), 'before the cache synced').to.equal(false);
    objects.finishListing(clusterObjects());
    expect(knows({ group: 'networking.k8s.io', kind: 'Ingress' })).to.equal(true);
    expect(knows({ group: '', kind: 'Service' })).to.equal(true);
    expect(knows({ group: 'tuna.dev', kind: 'Tunnel' }), 'an absent optional kind').to.equal(false);
    expect(knows(undefined), 'an owner of unknown kind, while a kind is absent').to.equal(false);
    objects.absent = [];
    expect(knows(undefined), 'an owner of unknown kind, every kind listed').to.equal(true);
  });
  it('syncs again on its own while a custom domain waits for verification, and not otherwise', async () => {
    objects.finishListing(clusterObjects());
    leader.leading = true;
    reconciler.pending = [{ bindingId: `binding/host/${host}`, reason: 'DomainNotVerified', message: 'verify it', txtRecord: { name: `_tuna-challenge.${host}`, value: 't' } }];
    await operator.start();
    for (let i = 0; i < 100 && reconciler.graphs.length < 3; i++) await settle();
    expect(reconciler.graphs.length, 'rechecked without a change in the cluster').to.be.at.least(3);
    reconciler.pending = [];
    // the recheck armed by the last sync still runs once; after it nothing waits
    const cleared = reconciler.graphs.length;
    for (let i = 0; i < 100 && reconciler.graphs.length < cleared + 1; i++) await settle();
    for (let i = 0; i < 5; i++) await settle();
    expect(reconciler.graphs.length, 'no recheck once nothing waits').to.equal(cleared + 1);
  });
});
