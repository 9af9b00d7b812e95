// status-cli.test.ts — `tuna status --kubeconfig` reads what a running operator wrote: a Gateway
// the edge gave no address (no address pool) is listed with its HTTPRoute, the Programmed=False
// AddressNotAssigned conditions and the Warning event; an Ingress the edge serves is listed with
// its hostname and nothing held back.
import { expect } from 'chai';
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, NetworkingV1Api } from '@kubernetes/client-node';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import type { StatusReport } from '../../src/cli/status-report.js';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import type { Operator } from '../../src/operator/operator.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { clusterConfig, installTunaCrds, runScript, waitFor } from './cluster-env.js';
import { inProcessOperator } from './in-process-operator.js';

const GW = 'gateway.networking.k8s.io';

/** status runs `tuna status` in this process and returns its exit status and output. */
async function status(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), env: {}, stopSignal: new Promise(() => undefined) };
  const code = await runCli(['status', ...argv], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('tuna status --kubeconfig: what the operator wrote', function () {
  this.timeout(180_000);
  const namespace = `tuna-st-${process.pid}`;
  const className = `tuna-st-${process.pid}`;
  const host = `web-${process.pid}.${BASE_DOMAIN}`;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  let store: Store;
  let edge: StoreEdge;
  let operator: Operator;
  const errors: string[] = [];
  const inOurNamespace = (ref: { namespace?: string }): boolean => ref.namespace === undefined || ref.namespace === namespace;

  before(async () => {
    const config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    custom = config.makeApiClient(CustomObjectsApi);
    const networking = config.makeApiClient(NetworkingV1Api);
    const crds = config.makeApiClient(ApiextensionsV1Api);
    if (!(await crds.readCustomResourceDefinition({ name: `httproutes.${GW}` }).then(() => true, () => false))) await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);
    await installTunaCrds(crds);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedService({ namespace, body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } } });
    await custom.createClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', body: { apiVersion: `${GW}/v1`, kind: 'GatewayClass', metadata: { name: className }, spec: { controllerName: 'tuna.dev/gateway-controller' } } });
    await custom.createNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'gateways',
      body: { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: { name: 'gw' }, spec: { gatewayClassName: className, listeners: [{ name: 'web', protocol: 'HTTP', port: 80 }] } },
    });
    await custom.createNamespacedCustomObject({
      group: GW, version: 'v1', namespace, plural: 'httproutes',
      body: { apiVersion: `${GW}/v1`, kind: 'HTTPRoute', metadata: { name: 'route' }, spec: { parentRefs: [{ name: 'gw' }], hostnames: [`gw-${process.pid}.${BASE_DOMAIN}`], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] } },
    });
    await networking.createNamespacedIngress({
      namespace,
      body: { metadata: { name: 'site' }, spec: { ingressClassName: 'tuna', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] } },
    });

    store = await openSqliteStore(':memory:');
    const noAddressPool = storeEdgeConfig('unused');
    delete noAddressPool.store?.addressPool;
    edge = await startStoreEdge(store, noAddressPool);
    const seeded = await seedAccount(store);
    const client = new ControlClient({ url: new URL(`http://127.0.0.1:${edge.controlPort}`) }, seeded.reservationsToken);
    ({ operator } = inProcessOperator(config, edge, client, {
      reconciler: { clusterId: `st-${process.pid}`, portPool: null },
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

  it('lists the held-back Gateway with its route, conditions and Warning, and the served Ingress host with nothing held back', async () => {
    const warned = async (): Promise<boolean> => (await core.listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.kind=Gateway,type=Warning' })).items.length > 0;
    await waitFor('the operator’s Warning on the Gateway', 60_000, async () => ((await warned()) ? true : undefined));
    const kubeconfig = process.env.KUBECONFIG ?? '';
    const report = await waitFor('tuna status to show both bindings', 30_000, async () => {
      const ran = await status(['--kubeconfig', kubeconfig, '--base-domain', BASE_DOMAIN, '-o', 'json']);
      expect(ran.code, ran.err).to.equal(0);
      const got = JSON.parse(ran.out) as StatusReport;
      const ours = got.bindings.filter((b) => b.from.some((f) => f.includes(`/${namespace}/`)));
      return ours.length === 2 && ours.some((b) => b.heldBack.length > 0) ? { ...got, bindings: ours } : undefined;
    });
    expect(report.view).to.equal('cluster');
    const [gateway, ingress] = report.bindings;
    expect(gateway).to.deep.include({ id: `binding/address/${namespace}/gw`, kind: 'address', addresses: [`gw-${process.pid}.${BASE_DOMAIN}`, '(unassigned):80/http'], tunnels: null });
    expect(gateway!.from).to.deep.equal([`Gateway/${namespace}/gw`, `HTTPRoute/${namespace}/route`]);
    expect(gateway!.heldBack.some((h) => h.startsWith(`Gateway/${namespace}/gw: Programmed=False AddressNotAssigned: the edge has assigned no address`))).to.equal(true, gateway!.heldBack.join('\n'));
    expect(gateway!.heldBack.some((h) => h.startsWith(`Gateway/${namespace}/gw listener web: Programmed=False Pending`))).to.equal(true, gateway!.heldBack.join('\n'));
    expect(gateway!.lastError).to.match(/^AddressNotAssigned: the edge has assigned no address/);
    expect(ingress).to.deep.include({ id: `binding/host/${host}`, kind: 'host', addresses: [host], from: [`Ingress/${namespace}/site`], heldBack: [], lastError: null });

    const table = await status(['--kubeconfig', kubeconfig, '--base-domain', BASE_DOMAIN]);
    expect(table.code, table.err).to.equal(0);
    expect(table.out.split('\n').find((l) => l.startsWith(`binding/host/${host} `))?.split(/\s+/).slice(0, 5)).to.deep.equal([`binding/host/${host}`, 'host', host, `Ingress/${namespace}/site`, '?']);
    expect(table.err).to.contain("note: tunnel connections are not in the cluster's objects");
    expect(errors).to.deep.equal([]);
  });
});
