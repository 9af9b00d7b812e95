// kube-objects-versions.test.ts — the operator's object cache watches each kind at the first version
// of the table of kinds the apiserver serves (API discovery): TLSRoute and TCPRoute at v1 with the
// Gateway API v1.6 CRDs, and a kind served at v1alpha2 only moves to v1 once its CRD serves v1.
import { expect } from 'chai';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { V1CustomResourceDefinition, V1CustomResourceDefinitionVersion } from '@kubernetes/client-node';
import { KubeObjects, WATCHED_KINDS, collectionPath } from '../../src/operator/kube-objects.js';
import type { WatchedKind } from '../../src/operator/kube-objects.js';
import { clusterConfig, runScript, waitFor } from './cluster-env.js';

const GW = 'gateway.networking.k8s.io';
const GROUP = 'versions.test.tuna.dev';
const CRD_NAME = `widgets.${GROUP}`;

function crdVersion(name: string, storage: boolean): V1CustomResourceDefinitionVersion {
  return { name, served: true, storage, schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } };
}

function widgetCrd(versions: V1CustomResourceDefinitionVersion[]): V1CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: { group: GROUP, scope: 'Namespaced', names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' }, versions },
  };
}

describe('operator: kind versions from API discovery on the test cluster', function () {
  this.timeout(120_000);
  const namespace = `tuna-versions-${process.pid}`;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let crds: ApiextensionsV1Api;
  const caches: KubeObjects[] = [];

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    custom = config.makeApiClient(CustomObjectsApi);
    crds = config.makeApiClient(ApiextensionsV1Api);
    const installed = await crds.readCustomResourceDefinition({ name: `tlsroutes.${GW}` }).then(
      () => true,
      () => false,
    );
    if (!installed) await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  });

  after(async () => {
    for (const c of caches) await c.stop();
    await crds?.deleteCustomResourceDefinition({ name: CRD_NAME }).catch(() => undefined);
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  it('watches TLSRoute and TCPRoute at v1, and stamps a v1 TLSRoute with v1', async () => {
    const kinds = WATCHED_KINDS.filter((k) => k.kind === 'TLSRoute' || k.kind === 'TCPRoute');
    const objects = new KubeObjects(clusterConfig(), { kinds, debounceMs: 50, retryMs: 500 });
    caches.push(objects);
    await objects.start();
    expect(Object.fromEntries(objects.watchedVersions())).to.deep.equal({ TLSRoute: `${GW}/v1`, TCPRoute: `${GW}/v1` });
    await custom.createNamespacedCustomObject({
      group: GW,
      version: 'v1',
      namespace,
      plural: 'tlsroutes',
      body: { apiVersion: `${GW}/v1`, kind: 'TLSRoute', metadata: { name: 'tls' }, spec: { parentRefs: [{ name: 'gw' }], hostnames: ['a.example.com'], rules: [{ backendRefs: [{ name: 'web', port: 443 }] }] } },
    });
    const route = await waitFor('the TLSRoute in the cache', 30_000, async () => objects.objects().find((o) => o.kind === 'TLSRoute' && o.metadata?.namespace === namespace));
    expect(route.apiVersion).to.equal(`${GW}/v1`);
  });

  it('watches a kind at v1alpha2 while its CRD serves only that, and at v1 once the CRD serves v1', async () => {
    await crds.createCustomResourceDefinition({ body: widgetCrd([crdVersion('v1alpha2', true)]) });
    await waitFor('the Widget CRD established', 30_000, async () => {
      const crd = await crds.readCustomResourceDefinition({ name: CRD_NAME });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
    });
    await waitFor('a Widget created', 30_000, () =>
      custom.createNamespacedCustomObject({ group: GROUP, version: 'v1alpha2', namespace, plural: 'widgets', body: { apiVersion: `${GROUP}/v1alpha2`, kind: 'Widget', metadata: { name: 'w' } } }),
    );
    const widget: WatchedKind = { kind: 'Widget', group: GROUP, plural: 'widgets', versions: ['v1', 'v1alpha2'], apiVersion: `${GROUP}/v1`, path: collectionPath({ group: GROUP, plural: 'widgets' }, 'v1'), optional: true };
    const objects = new KubeObjects(clusterConfig(), { kinds: [widget], debounceMs: 50, retryMs: 500 });
    caches.push(objects);
    let changes = 0;
    objects.onChange(() => changes++);
    await objects.start();
    expect(objects.watchedVersions().get('Widget')).to.equal(`${GROUP}/v1alpha2`);
    expect(objects.objects().map((o) => `${o.apiVersion} ${o.metadata?.name}`)).to.deep.equal([`${GROUP}/v1alpha2 w`]);

    const current = await crds.readCustomResourceDefinition({ name: CRD_NAME });
    await crds.replaceCustomResourceDefinition({ name: CRD_NAME, body: { ...widgetCrd([crdVersion('v1', false), crdVersion('v1alpha2', true)]), metadata: { name: CRD_NAME, resourceVersion: current.metadata?.resourceVersion } } });
    await waitFor('the Widget watched at v1', 60_000, async () => (objects.watchedVersions().get('Widget') === `${GROUP}/v1` ? true : undefined));
    expect(objects.objects().map((o) => `${o.apiVersion} ${o.metadata?.name}`)).to.deep.equal([`${GROUP}/v1 w`]);
    await waitFor('a change reported', 10_000, async () => (changes > 0 ? true : undefined));
  });
});
