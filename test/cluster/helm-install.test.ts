// helm-install.test.ts — `helm install` of charts/tuna into the test cluster, with
// the operator image that hack/image.sh built from this checkout, pulled by the test kubelet from
// the cluster's loopback registry. Two operator pods in a namespace that enforces the `restricted`
// Pod Security level, one leading; through a store-mode edge (its tunnel listener on the pods'
// bridge, its public fronts on loopback) they publish an Ingress `/api` + `/` to two Deployments and
// a Gateway with two HTTPRoutes, and podinfo's own chart (from its Go module, its image built from
// that module's source) with nothing but an Ingress of class tuna; `helm upgrade` to a new image tag replaces both pods while a
// bounded request loop sees no failure; `helm uninstall` stops the pods, and its post-delete Job
// releases the release's reservations and revokes its tunnel keys at the edge.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AppsV1Api, ApiextensionsV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, NetworkingV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { openSqliteStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { craneRun, ensureCrane } from '../support/crane.js';
import { BASE_DOMAIN, seedAccount, startStoreEdge, storeEdgeConfig } from '../support/edge-store-harness.js';
import type { StoreEdge } from '../support/edge-store-harness.js';
import { CHART, ensureHelm, runHelm, setFlags } from '../support/helm.js';
import { clusterConfig, echoDeployment, runScript, waitFor } from './cluster-env.js';
import { pushTunaImage, type PushedImage } from './tuna-image.js';

const GW = 'gateway.networking.k8s.io';
/** BRIDGE_IP is the host's address on the pods' bridge: the edge's tunnel listener, as pods see it. */
const BRIDGE_IP = '198.18.0.1';
const GATEWAY_PORT = 18091;
const SELECTOR = 'app.kubernetes.io/instance=tuna,app.kubernetes.io/component=operator';

/** Answer is one request through the edge: status and, for 200, which pod answered. */
interface Answer {
  status: number;
  pod: string;
  body: string;
}

/** get sends one GET to address:port with a Host header; echo-basic answers with its pod's name. */
function get(address: string, port: number, host: string, path: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request({ host: address, port, path, headers: { host }, agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        let pod = '';
        try {
          pod = (JSON.parse(body) as { pod?: string }).pod ?? '';
        } catch {
          // not an echo answer (an edge error page)
        }
        resolve({ status: res.statusCode ?? 0, pod, body });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, pod: '', body: '' }));
    req.end();
  });
}

/** TCP_ECHO is a TCP echo server for `node -e` (the tuna image has Node and no shell): it sends back what it reads. */
const TCP_ECHO = "require('node:net').createServer((s) => s.pipe(s)).listen(7000, () => console.log('tcp echo on 7000'))";

/** tcpEcho sends `text` to address:port and resolves with what came back before the echo closed ('' when it failed). */
function tcpEcho(address: string, port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port });
    let got = '';
    socket.setTimeout(5000, () => socket.destroy());
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(text));
    socket.on('data', (chunk: string) => {
      got += chunk;
      if (got.length >= text.length) socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(got));
  });
}

describe('helm install charts/tuna: the operator as pods of the cluster, from its image', function () {
  this.timeout(900_000);
  const namespace = `tuna-helm-${process.pid}`;
  const apps = `tuna-helm-apps-${process.pid}`;
  const host = `helm-${process.pid}.${BASE_DOMAIN}`;
  const gwHost = `helm-gw-${process.pid}.${BASE_DOMAIN}`;
  const clusterId = `helm-${process.pid}`;
  const gatewayClass = `tuna-helm-${process.pid}`;
  let config: KubeConfig;
  let core: CoreV1Api;
  let helm: string;
  let image: PushedImage;
  let upgradeTag: string;
  let store: Store;
  let edge: StoreEdge;
  let client: ControlClient;
  let apiKey: string;
  let installedAt = 0;
  let work = '';
  const figures: string[] = [];

  const helmFlags = (tag: string) => [
    '--namespace',
    namespace,
    ...setFlags({
      'image.repository': image.repository,
      'image.tag': tag,
      'edge.address': `tcp://${BRIDGE_IP}:${edge.controlPort}`,
      'credentials.apiKey': apiKey,
      clusterId,
      'gatewayClass.name': gatewayClass,
      logFormat: 'text',
      terminationGracePeriodSeconds: 10,
    }),
  ];

  const operatorPods = async (): Promise<V1Pod[]> => (await core.listNamespacedPod({ namespace, labelSelector: SELECTOR })).items.filter((p) => !p.metadata?.deletionTimestamp);
  const isReady = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

  /**
   * watchRollout records, while a rollout runs, every change of the binding's tunnels at the edge
   * (by the pod they come from), of the operator pods (ready, terminating) and the pods' logs, so a
   * failed request can be told apart: no tunnel at all, a tunnel that ended with streams in flight,
   * or a pod that was not serving yet.
   */
  const watchRollout = () => {
    const started = Date.now();
    const lines: string[] = [];
    const note = (line: string) => lines.push(`${((Date.now() - started) / 1000).toFixed(2).padStart(7)} ${line}`);
    const podByIp = new Map<string, string>();
    const logs = new Map<string, string>();
    let lastTunnels = '';
    let lastPods = '';
    const tunnels = setInterval(() => {
      const mine = edge.edge.registry.all().filter((t) => t.bindingId === `binding/host/${host}`);
      const summary = mine
        .map((t) => `${podByIp.get(t.socket.remoteAddress ?? '') ?? t.socket.remoteAddress} ${t.connectionId}${t.isAvailable ? '' : ` draining (${t.activeStreams} streams)`}`)
        .sort()
        .join('; ');
      if (summary !== lastTunnels) note(`tunnels: ${summary || 'none'}`);
      lastTunnels = summary;
    }, 20);
    let isPolling = false;
    const pods = setInterval(() => {
      if (isPolling) return;
      isPolling = true;
      void (async () => {
        const list = (await core.listNamespacedPod({ namespace, labelSelector: SELECTOR })).items;
        for (const p of list) if (p.status?.podIP !== undefined) podByIp.set(p.status.podIP, p.metadata?.name ?? '');
        const summary = list
          .map((p) => `${p.metadata?.name} ${isReady(p) ? 'ready' : 'not-ready'}${p.metadata?.deletionTimestamp ? ' terminating' : ''}`)
          .sort()
          .join('; ');
        if (summary !== lastPods) note(`pods: ${summary}`);
        lastPods = summary;
        for (const p of list) {
          const name = p.metadata?.name ?? '';
          const text = await core.readNamespacedPodLog({ name, namespace }).catch(() => undefined);
          if (typeof text === 'string' && text.length >= (logs.get(name)?.length ?? 0)) logs.set(name, text);
        }
      })()
        .catch(() => undefined)
        .finally(() => (isPolling = false));
    }, 250);
    return {
      note,
      stop: async () => {
        clearInterval(tunnels);
        clearInterval(pods);
        await waitFor('the pod poll to end', 10_000, async () => (isPolling ? undefined : true), 50).catch(() => undefined);
        const tail = [...logs].map(([name, text]) => `--- ${name}\n${text.split('\n').slice(-60).join('\n')}`);
        return [...lines, ...tail].join('\n');
      },
    };
  };

  before(async () => {
    config = clusterConfig();
    core = config.makeApiClient(CoreV1Api);
    work = mkdtempSync(path.join(tmpdir(), 'tuna-helm-install-'));
    helm = await ensureHelm();
    const crane = await ensureCrane();
    image = await pushTunaImage(`helm-${process.pid}`);
    figures.push(`image: ${image.summary}`);
    // the new tag of the upgrade: the same image with one more label, so a new digest
    upgradeTag = `helm-${process.pid}-b`;
    await craneRun(crane, ['mutate', image.reference, '-l', `tuna.test/upgrade=${upgradeTag}`, '-t', `${image.repository}:${upgradeTag}`]);
    const crds = config.makeApiClient(ApiextensionsV1Api);
    if (!(await crds.readCustomResourceDefinition({ name: `httproutes.${GW}` }).then(() => true, () => false))) await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);

    // The edge: its tunnel and control listener on the bridge (the pods dial it), its fronts on loopback.
    store = await openSqliteStore(':memory:');
    const base = storeEdgeConfig('unused', { addressPorts: [{ port: GATEWAY_PORT, protocol: 'http' }] });
    edge = await startStoreEdge(store, { ...base, listen: { ...base.listen, tunnel: { host: BRIDGE_IP, port: 0 } } });
    apiKey = (await seedAccount(store)).reservationsToken;
    client = new ControlClient({ url: new URL(`http://${BRIDGE_IP}:${edge.controlPort}`) }, apiKey);

    // What the operator publishes lives in a namespace of its own (echo-basic runs as root).
    await core.createNamespace({ body: { metadata: { name: apps } } });
    await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace: apps }));
    const appsApi = config.makeApiClient(AppsV1Api);
    for (const name of ['api', 'web']) {
      await appsApi.createNamespacedDeployment({ namespace: apps, body: echoDeployment(name, { app: name }, 1) });
      await core.createNamespacedService({ namespace: apps, body: { metadata: { name }, spec: { selector: { app: name }, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] } } });
    }
    const rule = (p: string, service: string) => ({ path: p, pathType: 'Prefix', backend: { service: { name: service, port: { name: 'http' } } } });
    await config.makeApiClient(NetworkingV1Api).createNamespacedIngress({
      namespace: apps,
      body: { metadata: { name: 'site' }, spec: { ingressClassName: 'tuna', rules: [{ host, http: { paths: [rule('/api', 'api'), rule('/', 'web')] } }] } },
    });
    const custom = config.makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      group: GW, version: 'v1', namespace: apps, plural: 'gateways',
      body: { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: { name: 'gw' }, spec: { gatewayClassName: gatewayClass, listeners: [{ name: 'web', protocol: 'HTTP', port: GATEWAY_PORT, hostname: gwHost }] } },
    });
    for (const [name, prefix, service] of [['api', '/api', 'api'], ['web', '/', 'web']] as const) {
      await custom.createNamespacedCustomObject({
        group: GW, version: 'v1', namespace: apps, plural: 'httproutes',
        body: { apiVersion: `${GW}/v1`, kind: 'HTTPRoute', metadata: { name }, spec: { parentRefs: [{ name: 'gw' }], rules: [{ matches: [{ path: { type: 'PathPrefix', value: prefix } }], backendRefs: [{ name: service, port: 8080 }] }] } },
      });
    }

    await core.createNamespace({
      body: { metadata: { name: namespace, labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' } } },
    });
    await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
    installedAt = Date.now();
    await runHelm(helm, ['install', 'tuna', CHART, ...helmFlags(image.tag)]);
  });

  after(async () => {
    if (figures.length > 0) console.log(`      figures:\n${figures.map((f) => `        ${f}`).join('\n')}`);
    if (helm !== undefined) await runHelm(helm, ['uninstall', 'tuna', '--namespace', namespace, '--wait']).catch(() => undefined);
    await core?.deleteNamespace({ name: apps }).catch(() => undefined);
    await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
    await config?.makeApiClient(CustomObjectsApi).deleteClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', name: gatewayClass }).catch(() => undefined);
    await edge?.edge.close();
    await store?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(`publishes the Ingress through the edge: /api and / answer from their own Deployments`, async () => {
    const first = await waitFor('the first 200 through the edge', 300_000, async () => {
      const answer = await get('127.0.0.1', edge.httpPort, host, '/');
      return answer.status === 200 ? answer : undefined;
    }, 200);
    figures.push(`helm install → first 200 through the edge: ${((Date.now() - installedAt) / 1000).toFixed(1)} s`);
    expect(first.pod).to.match(/^web-/);
    const api = await waitFor('/api through the edge', 60_000, async () => {
      const answer = await get('127.0.0.1', edge.httpPort, host, '/api/items');
      return answer.status === 200 ? answer : undefined;
    });
    expect(api.pod).to.match(/^api-/);
  });

  it('runs the operator as two pods, admitted under the restricted Pod Security level, from the registry image, one of them leading', async () => {
    const pods = await waitFor('two ready operator pods', 180_000, async () => {
      const list = await operatorPods();
      return list.length === 2 && list.every(isReady) ? list : undefined;
    });
    for (const pod of pods) {
      expect(pod.spec?.containers[0]?.image).to.equal(image.reference);
      expect(pod.status?.containerStatuses?.[0]?.imageID).to.match(/@sha256:[0-9a-f]{64}$/);
    }
    const lease = await waitFor('the Lease held', 60_000, async () => {
      const got = await config.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'tuna-operator', namespace });
      return got.spec?.holderIdentity ? got : undefined;
    });
    expect(pods.map((p) => p.metadata?.name)).to.include(lease.spec?.holderIdentity);
    // every replica holds the Ingress's tunnel
    await waitFor('a tunnel from each pod', 60_000, async () => ((edge.edge.registry.count().get(`binding/host/${host}`) ?? 0) >= 2 ? true : undefined));
  });

  it('publishes a Gateway with two HTTPRoutes on the address the edge gave it', async () => {
    const custom = config.makeApiClient(CustomObjectsApi);
    const address = await waitFor('the Gateway address', 120_000, async () => {
      const gw = (await custom.getNamespacedCustomObject({ group: GW, version: 'v1', namespace: apps, plural: 'gateways', name: 'gw' })) as { status?: { addresses?: { value: string }[] } };
      return gw.status?.addresses?.[0]?.value;
    });
    expect(address).to.match(/^127\.77\./);
    const api = await waitFor('/api through the Gateway', 60_000, async () => {
      const answer = await get(address, GATEWAY_PORT, gwHost, '/api/x');
      return answer.status === 200 ? answer : undefined;
    });
    expect(api.pod).to.match(/^api-/);
    const web = await get(address, GATEWAY_PORT, gwHost, '/index.html');
    expect(web).to.deep.include({ status: 200 });
    expect(web.pod).to.match(/^web-/);
  });

  it("publishes podinfo's own chart (from its Go module) with ingress.enabled, className tuna and a host, its image built from that module", async () => {
    const registry = image.repository.split('/')[0] ?? '';
    const built = await runScript('hack/podinfo.sh', 900_000, ['--push', `${registry}/stefanprodan/podinfo:6.9.2`]);
    const chart = /^TUNA_PODINFO_CHART=(.+)$/m.exec(built)?.[1] ?? '';
    const podinfoHost = `podinfo-${process.pid}.${BASE_DOMAIN}`;
    // the chart's own values but the Ingress (and where its image is: the cluster's registry)
    const values = {
      image: { repository: `${registry}/stefanprodan/podinfo`, tag: '6.9.2' },
      ingress: { enabled: true, className: 'tuna', hosts: [{ host: podinfoHost, paths: [{ path: '/', pathType: 'ImplementationSpecific' }] }] },
    };
    const file = path.join(work, 'podinfo-values.json');
    writeFileSync(file, JSON.stringify(values));
    await runHelm(helm, ['install', 'podinfo', chart, '--namespace', apps, '--values', file]);
    const info = await waitFor('podinfo /api/info through the edge', 300_000, async () => {
      const answer = await get('127.0.0.1', edge.httpPort, podinfoHost, '/api/info');
      return answer.status === 200 ? answer : undefined;
    }, 500);
    expect(JSON.parse(info.body)).to.include({ version: '6.9.2' });
    expect((JSON.parse(info.body) as { hostname: string }).hostname).to.match(/^podinfo-/);
    const home = await get('127.0.0.1', edge.httpPort, podinfoHost, '/');
    expect(home.status).to.equal(200);
    expect(home.body).to.include('podinfo');
    figures.push(`podinfo: ${/podinfo: pushed .*/.exec(built)?.[0] ?? 'pushed'}`);
  });

  it('publishes a LoadBalancer Service of class tuna on a TCP port of the edge: its echo answers through the address in its status', async () => {
    const labels = { app: 'tcp-echo' };
    const container = { name: 'echo', image: image.reference, command: ['/usr/local/bin/node', '-e', TCP_ECHO], ports: [{ name: 'echo', containerPort: 7000 }] };
    await config.makeApiClient(AppsV1Api).createNamespacedDeployment({
      namespace: apps,
      body: { metadata: { name: 'tcp-echo' }, spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [container] } } } },
    });
    await core.createNamespacedService({
      namespace: apps,
      body: { metadata: { name: 'tcp-echo' }, spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', selector: labels, ports: [{ name: 'echo', port: 7000, targetPort: 'echo', protocol: 'TCP' }] } },
    });
    const entry = await waitFor('the Service status.loadBalancer', 120_000, async () => {
      const svc = await core.readNamespacedServiceStatus({ name: 'tcp-echo', namespace: apps });
      return svc.status?.loadBalancer?.ingress?.[0];
    });
    // the edge's tcp-port host and the port it assigned from its pool (not the Service's 7000)
    expect(entry.ip).to.equal('127.0.0.1');
    const port = entry.ports?.[0]?.port ?? 0;
    expect(port).to.be.within(21000, 21999);
    const text = `echo through ${entry.ip}:${port}\n`;
    const answer = await waitFor('the echo through the edge', 120_000, async () => ((await tcpEcho(entry.ip ?? '', port, text)) === text ? text : undefined), 500);
    expect(answer).to.equal(text);
    const reservations = (await client.listReservations({ 'tuna.dev/cluster': clusterId })).reservations.filter((r) => r.kind === 'tcp-port');
    expect(reservations.map((r) => r.value)).to.deep.equal([String(port)]);
  });

  it('upgrades to a new image tag, replacing both pods, with no failed request in a running loop', async () => {
    const before = new Set((await operatorPods()).map((p) => p.metadata?.name));
    let isRolledOut = false;
    let failedRollout: unknown;
    const upgrade = runHelm(helm, ['upgrade', 'tuna', CHART, ...helmFlags(upgradeTag)]).then(async () => {
      await waitFor('both pods replaced and ready', 300_000, async () => {
        const list = await operatorPods();
        const fresh = list.filter((p) => !before.has(p.metadata?.name) && p.spec?.containers[0]?.image === `${image.repository}:${upgradeTag}`);
        return list.length === 2 && fresh.length === 2 && fresh.every(isReady) ? true : undefined;
      }, 500);
      isRolledOut = true;
    }).catch((error: unknown) => (failedRollout = error));
    const failures: string[] = [];
    const watch = watchRollout();
    let sent = 0;
    // bounded: at most 3000 requests, ending two seconds' worth after the rollout
    for (let after = 0; sent < 3000 && after < 20 && failedRollout === undefined; sent++) {
      const target = sent % 2 === 0 ? '/' : '/api/loop';
      const answer = await get('127.0.0.1', edge.httpPort, host, target);
      if (answer.status !== 200) {
        failures.push(`${target} → ${answer.status}`);
        watch.note(`request ${target} → ${answer.status} ${answer.body.trim()}`);
      }
      if (isRolledOut) after++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await upgrade;
    const story = await watch.stop();
    if (failures.length > 0 || process.env.TUNA_ROLLOUT_STORY !== undefined) console.log(`      what the rollout looked like (tunnels of ${host} at the edge, by pod; pods; failed requests):\n${story}`);
    if (failedRollout !== undefined) throw failedRollout;
    figures.push(`helm upgrade: ${sent} requests during the rollout, ${failures.length} failed`);
    expect(isRolledOut, 'the rollout finished within the loop').to.equal(true);
    expect(failures).to.deep.equal([]);
  });

  it('uninstalls: the pods stop, and the post-delete Job releases every reservation and revokes every key the release made', async () => {
    const label = { 'tuna.dev/cluster': clusterId };
    const liveKeys = async () => (await client.listTunnelKeys(label)).tunnelKeys.filter((k) => k.revokedAt === null);
    expect(await liveKeys(), 'the release holds keys before').to.not.deep.equal([]);
    expect((await client.listReservations(label)).reservations, 'and reservations').to.not.deep.equal([]);
    // helm runs the post-delete hook Job to completion before it returns
    await runHelm(helm, ['uninstall', 'tuna', '--namespace', namespace, '--wait', '--timeout', '5m']);
    await waitFor('no operator pod', 120_000, async () => ((await core.listNamespacedPod({ namespace, labelSelector: SELECTOR })).items.length === 0 ? true : undefined));
    await waitFor('no tunnel at the edge', 60_000, async () => ((edge.edge.registry.count().get(`binding/host/${host}`) ?? 0) === 0 ? true : undefined));
    expect(await liveKeys()).to.deep.equal([]);
    expect((await client.listReservations(label)).reservations).to.deep.equal([]);
    const answer = await get('127.0.0.1', edge.httpPort, host, '/');
    expect(answer.status).to.not.equal(200);
  });
});
