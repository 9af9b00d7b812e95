// gateway-parameters.test.ts — GatewayParameters on a real apiserver: its CRD (config/crd) refuses
// a tunnelConnections the codec refuses, the operator's object cache watches it, and the Gateway
// statuses the operator writes say Accepted with a GatewayParameters that exists and
// Accepted=False InvalidParameters with one that does not (or of another kind), as the apiserver
// keeps them; a GatewayParameters created later is seen by the cache and the Gateway is accepted.
import { expect } from 'chai';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { translateObjects } from '../../src/agent/state.js';
import { refKey } from '../../src/model/index.js';
import { KubeObjects } from '../../src/operator/kube-objects.js';
import { StatusWriter, objectLookup } from '../../src/operator/status-writer.js';
import { clusterConfig, installTunaCrds, runScript, waitFor } from './cluster-env.js';

const GW = 'gateway.networking.k8s.io';
const TUNA = { group: 'tuna.dev', version: 'v1alpha1', plural: 'gatewayparameters' };
type Cond = { type: string; status: string; reason: string };

describe('operator: GatewayParameters on the test cluster', function () {
  this.timeout(120_000);
  const namespace = `tuna-gwparams-${process.pid}`;
  const className = `tuna-gwparams-${process.pid}`;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let objects: KubeObjects;

  const gateway = (name: string, parametersRef: Record<string, string>) => ({
    apiVersion: `${GW}/v1`,
    kind: 'Gateway',
    metadata: { name },
    spec: { gatewayClassName: className, infrastructure: { labels: { team: 'web' }, parametersRef }, listeners: [{ name: 'web', protocol: 'HTTP', port: 80 }] },
  });
  const createParameters = (name: string, spec: Record<string, unknown>) =>
    custom.createNamespacedCustomObject({ ...TUNA, namespace, body: { apiVersion: 'tuna.dev/v1alpha1', kind: 'GatewayParameters', metadata: { name }, spec } });

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    custom = config.makeApiClient(CustomObjectsApi);
    const crds = config.makeApiClient(ApiextensionsV1Api);
    const installed = await crds.readCustomResourceDefinition({ name: `gateways.${GW}` }).then(() => true, () => false);
    if (!installed) await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);
    await installTunaCrds(crds);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await createParameters('busy', { tunnelConnections: 3 });
    await custom.createClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', body: { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: { name: className }, spec: { controllerName: 'tuna.dev/gateway-controller' } } });
    for (const gw of [
      gateway('with-params', { group: 'tuna.dev', kind: 'GatewayParameters', name: 'busy' }),
      gateway('later-params', { group: 'tuna.dev', kind: 'GatewayParameters', name: 'later' }),
      gateway('other-kind', { group: 'invalid.io', kind: 'InvalidParameters', name: 'invalid' }),
    ])
      await custom.createNamespacedCustomObject({ group: GW, version: 'v1', namespace, plural: 'gateways', body: gw });
    objects = new KubeObjects(config, { debounceMs: 50, retryMs: 1000 });
    await objects.start();
    await waitFor('the cache to hold the parameters and the Gateways', 30_000, async () =>
      objects.objects().filter((o) => o.metadata?.namespace === namespace && (o.kind === 'Gateway' || o.kind === 'GatewayParameters')).length === 4 ? true : undefined,
    );
  });

  after(async () => {
    await objects?.stop();
    await custom?.deleteClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', name: className }).catch(() => undefined);
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  /** acceptedOnCluster translates the cache, writes the statuses of this test's objects and reads each Gateway's Accepted back from the apiserver. */
  async function acceptedOnCluster(): Promise<Record<string, string>> {
    const errors: string[] = [];
    const state = translateObjects(objects.objects());
    const ours = state.statuses.filter((s) => s.ref.namespace === namespace || s.ref.name === className);
    await new StatusWriter(clusterConfig(), { onError: (ref, err) => errors.push(`${refKey(ref)}: ${String(err)}`) }).write(ours, objectLookup(objects.objects()));
    expect(errors).to.deep.equal([]);
    const out: Record<string, string> = {};
    for (const name of ['with-params', 'later-params', 'other-kind']) {
      const gw = (await custom.getNamespacedCustomObjectStatus({ group: GW, version: 'v1', namespace, plural: 'gateways', name })) as { status?: { conditions?: Cond[] } };
      const c = gw.status?.conditions?.find((x) => x.type === 'Accepted');
      out[name] = `${c?.status}/${c?.reason}`;
    }
    return out;
  }

  it('refuses a tunnelConnections out of range at the apiserver, as the codec does', async () => {
    const refused = await createParameters('too-many', { tunnelConnections: 17 }).then(
      () => 'created',
      (err: { code?: number }) => err.code,
    );
    expect(refused).to.equal(422);
  });

  it('accepts the Gateway whose GatewayParameters exists and gives its binding the connections; refuses the others with InvalidParameters until theirs exists', async () => {
    expect(await acceptedOnCluster()).to.deep.equal({ 'with-params': 'True/Accepted', 'later-params': 'False/InvalidParameters', 'other-kind': 'False/InvalidParameters' });
    const binding = translateObjects(objects.objects()).graph.bindings.find((b) => b.id === `binding/address/${namespace}/with-params`);
    expect(binding?.connections).to.equal(3);

    await createParameters('later', { tunnelConnections: 2 });
    await waitFor('the cache to see GatewayParameters later', 30_000, async () => (objects.objects().some((o) => o.kind === 'GatewayParameters' && o.metadata?.name === 'later') ? true : undefined));
    expect(await acceptedOnCluster()).to.deep.equal({ 'with-params': 'True/Accepted', 'later-params': 'True/Accepted', 'other-kind': 'False/InvalidParameters' });
  });
});
