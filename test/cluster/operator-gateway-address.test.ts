// operator-gateway-address.test.ts — on a real apiserver: a Gateway of class
// tuna gets its own address from a store-mode edge's pool, written to status.addresses (IPAddress)
// with Programmed=True, its listener Programmed=True; deleting the Gateway releases the address and
// revokes its key.
import { expect } from 'chai';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { TunnelKeys } from '../../src/operator/edge-reconciler.js';
import type { Operator } from '../../src/operator/operator.js';
import { seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { clusterConfig, runScript, waitFor } from './cluster-env.js';
import { inProcessOperator } from './in-process-operator.js';

const GW = 'gateway.networking.k8s.io';
type Cond = { type: string; status: string; reason: string };
type Obj = { status?: { conditions?: Cond[]; listeners?: { name: string; conditions: Cond[] }[]; addresses?: { type: string; value: string }[] } };

describe('operator: a Gateway’s address from the edge’s pool, in status.addresses (real apiserver)', function () {
  this.timeout(180_000);
  const namespace = `tuna-ga-${process.pid}`;
  const className = `tuna-ga-${process.pid}`;
  const clusterId = `ga-${process.pid}`;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let store: Store;
  let edge: StoreEdge;
  let client: ControlClient;
  let keys: TunnelKeys;
  let operator: Operator;
  const errors: string[] = [];

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    custom = config.makeApiClient(CustomObjectsApi);
    const crds = config.makeApiClient(ApiextensionsV1Api);
    if (!(await crds.readCustomResourceDefinition({ name: `httproutes.${GW}` }).then(() => true, () => false))) await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
    await custom.createClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', body: { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: { name: className }, spec: { controllerName: 'tuna.dev/gateway-controller' } } });
    await custom.createNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'gateways',
      body: { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: { name: 'gw' }, spec: { gatewayClassName: className, listeners: [{ name: 'web', protocol: 'HTTP', port: 18090 }] } },
    });
    await custom.createNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'httproutes',
      body: { apiVersion: `${GW}/v1`, kind: 'HTTPRoute', metadata: { name: 'route' }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] } },
    });

    store = await openSqliteStore(':memory:');
    edge = await startStoreEdge(store, storeEdgeConfig('unused', { addressPorts: [{ port: 18090, protocol: 'http' }] }));
    const seeded = await seedAccount(store);
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, seeded.reservationsToken);
    ({ operator, keys } = inProcessOperator(config, edge, client, { reconciler: { clusterId }, errors }));
    await operator.start();
  });

  after(async () => {
    await operator?.stop();
    await edge?.edge.close();
    await store?.close();
    await custom?.deleteClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', name: className }).catch(() => undefined);
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  const gateway = async (): Promise<Obj> => (await custom.getNamespacedCustomObjectStatus({ group: GW, version: 'v1', namespace, plural: 'gateways', name: 'gw' })) as Obj;

  it('writes the edge’s address to status.addresses with Programmed=True, the same one the edge reserved', async () => {
    const gw = await waitFor('the Gateway’s address', 30_000, async () => {
      const got = await gateway();
      return (got.status?.addresses?.length ?? 0) > 0 ? got : undefined;
    });
    const [reservation] = (await client.listReservations({ 'tuna.dev/cluster': clusterId })).reservations;
    expect(reservation).to.deep.include({ kind: 'address' });
    expect(reservation?.labels['tuna.dev/binding']).to.equal(`binding/address/${namespace}/gw`);
    expect(gw.status?.addresses).to.deep.equal([{ type: 'IPAddress', value: reservation?.value }]);
    expect(gw.status?.conditions?.find((c) => c.type === 'Programmed')).to.deep.include({ status: 'True' });
    expect(gw.status?.listeners?.[0]?.conditions.find((c) => c.type === 'Programmed')).to.deep.include({ status: 'True' });
    expect(errors).to.deep.equal([]);
  });

  it('releases the address and revokes the key when the Gateway is deleted', async () => {
    await custom.deleteNamespacedCustomObject({ group: GW, version: 'v1', namespace, plural: 'gateways', name: 'gw' });
    await waitFor('the address released', 30_000, async () => ((await client.listReservations({ 'tuna.dev/cluster': clusterId })).reservations.length === 0 ? true : undefined));
    const live = (await client.listTunnelKeys({ 'tuna.dev/cluster': clusterId })).tunnelKeys.filter((k) => k.revokedAt === null);
    expect(live).to.deep.equal([]);
    expect(keys.bindings()).to.deep.equal([]);
  });
});
