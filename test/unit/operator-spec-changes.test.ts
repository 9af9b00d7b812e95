/**
 * What counts as a change for the operator: tuna's own status writes come back as watch
 * updates, and each of them caused a full sync, so a batch of N Ingresses cost N more syncs. An
 * update of an Ingress, Gateway API or tuna.dev object that keeps its generation, labels,
 * annotations, finalizers and deletion is its status only, and is no change. And under a steady
 * stream of changes the debounce still lets a sync run once `maxWaitMs` has passed.
 */
import { expect } from 'chai';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubernetesObject } from '@kubernetes/client-node';
import { KubeObjects, SpecChanges, WATCHED_KINDS } from '../../src/operator/index.js';
import { fakeKubeConfig } from '../support/fake-kubeconfig.js';

const INGRESS = { group: 'networking.k8s.io', kind: 'Ingress', plural: 'ingresses' };
const SERVICE = { group: '', kind: 'Service', plural: 'services' };
const ROUTE = { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', plural: 'httproutes' };

function ingress(generation: number, extra: Partial<KubernetesObject['metadata']> = {}, status: object = {}): KubernetesObject {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'apps', generation, resourceVersion: String(Math.random()), ...extra }, status } as KubernetesObject;
}

describe('operator: SpecChanges', () => {
  it('takes a status-only update of an Ingress as no change, and a new generation as one', () => {
    const changes = new SpecChanges();
    expect(changes.isChange(INGRESS, 'add', ingress(1))).to.equal(true);
    expect(changes.isChange(INGRESS, 'update', ingress(1, {}, { loadBalancer: { ingress: [{ hostname: 'web.example.com' }] } }))).to.equal(false);
    expect(changes.isChange(INGRESS, 'update', ingress(2))).to.equal(true);
    expect(changes.isChange(INGRESS, 'update', ingress(2))).to.equal(false);
  });

  it('takes labels, annotations, finalizers and a deletion as changes', () => {
    const changes = new SpecChanges();
    changes.isChange(ROUTE, 'add', ingress(1));
    expect(changes.isChange(ROUTE, 'update', ingress(1, { labels: { a: 'b' } }))).to.equal(true);
    expect(changes.isChange(ROUTE, 'update', ingress(1, { labels: { a: 'b' }, annotations: { 'nginx.ingress.kubernetes.io/ssl-redirect': 'true' } }))).to.equal(true);
    expect(changes.isChange(ROUTE, 'update', ingress(1, { labels: { a: 'b' }, annotations: { 'nginx.ingress.kubernetes.io/ssl-redirect': 'true' }, finalizers: ['x'] }))).to.equal(true);
    const deleting = ingress(1, { labels: { a: 'b' }, annotations: { 'nginx.ingress.kubernetes.io/ssl-redirect': 'true' }, finalizers: ['x'], deletionTimestamp: new Date(0) });
    expect(changes.isChange(ROUTE, 'update', deleting)).to.equal(true);
    expect(changes.isChange(ROUTE, 'delete', deleting)).to.equal(true);
  });

  it('takes every update of a Service as a change (its generation is not kept in step with its spec)', () => {
    const changes = new SpecChanges();
    changes.isChange(SERVICE, 'add', ingress(1));
    expect(changes.isChange(SERVICE, 'update', ingress(1))).to.equal(true);
  });

  it('takes an update without a generation as a change', () => {
    const changes = new SpecChanges();
    const noGeneration = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'apps' } } as KubernetesObject;
    changes.isChange(INGRESS, 'add', noGeneration);
    expect(changes.isChange(INGRESS, 'update', noGeneration)).to.equal(true);
  });
});

/** FakeIngressApi lists one Ingress and streams the watch events the test pushes. */
class FakeIngressApi {
  readonly server: Server;
  #watch: ServerResponse | undefined;
  #waiting: (() => void)[] = [];

  constructor() {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://fake');
      if (url.pathname === '/apis/networking.k8s.io/v1') {
        const resources = [{ name: 'ingresses', singularName: 'ingress', namespaced: true, kind: 'Ingress', verbs: ['list', 'watch'] }];
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'networking.k8s.io/v1', resources }));
      }
      if (url.pathname !== '/apis/networking.k8s.io/v1/ingresses') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      if (url.searchParams.get('watch')) {
        res.flushHeaders();
        this.#watch = res;
        for (const w of this.#waiting.splice(0)) w();
        return;
      }
      const managedFields = [{ manager: 'kubectl', operation: 'Update', apiVersion: 'networking.k8s.io/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:rules': {} } } }];
      res.end(JSON.stringify({ kind: 'IngressList', apiVersion: 'networking.k8s.io/v1', metadata: { resourceVersion: '1' }, items: [ingress(1, { managedFields })] }));
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** watching settles once the informer's watch request is open. */
  watching(): Promise<void> {
    return this.#watch ? Promise.resolve() : new Promise((resolve) => this.#waiting.push(resolve));
  }

  push(object: KubernetesObject): void {
    this.#watch?.write(`${JSON.stringify({ type: 'MODIFIED', object })}\n`);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('KubeObjects: status-only updates and the longest wait', () => {
  let api: FakeIngressApi;
  let objects: KubeObjects | undefined;

  beforeEach(() => {
    api = new FakeIngressApi();
  });

  afterEach(async () => {
    await objects?.stop();
    objects = undefined;
    await api.close();
  });

  const ingressKind = WATCHED_KINDS.filter((k) => k.kind === 'Ingress');

  /** settle waits until no change is reported for a while (bounded). */
  async function quiet(count: () => number): Promise<void> {
    for (let i = 0, last = -1; i < 50 && count() !== last; i++) {
      last = count();
      await sleep(60);
    }
  }

  /** watch starts the cache and counts its changes from the moment it is quiet */
  async function watch(cache: KubeObjects): Promise<{ since: () => number }> {
    let changes = 0;
    cache.onChange(() => changes++);
    await cache.start();
    await api.watching();
    await quiet(() => changes);
    const before = changes;
    return { since: () => changes - before };
  }

  it('reports no change for a status written to an Ingress, and one for a new generation; the cache holds both', async () => {
    objects = new KubeObjects(fakeKubeConfig(await api.listen()), { kinds: ingressKind, debounceMs: 5 });
    const counted = await watch(objects);
    expect(objects.objects()[0]?.metadata, 'the listed object without its managedFields').to.not.have.property('managedFields');
    for (let i = 0; i < 5; i++) api.push(ingress(1, {}, { loadBalancer: { ingress: [{ hostname: `h${i}.example.com` }] } }));
    await sleep(200);
    expect(counted.since(), 'changes after five status-only updates').to.equal(0);
    const cached = objects.objects().find((o) => o.kind === 'Ingress') as (KubernetesObject & { status?: { loadBalancer?: { ingress?: { hostname: string }[] } } }) | undefined;
    expect(cached?.status?.loadBalancer?.ingress?.[0]?.hostname).to.equal('h4.example.com');
    expect(cached?.metadata, 'managedFields are not kept').to.not.have.property('managedFields');
    api.push(ingress(2));
    for (let i = 0; i < 100 && counted.since() === 0; i++) await sleep(10);
    expect(counted.since()).to.equal(1);
  });

  it('reports the first change after a quiet spell at once, and debounces the ones right after it', async function () {
    this.timeout(10_000);
    // a 2 s debounce: a report within its first half is a leading one
    objects = new KubeObjects(fakeKubeConfig(await api.listen()), { kinds: ingressKind, debounceMs: 2_000, maxWaitMs: 60_000 });
    let changes = 0;
    objects.onChange(() => changes++);
    await objects.start();
    await api.watching();
    await sleep(2_200); // quiet since the initial list's report
    const before = changes;
    api.push(ingress(2));
    for (let i = 0; i < 100 && changes === before; i++) await sleep(10);
    expect(changes - before, 'the lone change, reported without waiting out the debounce').to.equal(1);
    api.push(ingress(3));
    api.push(ingress(4));
    await sleep(200);
    expect(changes - before, 'the changes right after it wait for quiet').to.equal(1);
  });

  it('reports a change while changes keep arriving closer together than the debounce, once maxWaitMs has passed', async () => {
    objects = new KubeObjects(fakeKubeConfig(await api.listen()), { kinds: ingressKind, debounceMs: 300, maxWaitMs: 150 });
    const counted = await watch(objects);
    // 40 spec changes 20 ms apart: never 300 ms of quiet until they stop
    for (let g = 2; g < 42; g++) {
      api.push(ingress(g));
      await sleep(20);
    }
    expect(counted.since(), 'changes reported during the stream').to.be.at.least(2);
  });
});
