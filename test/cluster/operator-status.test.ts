// operator-status.test.ts — the status writer on a real apiserver: Ingress status.loadBalancer,
// Gateway API conditions with lastTransitionTime kept while they hold, route parents of another
// controller kept, and no write when nothing changed.
import { expect } from 'chai';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, NetworkingV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { translateObjects } from '../../src/agent/state.js';
import { refKey } from '../../src/model/index.js';
import type { ObjectStatus } from '../../src/model/index.js';
import { EventRecorder } from '../../src/operator/event-recorder.js';
import { KubeObjects } from '../../src/operator/kube-objects.js';
import { StatusWriter, objectLookup } from '../../src/operator/status-writer.js';
import { clusterConfig, runScript, waitFor } from './cluster-env.js';

const GW = 'gateway.networking.k8s.io';
const OURS = 'tuna.dev/gateway-controller';
const FOREIGN_TIME = '2026-01-01T00:00:00Z';

type Parent = { parentRef: { name: string }; controllerName: string; conditions: { type: string; status: string; lastTransitionTime: string }[] };

describe('operator: status writer on the test cluster', function () {
  this.timeout(180_000);
  const namespace = `tuna-st-${process.pid}`;
  const className = `tuna-st-${process.pid}`;
  const ingressHost = `web.${namespace}.test`;
  const routeHost = `route.${namespace}.test`;
  let core: CoreV1Api;
  let networking: NetworkingV1Api;
  let custom: CustomObjectsApi;
  let objects: KubeObjects;
  let clock = new Date('2026-11-29T10:00:00Z');
  let writer: StatusWriter;
  const writeErrors: string[] = [];

  /** ours keeps the statuses of this test's objects: other tests' objects live in the same cluster */
  const ours = (statuses: ObjectStatus[]): ObjectStatus[] => statuses.filter((s) => s.ref.namespace === namespace || (s.ref.kind === 'GatewayClass' && s.ref.name === className));
  const lookup = () => objectLookup(objects.objects());
  const translateAndWrite = async () => writer.write(ours(translateObjects(objects.objects()).statuses), lookup());
  const routeParents = async (): Promise<Parent[]> =>
    (((await custom.getNamespacedCustomObjectStatus({ group: GW, version: 'v1', namespace, plural: 'httproutes', name: 'route' })) as { status?: { parents?: Parent[] } }).status?.parents ?? []);
  const cachedRoute = (): { status?: { parents?: Parent[] } } | undefined =>
    objects.objects().find((o) => o.kind === 'HTTPRoute' && o.metadata?.namespace === namespace) as { status?: { parents?: Parent[] } } | undefined;

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    networking = config.makeApiClient(NetworkingV1Api);
    custom = config.makeApiClient(CustomObjectsApi);
    const crds = config.makeApiClient(ApiextensionsV1Api);
    const installed = await crds.readCustomResourceDefinition({ name: `httproutes.${GW}` }).then(
      () => true,
      () => false,
    );
    if (!installed) await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    objects = new KubeObjects(config, { debounceMs: 50, retryMs: 1000 });
    await objects.start();
    writer = new StatusWriter(config, { now: () => clock, onError: (ref, err) => writeErrors.push(`${refKey(ref)}: ${String(err)}`) });

    await core.createNamespacedService({ namespace, body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
    await networking.createNamespacedIngress({
      namespace,
      body: {
        metadata: { name: 'web' },
        spec: { ingressClassName: 'tuna', rules: [{ host: ingressHost, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
      },
    });
    await custom.createClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', body: { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: { name: className }, spec: { controllerName: OURS } } });
    await custom.createNamespacedCustomObject({
      group: GW,
      version: 'v1',
      namespace,
      plural: 'gateways',
      body: { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: { name: 'gw' }, spec: { gatewayClassName: className, listeners: [{ name: 'web', protocol: 'HTTP', port: 80 }] } },
    });
    await custom.createNamespacedCustomObject({
      group: GW,
      version: 'v1',
      namespace,
      plural: 'httproutes',
      body: {
        apiVersion: `${GW}/v1`,
        kind: 'HTTPRoute',
        metadata: { name: 'route' },
        spec: { parentRefs: [{ name: 'gw' }], hostnames: [routeHost], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
      },
    });
    // another controller already reports on this route for a Gateway of its own
    const foreign = { parentRef: { name: 'other-gw' }, controllerName: 'example.com/other', conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: 'theirs', observedGeneration: 1, lastTransitionTime: FOREIGN_TIME }] };
    await custom.patchNamespacedCustomObjectStatus(
      { group: GW, version: 'v1', namespace, plural: 'httproutes', name: 'route', body: { status: { parents: [foreign] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitFor('the cache to hold every object', 30_000, async () => (cachedRoute()?.status?.parents?.length === 1 && objects.objects().some((o) => o.kind === 'Ingress' && o.metadata?.namespace === namespace) ? true : undefined));
  });

  after(async () => {
    await objects?.stop();
    await custom?.deleteClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', name: className }).catch(() => undefined);
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('writes Ingress status.loadBalancer and the Gateway API statuses, keeping the other controller’s route parent', async () => {
    const report = await translateAndWrite();
    expect(writeErrors).to.deep.equal([]);
    expect(report.written).to.equal(4); // Ingress, GatewayClass, Gateway, HTTPRoute
    const ingress = await networking.readNamespacedIngressStatus({ name: 'web', namespace });
    expect(ingress.status?.loadBalancer?.ingress?.map((i) => i.hostname)).to.deep.equal([ingressHost]);
    const gatewayClass = (await custom.getClusterCustomObjectStatus({ group: GW, version: 'v1', plural: 'gatewayclasses', name: className })) as { status: { conditions: { type: string; status: string }[] } };
    expect(gatewayClass.status.conditions.find((c) => c.type === 'Accepted')?.status).to.equal('True');
    const parents = await routeParents();
    expect(parents.map((p) => [p.controllerName, p.parentRef.name])).to.deep.equal([
      ['example.com/other', 'other-gw'],
      [OURS, 'gw'],
    ]);
    expect(parents[0]?.conditions[0]?.lastTransitionTime).to.equal(FOREIGN_TIME);
    const accepted = parents[1]?.conditions.find((c) => c.type === 'Accepted');
    expect(accepted?.status).to.equal('True');
    expect(accepted?.lastTransitionTime).to.equal('2026-11-29T10:00:00Z');
  });

  it('writes nothing when nothing changed, an hour later', async () => {
    await waitFor('the cache to see the written route status', 30_000, async () => (cachedRoute()?.status?.parents?.length === 2 ? true : undefined));
    await waitFor('the cache to see the Ingress status', 30_000, async () =>
      (objects.objects().find((o) => o.kind === 'Ingress' && o.metadata?.namespace === namespace) as { status?: { loadBalancer?: { ingress?: unknown[] } } } | undefined)?.status?.loadBalancer?.ingress?.length === 1 ? true : undefined,
    );
    clock = new Date('2026-11-29T11:00:00Z');
    const report = await translateAndWrite();
    expect(report).to.include({ written: 0, failed: 0 });
    expect(report.unchanged).to.equal(4);
  });

  it('stamps a condition that changed and keeps the time of those that held', async () => {
    await core.deleteNamespacedService({ name: 'web', namespace });
    await waitFor('the cache to lose the Service', 30_000, async () => (objects.objects().some((o) => o.kind === 'Service' && o.metadata?.namespace === namespace) ? undefined : true));
    clock = new Date('2026-11-29T12:00:00Z');
    await translateAndWrite();
    const ours = (await routeParents()).find((p) => p.controllerName === OURS);
    const resolved = ours?.conditions.find((c) => c.type === 'ResolvedRefs');
    const accepted = ours?.conditions.find((c) => c.type === 'Accepted');
    expect(resolved?.status).to.equal('False');
    expect(resolved?.lastTransitionTime).to.equal('2026-11-29T12:00:00Z');
    expect(accepted?.lastTransitionTime).to.equal('2026-11-29T10:00:00Z');
    expect(writeErrors).to.deep.equal([]);
  });

  it('records a Warning event once for a problem a user must fix, not again on the next sync', async () => {
    await networking.createNamespacedIngress({
      namespace,
      body: {
        metadata: { name: 'broken' },
        spec: { ingressClassName: 'tuna', rules: [{ host: `broken.${namespace}.test`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'nowhere', port: { number: 80 } } } }] } }] },
      },
    });
    await waitFor('the cache to hold the broken Ingress', 30_000, async () => (objects.objects().some((o) => o.kind === 'Ingress' && o.metadata?.name === 'broken') ? true : undefined));
    const recorder = new EventRecorder(clusterConfig(), { onError: (ref, err) => writeErrors.push(`${refKey(ref)}: ${String(err)}`) });
    const statuses = ours(translateObjects(objects.objects()).statuses);
    expect(await recorder.record(statuses, lookup())).to.be.greaterThan(0);
    expect(await recorder.record(ours(translateObjects(objects.objects()).statuses), lookup())).to.equal(0);
    const events = await core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=broken' });
    const warning = events.items.find((e) => e.reason === 'ServiceNotFound');
    expect(warning?.type).to.equal('Warning');
    expect(warning?.involvedObject.kind).to.equal('Ingress');
    expect(warning?.message).to.include('nowhere');
    expect(events.items.filter((e) => e.reason === 'ServiceNotFound')).to.have.length(1);
    expect(writeErrors).to.deep.equal([]);
  });
});
