// soak-stack.ts — what the soak runs on: one PostgreSQL, two store-mode edge nodes on it (tunnel
// listeners on the pods' bridge behind a balancer, public fronts on 127.0.0.1 and 127.0.0.2), the
// operator installed by charts/tuna from our image with two replicas, and the routes it publishes:
// an Ingress, a Gateway with an HTTPRoute and a GRPCRoute (each on a listener of its own), and a
// Service of type LoadBalancer (TCP).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { AppsV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, NetworkingV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { ControlClient } from '../../src/control-api/index.js';
import { openPostgresStore } from '../../src/edge/store/index.js';
import type { Store } from '../../src/edge/store/index.js';
import { craneRun, ensureCrane } from '../support/crane.js';
import { BASE_DOMAIN, seedAccount } from '../support/edge-store-harness.js';
import type { Seeded } from '../support/edge-store-harness.js';
import { CHART, ensureHelm, runHelm, setFlags } from '../support/helm.js';
import { freePort } from '../support/postgres.js';
import { clusterConfig, echoDeployment, runScript, waitFor } from '../cluster/cluster-env.js';
import { pushTunaImage } from '../cluster/tuna-image.js';
import type { PushedImage } from '../cluster/tuna-image.js';
import { SoakEdge, SoakPostgres } from './soak-processes.js';
import { TunnelBalancer } from './tunnel-balancer.js';

export const GW = 'gateway.networking.k8s.io';
/** BRIDGE_IP is the host's address on the pods' bridge: where the pods dial the edges. */
export const BRIDGE_IP = '198.18.0.1';
export const GATEWAY_PORT = 18091;
export const OPERATOR_SELECTOR = 'app.kubernetes.io/instance=tuna,app.kubernetes.io/component=operator';
const SCHEMA = 'soak';

/**
 * SINK is the upload and TCP backend (`node -e` in the tuna image, which has Node and no shell):
 * TCP 7000 echoes what it reads; HTTP 8080 answers every request with the SHA-256 and length of
 * its body and the pod and namespace it runs in.
 */
const SINK = [
  "const http = require('node:http'), net = require('node:net'), crypto = require('node:crypto');",
  'const who = { pod: process.env.POD_NAME, namespace: process.env.NAMESPACE };',
  "net.createServer((s) => { s.on('error', () => {}); s.pipe(s); }).listen(7000);",
  "http.createServer((q, r) => { const h = crypto.createHash('sha256'); let n = 0; q.on('data', (c) => { h.update(c); n += c.length; });",
  "  q.on('end', () => { r.setHeader('content-type', 'application/json'); r.end(JSON.stringify({ ...who, sha256: h.digest('hex'), bytes: n })); }); })",
  "  .listen(8080, () => console.log('sink on 7000 and 8080'));",
].join('\n');

/** Routes are the published routes and where the soak reaches them. */
export interface Routes {
  ingressHost: string;
  gatewayHost: string;
  /** the Gateway's `grpc` listener's hostname (its GRPCRoute to echo-basic's gRPC server) */
  grpcHost: string;
  gatewayAddress: string;
  tcpPort: number;
}

/** Stack is everything the traffic, the faults and the checks use. */
export interface Stack {
  id: string;
  config: KubeConfig;
  core: CoreV1Api;
  apps: string;
  namespace: string;
  helm: string;
  image: PushedImage;
  upgradeTag: string;
  pg: SoakPostgres;
  edges: SoakEdge[];
  balancer: TunnelBalancer;
  balancerPort: number;
  store: Store;
  seeded: Seeded;
  /** control is the control API through the balancer, with the account's reservations key */
  control: ControlClient;
  /** admin is the control API through the balancer, with the account's admin key */
  admin: ControlClient;
  routes: Routes;
  helmFlags(tag: string): string[];
  operatorPods(): Promise<V1Pod[]>;
  leader(): Promise<string | undefined>;
  close(): Promise<void>;
}

/** isReady says a pod's Ready condition is True. */
export const isReady = (p: V1Pod): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** startStack brings everything up and waits until every route answers through both edges. */
export async function startStack(log: (line: string) => void): Promise<Stack> {
  const id = `soak-${process.pid}`;
  const config = clusterConfig();
  const core = config.makeApiClient(CoreV1Api);
  const work = mkdtempSync(path.join(tmpdir(), 'tuna-soak-'));
  const apps = `${id}-apps`;
  const namespace = id;
  const gatewayClass = id;
  const cleanups: (() => Promise<unknown>)[] = [];
  const close = async (): Promise<void> => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  };
  try {
    log('PostgreSQL, two edge nodes, the balancer');
    const pgServer = await SoakPostgres.start(await freePort());
    cleanups.push(() => pgServer.stop());
    const admin = new pg.Client({ connectionString: pgServer.url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${SCHEMA}`);
    await admin.end();
    const storeSection = {
      url: pgServer.url,
      schema: SCHEMA,
      baseDomain: BASE_DOMAIN,
      // pools of its own: the e2e tests' edges use 21000-21999 and 127.77.0.0/16 on this machine too
      portPool: { first: 23000, last: 23099 },
      addressPool: '127.79.0.0/24',
      addressPorts: [{ port: GATEWAY_PORT, protocol: 'http' }],
      pollMs: 200,
      // the probe reserves a hostname and mints a key every 3 s, and keeps them
      quotas: { reservations: 5000, tunnelKeys: 10_000 },
    };
    const edges: SoakEdge[] = [];
    for (const [name, httpHost] of [['A', '127.0.0.1'], ['B', '127.0.0.2']] as const) {
      const edge = new SoakEdge({ name, tunnelHost: BRIDGE_IP, tunnelPort: await freePort(), httpHost, httpPort: await freePort() }, work, storeSection);
      await edge.start();
      cleanups.push(() => edge.stop());
      edges.push(edge);
    }
    const balancer = new TunnelBalancer(edges.map((e) => ({ name: e.spec.name, host: e.spec.tunnelHost, port: e.spec.tunnelPort })));
    const balancerPort = await balancer.listen(BRIDGE_IP);
    cleanups.push(() => balancer.close());
    const store = await openPostgresStore({ connectionString: pgServer.url, schema: SCHEMA });
    cleanups.push(() => store.close());
    const seeded = await seedAccount(store, 'soak');
    const url = new URL(`http://${BRIDGE_IP}:${balancerPort}`);
    const control = new ControlClient({ url }, seeded.reservationsToken);
    const adminClient = new ControlClient({ url }, seeded.adminToken);

    log('the image, the chart, the backends and the routes');
    const helm = await ensureHelm();
    const image = await pushTunaImage(id);
    const upgradeTag = `${id}-b`;
    await craneRun(await ensureCrane(), ['mutate', image.reference, '-l', `tuna.test/upgrade=${upgradeTag}`, '-t', `${image.repository}:${upgradeTag}`]);
    await runScript('hack/gateway-api-crds.sh', 120_000, ['standard']);
    const routes = await publishRoutes(config, apps, gatewayClass, image, id);
    cleanups.push(() => core.deleteNamespace({ name: apps }));

    const helmFlags = (tag: string): string[] => [
      '--namespace',
      namespace,
      ...setFlags({
        'image.repository': image.repository,
        'image.tag': tag,
        'edge.address': `tcp://${BRIDGE_IP}:${balancerPort}`,
        'credentials.apiKey': seeded.reservationsToken,
        clusterId: id,
        'gatewayClass.name': gatewayClass,
        logFormat: 'text',
        terminationGracePeriodSeconds: 10,
      }),
    ];
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    cleanups.push(() => core.deleteNamespace({ name: namespace }));
    await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace }));
    log('helm install');
    await runHelm(helm, ['install', 'tuna', CHART, ...helmFlags(image.tag)]);
    cleanups.push(() => runHelm(helm, ['uninstall', 'tuna', '--namespace', namespace, '--wait', '--timeout', '2m']));
    cleanups.push(() => config.makeApiClient(CustomObjectsApi).deleteClusterCustomObject({ group: GW, version: 'v1', plural: 'gatewayclasses', name: gatewayClass }));

    const operatorPods = async (): Promise<V1Pod[]> =>
      (await core.listNamespacedPod({ namespace, labelSelector: OPERATOR_SELECTOR })).items.filter((p) => !p.metadata?.deletionTimestamp);
    const leader = async (): Promise<string | undefined> =>
      (await config.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'tuna-operator', namespace }).catch(() => undefined))?.spec?.holderIdentity ?? undefined;
    await waitFor('two ready operator pods', 300_000, async () => {
      const pods = await operatorPods();
      return pods.length === 2 && pods.every(isReady) ? true : undefined;
    }, 500);
    const withAddresses = await waitForAddresses(config, core, apps, routes);
    return {
      id, config, core, apps, namespace, helm, image, upgradeTag, pg: pgServer, edges, balancer, balancerPort, store, seeded,
      control, admin: adminClient, routes: withAddresses, helmFlags, operatorPods, leader, close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** publishRoutes makes the apps namespace: the echo and sink Deployments, their Services and the three routes. */
async function publishRoutes(config: KubeConfig, apps: string, gatewayClass: string, image: PushedImage, id: string): Promise<Routes> {
  const core = config.makeApiClient(CoreV1Api);
  const appsApi = config.makeApiClient(AppsV1Api);
  await core.createNamespace({ body: { metadata: { name: apps } } });
  await waitFor('default ServiceAccount', 30_000, () => core.readNamespacedServiceAccount({ name: 'default', namespace: apps }));
  for (const name of ['web', 'gw']) {
    await appsApi.createNamespacedDeployment({ namespace: apps, body: echoDeployment(name, { app: name }, 1) });
    await core.createNamespacedService({ namespace: apps, body: { metadata: { name }, spec: { selector: { app: name }, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] } } });
  }
  // echo-basic's gRPC echo (GRPC_ECHO_SERVER=1, on the port named http), as the conformance suite's GRPCRoute backends run it
  const grpcDeployment = echoDeployment('grpc', { app: 'grpc' }, 1);
  grpcDeployment.spec!.template.spec!.containers[0]!.env!.push({ name: 'GRPC_ECHO_SERVER', value: '1' });
  await appsApi.createNamespacedDeployment({ namespace: apps, body: grpcDeployment });
  await core.createNamespacedService({
    namespace: apps,
    body: { metadata: { name: 'grpc' }, spec: { selector: { app: 'grpc' }, ports: [{ name: 'grpc', port: 8080, targetPort: 'http', appProtocol: 'kubernetes.io/h2c' }] } },
  });
  const sinkLabels = { app: 'sink' };
  const fieldEnv = (name: string, fieldPath: string) => ({ name, valueFrom: { fieldRef: { fieldPath } } });
  const sink = {
    name: 'sink',
    image: image.reference,
    command: ['/usr/local/bin/node', '-e', SINK],
    ports: [{ name: 'tcp', containerPort: 7000 }, { name: 'http', containerPort: 8080 }],
    env: [fieldEnv('POD_NAME', 'metadata.name'), fieldEnv('NAMESPACE', 'metadata.namespace')],
  };
  await appsApi.createNamespacedDeployment({
    namespace: apps,
    body: { metadata: { name: 'sink' }, spec: { replicas: 1, selector: { matchLabels: sinkLabels }, template: { metadata: { labels: sinkLabels }, spec: { containers: [sink] } } } },
  });
  await core.createNamespacedService({ namespace: apps, body: { metadata: { name: 'sink-http' }, spec: { selector: sinkLabels, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] } } });
  await core.createNamespacedService({
    namespace: apps,
    body: { metadata: { name: 'sink' }, spec: { type: 'LoadBalancer', loadBalancerClass: 'tuna', selector: sinkLabels, ports: [{ name: 'tcp', port: 7000, targetPort: 'tcp', protocol: 'TCP' }] } },
  });
  const ingressHost = `${id}.${BASE_DOMAIN}`;
  const gatewayHost = `${id}-gw.${BASE_DOMAIN}`;
  const grpcHost = `${id}-grpc.${BASE_DOMAIN}`;
  const rule = (p: string, service: string) => ({ path: p, pathType: 'Prefix', backend: { service: { name: service, port: { name: 'http' } } } });
  await config.makeApiClient(NetworkingV1Api).createNamespacedIngress({
    namespace: apps,
    body: { metadata: { name: 'site' }, spec: { ingressClassName: 'tuna', rules: [{ host: ingressHost, http: { paths: [rule('/upload', 'sink-http'), rule('/', 'web')] } }] } },
  });
  const custom = config.makeApiClient(CustomObjectsApi);
  await custom.createNamespacedCustomObject({
    group: GW, version: 'v1', namespace: apps, plural: 'gateways',
    body: { apiVersion: `${GW}/v1`, kind: 'Gateway', metadata: { name: 'gw' }, spec: { gatewayClassName: gatewayClass, listeners: [
      { name: 'web', protocol: 'HTTP', port: GATEWAY_PORT, hostname: gatewayHost },
      { name: 'grpc', protocol: 'HTTP', port: GATEWAY_PORT, hostname: grpcHost },
    ] } },
  });
  await custom.createNamespacedCustomObject({
    group: GW, version: 'v1', namespace: apps, plural: 'httproutes',
    body: { apiVersion: `${GW}/v1`, kind: 'HTTPRoute', metadata: { name: 'gw' }, spec: { parentRefs: [{ name: 'gw', sectionName: 'web' }], rules: [{ backendRefs: [{ name: 'gw', port: 8080 }] }] } },
  });
  await custom.createNamespacedCustomObject({
    group: GW, version: 'v1', namespace: apps, plural: 'grpcroutes',
    body: { apiVersion: `${GW}/v1`, kind: 'GRPCRoute', metadata: { name: 'grpc' }, spec: { parentRefs: [{ name: 'gw', sectionName: 'grpc' }], rules: [{ backendRefs: [{ name: 'grpc', port: 8080 }] }] } },
  });
  return { ingressHost, gatewayHost, grpcHost, gatewayAddress: '', tcpPort: 0 };
}

/** waitForAddresses waits for the Gateway's address and the Service's port in their statuses. */
async function waitForAddresses(config: KubeConfig, core: CoreV1Api, apps: string, routes: Routes): Promise<Routes> {
  const custom = config.makeApiClient(CustomObjectsApi);
  const gatewayAddress = await waitFor('the Gateway address', 300_000, async () => {
    const gw = (await custom.getNamespacedCustomObject({ group: GW, version: 'v1', namespace: apps, plural: 'gateways', name: 'gw' })) as { status?: { addresses?: { value: string }[] } };
    return gw.status?.addresses?.[0]?.value;
  }, 500);
  const tcpPort = await waitFor('the Service status.loadBalancer', 300_000, async () => {
    const svc = await core.readNamespacedServiceStatus({ name: 'sink', namespace: apps });
    return svc.status?.loadBalancer?.ingress?.[0]?.ports?.[0]?.port;
  }, 500);
  return { ...routes, gatewayAddress, tcpPort };
}
