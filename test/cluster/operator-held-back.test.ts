// operator-held-back.test.ts — every status is earned. With a store-mode edge, what
// the edge reconciler holds back is not advertised: a Gateway without an address (an edge without
// an address pool) is
// Programmed=False AddressNotAssigned, a LoadBalancer Service's TCP port (an edge without a port pool) is not in
// status.loadBalancer, an unverified custom domain is not in the Ingress status and its Domain shows
// the TXT record to create; each gets one Warning event.
import { expect } from 'chai';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, NetworkingV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CoreV1Event } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { Operator } from '../../src/operator/operator.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { clusterConfig, installTunaCrds, runScript, waitFor } from './cluster-env.js';
import { inProcessOperator } from './in-process-operator.js';

const GW = 'gateway.networking.k8s.io';
type Cond = { type: string; status: string; reason: string; message: string };
type Obj = { status?: { conditions?: Cond[]; listeners?: { name: string; conditions: Cond[] }[]; verification?: Record<string, string>; addresses?: unknown } };

describe('operator: statuses say only what the edge serves (held-back bindings)', function () {
  this.timeout(180_000);
  const namespace = `tuna-hb-${process.pid}`;
  const className = `tuna-hb-${process.pid}`;
  const customHost = `shop-${process.pid}.example.com`;
  const serviceHost = `db-${namespace}.${BASE_DOMAIN}`;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let networking: NetworkingV1Api;
  let store: Store;
  let edge: StoreEdge;
  let client: ControlClient;
  let accountId = '';
  let operator: Operator;
  const errors: string[] = [];
  const inOurNamespace = (ref: { namespace?: string }): boolean => ref.namespace === undefined || ref.namespace === namespace;

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    custom = config.makeApiClient(CustomObjectsApi);
    networking = config.makeApiClient(NetworkingV1Api);
    const crds = config.makeApiClient(ApiextensionsV1Api);
    if (!(await crds.readCustomResourceDefinition({ name: `httproutes.${GW}` }).then(() => true, () => false))) await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);
    await installTunaCrds(crds);
    await core.createNamespace({ body: { metadata: { name: namespace } } });

    await core.createNamespacedService({ namespace, body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
    // the Gateway and its route: a dedicated address, which this edge (no address pool) cannot assign
    await custom.createClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', body: { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: { name: className }, spec: { controllerName: 'tuna.dev/gateway-controller' } } });
    await custom.createNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'gateways',
      body: { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: { name: 'gw' }, spec: { gatewayClassName: className, listeners: [{ name: 'web', protocol: 'HTTP', port: 80 }] } },
    });
    await custom.createNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'httproutes',
      body: { apiVersion: `${GW}/v1`, kind: 'HTTPRoute', metadata: { name: 'route' }, spec: { parentRefs: [{ name: 'gw' }], hostnames: [`gw-${process.pid}.${BASE_DOMAIN}`], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] } },
    });
    // a LoadBalancer Service with an HTTP port (a hostname: served) and a TCP port (held back: the edge has no port pool)
    await core.createNamespacedService({
      namespace,
      body: { metadata: { name: 'db' }, spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', ports: [{ name: 'pg', port: 5432 }, { name: 'http', port: 8080, appProtocol: 'http' }] } },
    });
    // an Ingress on a custom domain, and the Domain that names it: not verified
    await networking.createNamespacedIngress({
      namespace,
      body: { metadata: { name: 'shop' }, spec: { ingressClassName: 'tuna', rules: [{ host: customHost, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] } },
    });
    await custom.createNamespacedCustomObject({ group: 'tuna.dev', version: 'v1alpha1', namespace, plural: 'domains', body: { apiVersion: 'tuna.dev/v1alpha1', kind: 'Domain', metadata: { name: 'shop' }, spec: { customDomain: customHost } } });

    store = await openSqliteStore(':memory:');
    const noAddressPool = storeEdgeConfig('unused');
    delete noAddressPool.store?.addressPool;
    delete noAddressPool.store?.portPool;
    edge = await startStoreEdge(store, noAddressPool);
    const seeded = await seedAccount(store);
    accountId = seeded.accountId;
    client = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, seeded.reservationsToken);
    ({ operator } = inProcessOperator(config, edge, client, {
      // what `tuna operator` learns from GET /v1/edge: no port pool
      reconciler: { clusterId: `hb-${process.pid}`, portPool: null },
      errors,
      counts: inOurNamespace,
      events: true,
      baseDomain: BASE_DOMAIN,
      recheckMs: 500,
    }));
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
  const domain = async (): Promise<Obj> => (await custom.getNamespacedCustomObjectStatus({ group: 'tuna.dev', version: 'v1alpha1', namespace, plural: 'domains', name: 'shop' })) as Obj;
  const warnings = async (kind: string, name: string): Promise<CoreV1Event[]> =>
    (await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name},type=Warning` })).items;

  it('writes Programmed=False AddressNotAssigned on a Gateway whose address the edge has not assigned, with one Warning event', async () => {
    const programmed = await waitFor('the Gateway status', 30_000, async () => (await gateway()).status?.conditions?.find((c) => c.type === 'Programmed'));
    expect(programmed).to.deep.include({ status: 'False', reason: 'AddressNotAssigned' });
    expect(programmed.message).to.include('the edge has assigned no address: it refused to reserve one from its pool');
    const gw = await gateway();
    expect(gw.status?.listeners?.[0]?.conditions.find((c) => c.type === 'Programmed')).to.deep.include({ status: 'False', reason: 'Pending' });
    expect(gw.status?.addresses ?? []).to.deep.equal([]);
    const events = await waitFor('the Gateway’s Warning event', 30_000, async () => ((await warnings('Gateway', 'gw')).length > 0 ? warnings('Gateway', 'gw') : undefined));
    expect(events.map((e) => [e.reason, e.message])).to.deep.equal([['AddressNotAssigned', programmed.message]]);
  });

  it('lists only the served HTTP hostname of a LoadBalancer Service, not its held-back TCP port, and says why in status.conditions', async () => {
    const svc = await waitFor('the Service status', 30_000, async () => {
      const got = await core.readNamespacedServiceStatus({ name: 'db', namespace });
      return (got.status?.loadBalancer?.ingress?.length ?? 0) > 0 ? got : undefined;
    });
    expect(svc.status?.loadBalancer?.ingress?.map((i) => [i.hostname, (i.ports ?? []).map((p) => p.port)])).to.deep.equal([[serviceHost, [80, 443]]]);
    const published = svc.status?.conditions?.find((c) => c.type === 'Published');
    expect(published).to.deep.include({ status: 'True', reason: 'PartiallyPublished', message: 'TCP port 5432 is not served: the edge has no TCP port pool' });
    const events = await waitFor('the Service’s Warning event', 30_000, async () => ((await warnings('Service', 'db')).length > 0 ? warnings('Service', 'db') : undefined));
    expect(events.map((e) => [e.reason, e.message])).to.deep.equal([['PortNotAssigned', published?.message]]);
  });

  it('advertises no unverified custom domain: no Ingress address, the Domain shows the TXT record, both get the record in a Warning event', async () => {
    const [reservation] = (await client.listReservations({ 'tuna.dev/cluster': `hb-${process.pid}` })).reservations.filter((r) => r.value === customHost);
    const token = reservation?.verificationToken ?? '';
    expect(token, 'the edge gave the reservation a verification token').to.not.equal('');
    const record = `Create the DNS TXT record _tuna-challenge.${customHost} with the value ${token}`;
    const d = await waitFor('the Domain status', 30_000, async () => {
      const got = await domain();
      return got.status?.conditions !== undefined ? got : undefined;
    });
    const ingress = await networking.readNamespacedIngressStatus({ name: 'shop', namespace });
    expect(ingress.status?.loadBalancer?.ingress ?? [], 'the Ingress advertises no address').to.deep.equal([]);
    expect(d.status?.verification).to.deep.equal({ type: 'TXT', name: `_tuna-challenge.${customHost}`, value: token });
    expect(d.status?.conditions?.find((c) => c.type === 'Reserved')).to.deep.include({ status: 'Unknown', reason: 'DomainNotVerified' });
    expect(d.status?.conditions?.find((c) => c.type === 'Ready')).to.deep.include({ status: 'False', reason: 'DomainNotVerified' });
    expect(d.status?.conditions?.find((c) => c.type === 'Ready')?.message).to.include(record);
    for (const [kind, name] of [['Ingress', 'shop'], ['Domain', 'shop']] as const) {
      const events = await waitFor(`the ${kind}’s Warning event`, 30_000, async () => ((await warnings(kind, name)).length > 0 ? warnings(kind, name) : undefined));
      expect(events.map((e) => e.reason), kind).to.deep.equal(['DomainNotVerified']);
      expect(events[0]?.message).to.include(record);
    }
  });

  it('records no second event when the next sync finds the same bindings held back', async () => {
    const before = (await core.listNamespacedEvent({ namespace, fieldSelector: 'type=Warning' })).items.length;
    await operator.sync();
    expect((await core.listNamespacedEvent({ namespace, fieldSelector: 'type=Warning' })).items.length).to.equal(before);
    expect(errors).to.deep.equal([]);
  });
  it('advertises the custom domain once the edge has verified it, with no change in the cluster, and drops the TXT record', async () => {
    const [reservation] = (await client.listReservations({ 'tuna.dev/cluster': `hb-${process.pid}` })).reservations.filter((r) => r.value === customHost);
    // what `tuna reserve verify` does once the TXT record is there (the edge's DNS lookup is not what this test is about)
    await store.markDomainVerified(accountId, reservation?.id ?? '', 'test');
    await waitFor('the Ingress to list the verified domain', 30_000, async () => {
      const got = await networking.readNamespacedIngressStatus({ name: 'shop', namespace });
      return got.status?.loadBalancer?.ingress?.some((i) => i.hostname === customHost) ? true : undefined;
    });
    await waitFor('the Domain to lose its verification record', 30_000, async () => ((await domain()).status?.verification === undefined ? true : undefined));
    expect((await domain()).status?.conditions?.find((c) => c.type === 'Ready')?.reason).to.not.equal('DomainNotVerified');
  });

  it('takes an advertised hostname back out of the status when it becomes held back', async () => {
    const otherHost = `other-${process.pid}.example.com`;
    await networking.patchNamespacedIngress(
      { name: 'shop', namespace, body: [{ op: 'replace', path: '/spec/rules/0/host', value: otherHost }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    await waitFor('the Ingress status to list nothing', 30_000, async () => {
      const got = await networking.readNamespacedIngressStatus({ name: 'shop', namespace });
      return (got.status?.loadBalancer?.ingress ?? []).length === 0 ? true : undefined;
    });
    const events = await waitFor('the new Warning event', 30_000, async () => {
      const list = (await warnings('Ingress', 'shop')).filter((e) => e.message?.includes(otherHost));
      return list.length > 0 ? list : undefined;
    });
    expect(events.map((e) => e.reason)).to.deep.equal(['DomainNotVerified']);
    expect(errors).to.deep.equal([]);
  });
});
